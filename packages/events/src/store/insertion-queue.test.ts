import { InsertionQueue } from './insertion-queue.js';

describe('InsertionQueue', () => {
  it('hands out the oldest live entry; a re-set entry moves to the end', () => {
    const queue = new InsertionQueue<string, number>();
    expect(queue.first()).toBeUndefined();
    queue.set('a', 1);
    queue.set('b', 2);
    queue.set('c', 3);
    queue.set('a', 4);
    expect(queue.size).toBe(3);
    expect(queue.first()).toMatchObject({ key: 'b', value: 2 });
    expect(queue.get('a')).toBe(4);
    expect(queue.values()).toEqual([2, 3, 4]);
    expect(queue.delete('b')).toBe(true);
    expect(queue.delete('b')).toBe(false);
    expect(queue.first()).toMatchObject({ key: 'c', value: 3 });
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.first()).toBeUndefined();
  });

  it('stays in insertion order through many deletes and re-sets', () => {
    const queue = new InsertionQueue<number, number>();
    const model = new Map<number, number>();
    for (let i = 0; i < 20_000; i++) {
      const key = i % 700;
      if (i % 3 === 0) {
        queue.delete(key);
        model.delete(key);
      } else {
        queue.set(key, i);
        model.delete(key);
        model.set(key, i);
      }
      if (i % 5 === 0 && model.size > 0) {
        const [oldest] = model;
        expect(queue.first()).toMatchObject({ key: oldest![0], value: oldest![1] });
      }
    }
    expect(queue.values()).toEqual([...model.values()]);
    expect(queue.size).toBe(model.size);
  });

  it('sorts stably', () => {
    const queue = new InsertionQueue<string, { at: number; name: string }>();
    for (const [name, at] of [
      ['a', 2],
      ['b', 1],
      ['c', 2],
      ['d', 1],
    ] as const)
      queue.set(name, { at, name });
    queue.sort((x, y) => x.at - y.at);
    expect(queue.values().map((v) => v.name)).toEqual(['b', 'd', 'a', 'c']);
    queue.set('b', { at: 0, name: 'b' });
    expect(queue.values().map((v) => v.name)).toEqual(['d', 'a', 'c', 'b']);
  });
});
