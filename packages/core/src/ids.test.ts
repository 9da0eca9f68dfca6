import { isoOfMs, newId, newTimeOrderedId, nowIso } from './ids.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix milliseconds in a v7 id's first 48 bits. */
const millisOf = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('ids', () => {
  it('newId makes random UUID v4 ids', () => {
    const ids = Array.from({ length: 1000 }, newId);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('newId fills every random digit from the random source, across refills of its byte pool', () => {
    const ids = Array.from({ length: 4096 }, newId);
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 18, 23].includes(at)) continue;
      const seen = new Set(ids.map((id) => id[at]));
      // The version digit is fixed; the variant digit takes 4 values; every other one all 16.
      expect(seen.size).toBe(at === 14 ? 1 : at === 19 ? 4 : 16);
    }
  });

  it('newTimeOrderedId makes UUID v7 ids carrying the time they were made, in the order made', async () => {
    const before = Date.now();
    const first = newTimeOrderedId();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newTimeOrderedId();
    const after = Date.now();
    for (const id of [first, second]) {
      expect(id).toMatch(UUID_V7);
      expect(millisOf(id)).toBeGreaterThanOrEqual(before);
      expect(millisOf(id)).toBeLessThanOrEqual(after);
    }
    // Sorted as text (how an index compares them) they come in the order made.
    expect(millisOf(second)).toBeGreaterThan(millisOf(first));
    expect([second, first].sort()).toEqual([first, second]);
  });

  it('newTimeOrderedId keeps 74 random bits: ids of the same millisecond differ', () => {
    const ids = Array.from({ length: 10_000 }, newTimeOrderedId);
    expect(new Set(ids).size).toBe(ids.length);
    // The random tail is not the time: across ids of one millisecond it takes many values.
    const tails = new Set(ids.map((id) => id.slice(19)));
    expect(tails.size).toBe(ids.length);
  });

  it('isoOfMs writes what Date#toISOString writes, for every millisecond of a second and across seconds', () => {
    const start = Date.UTC(2026, 10, 28, 12, 34, 56);
    // Each millisecond of one second (the cached prefix), then its neighbours, back and forth.
    const times = [
      ...Array.from({ length: 1000 }, (_, ms) => start + ms),
      start + 1000,
      start - 1,
      start + 999,
      start + 1000,
      start + 1000,
    ];
    for (const ms of times) expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
  });

  it('isoOfMs writes far and odd times the way Date does, and refuses what Date refuses', () => {
    const times = [
      0,
      -1,
      -999,
      -1000,
      -1001,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(-1, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1, 0, 0, 0, 1),
      8.64e15,
      -8.64e15,
      1.5,
      -1.5,
      1_700_000_000_000.7,
    ];
    for (const ms of times) expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor((Math.random() - 0.5) * 2 * 8.64e15);
      expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
    }
    for (const ms of [Number.NaN, Infinity, 8.64e15 + 1, -8.64e15 - 1])
      expect(() => isoOfMs(ms)).toThrow(RangeError);
    // The millisecond after the last valid one, right after it: not an ending of its cached second.
    expect(isoOfMs(8.64e15)).toBe('+275760-09-13T00:00:00.000Z');
    expect(() => isoOfMs(8.64e15 + 1)).toThrow(RangeError);
  });

  it('nowIso is the current time in ISO 8601, UTC', () => {
    const before = Date.now();
    const iso = nowIso();
    const after = Date.now();
    expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(iso)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(iso)).toBeLessThanOrEqual(after);
  });
});
