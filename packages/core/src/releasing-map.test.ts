import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ReleasingMap } from './releasing-map.js';

describe('ReleasingMap', () => {
  it('is a Map: set, get, has, delete, size and iteration in insertion order', () => {
    const map = new ReleasingMap<string, number>();
    expect(map.set('a', 1).set('b', 2).set('a', 3)).toBe(map);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBe(3);
    expect(map.has('b')).toBe(true);
    expect(map.get('c')).toBeUndefined();
    expect([...map.values()]).toEqual([3, 2]);
    expect([...map]).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    expect(map.delete('a')).toBe(true);
    expect(map.delete('a')).toBe(false);
    expect(map.has('a')).toBe(false);
    expect([...map]).toEqual([['b', 2]]);
    expect([...map.keys()]).toEqual(['b']);
    expect(map.size).toBe(1);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get('b')).toBeUndefined();
  });

  describe('in a long-lived table, a deleted value dies in the young generation', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    const oldSpaceUsed = () =>
      getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

    // ~50 KB of small objects: nine fit in the young generation between two collections. One maker
    // per test: V8 allocates straight into the old generation from a site whose objects kept
    // surviving (pretenuring), so the plain Map's survivors must not share a site with the others.
    const graphForReleasingMap = () =>
      Array.from({ length: 10 }, () => Array.from({ length: 200 }, (_, i) => ({ i })));
    const graphForMap = () =>
      Array.from({ length: 10 }, () => Array.from({ length: 200 }, (_, i) => ({ i })));

    type Table = { set(key: number, value: unknown): unknown; delete(key: number): unknown };

    /** The least old-space growth of three rounds: anything else the process allocates only adds. */
    const promotedAfter = (table: Table, graph: () => unknown) =>
      Math.min(round(table, graph), round(table, graph), round(table, graph));

    /** Old-space growth after nine graphs were stored, deleted, and two young collections ran. */
    function round(table: Table, graph: () => unknown): number {
      // The table reaches the old generation, as a server's tables do.
      table.set(-1, null);
      table.delete(-1);
      gc({ type: 'major' });
      gc({ type: 'minor' });
      const before = oldSpaceUsed();
      for (let key = 0; key < 9; key++) table.set(key, graph());
      for (let key = 0; key < 9; key++) table.delete(key);
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      return oldSpaceUsed() - before;
    }

    it('a ReleasingMap lets them go', () => {
      expect(promotedAfter(new ReleasingMap(), graphForReleasingMap)).toBeLessThan(250_000);
    });

    it('a plain Map keeps them through young collections (the V8 behaviour this class is for)', () => {
      expect(promotedAfter(new Map(), graphForMap)).toBeGreaterThan(400_000);
    });
  });
});
