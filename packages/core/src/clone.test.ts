import { copyWith, snapshot } from './clone.js';

describe('snapshot', () => {
  it('deep-copies plain data so later mutation cannot reach the copy', () => {
    const source = { id: 't', parts: [{ type: 'text', content: 'hi' }], meta: { n: 1, none: undefined } };
    const copy = snapshot(source);
    expect(copy).toEqual(source);
    expect(copy).not.toBe(source);
    source.parts[0]!.content = 'changed';
    source.meta.n = 2;
    expect(copy.parts[0]!.content).toBe('hi');
    expect(copy.meta).toEqual({ n: 1, none: undefined });
    expect('none' in copy.meta).toBe(true);
  });

  it('keeps an own __proto__ key a key', () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = snapshot(source);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('copies own keys only, in their order, even when Object.prototype has an enumerable property', () => {
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.inherited = 'x';
    try {
      const source = { b: 1, 2: 'two', a: { c: [1, { d: 2 }] }, 1: 'one' };
      const copy = snapshot(source);
      expect(Object.keys(copy)).toEqual(['1', '2', 'b', 'a']);
      expect(Object.keys(copy.a.c[1] as object)).toEqual(['d']);
      expect(Object.hasOwn(copy, 'inherited')).toBe(false);
    } finally {
      delete prototype.inherited;
    }
  });

  it('copies what plain data is not as structuredClone does: dates, maps, cycles, sparse arrays', () => {
    const when = new Date(5);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    // eslint-disable-next-line no-sparse-arrays
    const source = { when, map: new Map([['k', 1]]), cyclic, sparse: [1, , 3] };
    const copy = snapshot(source);
    // structuredClone builds the Date in the runtime's own realm, not jest's: check it by tag.
    expect(Object.prototype.toString.call(copy.when)).toBe('[object Date]');
    expect(copy.when.getTime()).toBe(5);
    expect(copy.when).not.toBe(when);
    expect(copy.map.get('k')).toBe(1);
    expect(copy.cyclic.self).toBe(copy.cyclic);
    expect(1 in copy.sparse).toBe(false);
  });

  it('copies a null-prototype object, objects nested in arrays, and leaves symbol keys as they are', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { inner: { n: 1 } });
    const tag = Symbol('tag');
    const tagged = { rows: [[{ n: 1 }], null, 'x'], [tag]: { shared: true } };
    const copy = snapshot({ bare, tagged });
    expect(Object.getPrototypeOf(copy.bare)).toBe(Object.prototype);
    expect(copy.bare.inner).toEqual({ n: 1 });
    expect(copy.bare.inner).not.toBe(bare.inner);
    expect(copy.tagged.rows).toEqual([[{ n: 1 }], null, 'x']);
    expect(copy.tagged.rows[0]).not.toBe(tagged.rows[0]);
    expect((copy.tagged.rows[0] as object[])[0]).not.toBe((tagged.rows[0] as object[])[0]);
    // Not data: carried over, not copied (JSON leaves it out).
    expect(copy.tagged[tag]).toBe(tagged[tag]);
  });

  it('hands a function anywhere inside, even deep, to the fallback rather than sharing it', () => {
    const copy = snapshot({ a: { b: [{ c: () => 1, keep: 2 }] } });
    expect(copy).toEqual({ a: { b: [{ keep: 2 }] } });
  });

  it('falls back to JSON for what structuredClone refuses', () => {
    const copy = snapshot({ keep: 1, drop: () => 1 });
    expect(copy).toEqual({ keep: 1 });
  });
});

describe('copyWith', () => {
  it('copies the own keys in order and sets the key last, or in its place', () => {
    const source = { type: 'task.progress', task_id: 't', progress: 0.5 };
    const added = copyWith(source, 'sequence', 3);
    expect(Object.keys(added)).toEqual(['type', 'task_id', 'progress', 'sequence']);
    expect(added).toEqual({ ...source, sequence: 3 });
    expect(source).not.toHaveProperty('sequence');
    const replaced = copyWith({ a: 1, sequence: 1, b: 2 }, 'sequence', 9);
    expect(Object.keys(replaced)).toEqual(['a', 'sequence', 'b']);
    expect(replaced.sequence).toBe(9);
  });

  it('shares the values (a shallow copy)', () => {
    const nested = { x: 1 };
    const copy = copyWith({ nested }, 'n', 1);
    expect(copy.nested).toBe(nested);
  });

  it('copies an own __proto__ key as a key, as a spread does', () => {
    const source = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = copyWith(source, 'b', 2);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect((copy as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe(JSON.stringify({ ...source, b: 2 }));
  });

  it('leaves out inherited and non-enumerable keys', () => {
    const source = Object.create({ inherited: 1 }) as Record<string, unknown>;
    source.own = 1;
    Object.defineProperty(source, 'hidden', { value: 1, enumerable: false });
    expect(Object.keys(copyWith(source, 'k', 2))).toEqual(['own', 'k']);
  });
});
