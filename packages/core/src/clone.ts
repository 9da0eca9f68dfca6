/** Deep copies for records of the past: later mutation of a live object must not rewrite them. */
export function snapshot<T>(value: T): T {
  const plain = copyPlainData(value);
  if (plain) return plain.copy;
  try {
    return structuredClone(value);
  } catch {
    // structuredClone refuses functions and class instances with private state; JSON keeps the data.
    return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
  }
}

/**
 * A deep copy of `value` when it is plain data (primitives, dense arrays, objects whose prototype is
 * Object's or null), else undefined: the caller then copies it by rules of its own (structuredClone).
 * Almost everything copied here is plain data (tasks, events, payloads): a direct walk copies it
 * several times faster than structuredClone, which serializes through V8's value serializer.
 */
export function copyPlainData<T>(value: T): { copy: T } | undefined {
  const copy = plainCopy(value, 0);
  return copy === NOT_PLAIN ? undefined : { copy: copy as T };
}

/** Returned by {@link plainCopy} for a value it leaves to structuredClone. */
const NOT_PLAIN = Symbol('not plain data');

/** Deeper than this is a cycle or near enough: structuredClone copies it. */
const MAX_DEPTH = 200;

/**
 * A deep copy of plain data: primitives, dense arrays and objects whose prototype is Object's or
 * null (the copy's is Object's). Symbol-keyed properties are not data (JSON and every store leave
 * them out): they come along as they are, shared rather than copied. Anything else (a Date, a Map,
 * a class instance, a function, a sparse array, a cycle) makes the whole copy NOT_PLAIN, so it is
 * never half done: structuredClone then copies it all, with its own rules for those values.
 */
function plainCopy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth > MAX_DEPTH) return NOT_PLAIN;
  if (Array.isArray(value)) {
    const length = value.length;
    const out: unknown[] = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
      if (!(i in value)) return NOT_PLAIN;
      const item = plainCopy(value[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  // A spread copies the object's own enumerable keys in one step, taking its hidden class along,
  // where adding them one by one looked up each new key's class anew (a megamorphic keyed store per
  // key: a flat event copied four times slower). Telling whether an object has symbol keys, to leave
  // them out, cost more than the spread saves.
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  // What remains is to copy the values that are not primitives. `for…in` reads the copy's cached
  // key list; the own-key check keeps out what a polluted Object.prototype would add.
  for (const key in out) {
    const item = out[key];
    if (typeof item !== 'object') {
      if ((typeof item === 'function' || typeof item === 'symbol') && Object.hasOwn(out, key))
        return NOT_PLAIN;
      continue;
    }
    if (item === null || !Object.hasOwn(out, key)) continue;
    const copy = plainCopy(item, depth + 1);
    if (copy === NOT_PLAIN) return NOT_PLAIN;
    // Plain assignment of `__proto__` would set the copy's prototype instead of its key's value.
    if (key === '__proto__') defineOwn(out, key, copy);
    else out[key] = copy;
  }
  return out;
}

/**
 * `{ ...source, [key]: value }`: a shallow copy of `source`'s own enumerable string keys, in their
 * order, with `key` set (in its place when `source` has it, else last). Built key by key because a
 * spread followed by a key the source lacks gives every copy a hidden class of its own on Node 20's
 * V8: each such object then carries its own map and descriptor array, and every `for…in`,
 * `JSON.stringify` or property read on it takes the slow path. The pipeline does this once per
 * event (`sequence`), so it was paid per event, several times over.
 */
export function copyWith<T extends object, K extends string, V>(
  source: T,
  key: K,
  value: V,
): Omit<T, K> & Record<K, V> {
  const out: Record<string, unknown> = {};
  for (const name in source) {
    if (!Object.hasOwn(source, name)) continue;
    const item = (source as Record<string, unknown>)[name];
    // Plain assignment of `__proto__` would set the copy's prototype instead of copying the key.
    if (name === '__proto__') defineOwn(out, name, item);
    else out[name] = item;
  }
  if (key === '__proto__') defineOwn(out, key, value);
  else out[key] = value;
  return out as Omit<T, K> & Record<K, V>;
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
