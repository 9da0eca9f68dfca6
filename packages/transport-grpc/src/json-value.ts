import { ValueError, type JsonObject, type JsonValue } from '@agent/core';

/**
 * Normalizes a value the way `JSON.stringify` would before it enters a protobuf Struct/Value:
 * `toJSON()` is honoured (Dates become ISO strings), undefined and functions vanish from objects and
 * become null in arrays, non-finite numbers become null. So gRPC carries what HTTP would carry.
 * A bigint or a cycle is a ValueError, never a crash inside the serializer.
 */
export function toJsonValue(value: unknown, path = ''): JsonValue | undefined {
  return normalize(value, path, new Set());
}

/** {@link toJsonValue} for an object that must stay an object (metadata, payloads). */
export function toJsonObject(value: unknown, path = ''): JsonObject {
  const normalized = toJsonValue(value, path);
  if (normalized === undefined || normalized === null) return {};
  if (typeof normalized !== 'object' || Array.isArray(normalized)) {
    throw new ValueError(`${path || 'value'} must be a JSON object`);
  }
  return normalized;
}

function normalize(value: unknown, path: string, seen: Set<object>): JsonValue | undefined {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw new ValueError(`${path || 'value'} is a bigint, which JSON cannot carry`);
    case 'object':
      break;
  }
  const object = value as object & { toJSON?: () => unknown };
  if (typeof object.toJSON === 'function') return normalize(object.toJSON(), path, seen);
  if (seen.has(object)) throw new ValueError(`${path || 'value'} contains a cycle`);
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      return object.map((item, index) => normalize(item, `${path}/${index}`, seen) ?? null);
    }
    const result: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(object)) {
      const normalized = normalize(item, `${path}/${key}`, seen);
      if (normalized !== undefined) result[key] = normalized;
    }
    return result;
  } finally {
    seen.delete(object);
  }
}
