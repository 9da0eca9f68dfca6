import { InvalidRequestError, ValueError, type JsonObject, type JsonValue } from '@agent/core';
import { DEFAULT_JSON_LIMITS, type JsonLimits } from '@agent/core/internal';

/**
 * The INVALID_REQUEST the JSON wires answer for a body past core's JSON limits, word for word and
 * with the same `data.max_depth` / `data.max_array_length`, so gRPC refuses a Struct the same way.
 */
export function jsonLimitExceeded(
  limit: 'depth' | 'array',
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
): InvalidRequestError {
  return limit === 'depth'
    ? new InvalidRequestError(`Invalid request: JSON nesting depth exceeds ${limits.maxDepth}`, {
        data: { max_depth: limits.maxDepth },
      })
    : new InvalidRequestError(`Invalid request: JSON array length exceeds ${limits.maxArrayLength}`, {
        data: { max_array_length: limits.maxArrayLength },
      });
}

/**
 * Normalizes a value the way `JSON.stringify` would before it enters a protobuf Struct/Value:
 * `toJSON()` is honoured (Dates become ISO strings), undefined and functions vanish from objects and
 * become null in arrays, non-finite numbers become null. So gRPC carries what HTTP would carry.
 * A bigint or a cycle is a ValueError, never a crash inside the serializer. `depth` is the JSON depth
 * the value sits at when it is an object or array (a Task's `metadata`: 2); a value nested past core's
 * `maxDepth` is the JSON limit's INVALID_REQUEST, thrown before the walk goes deeper, so no value can
 * exhaust the stack here or in the protobuf encoder after it.
 */
export function toJsonValue(value: unknown, path = '', depth = 1): JsonValue | undefined {
  return normalize(value, path, new Set(), depth);
}

/** {@link toJsonValue} for an object that must stay an object (metadata, payloads). */
export function toJsonObject(value: unknown, path = '', depth = 1): JsonObject {
  const normalized = toJsonValue(value, path, depth);
  if (normalized === undefined || normalized === null) return {};
  if (typeof normalized !== 'object' || Array.isArray(normalized)) {
    throw new ValueError(`${path || 'value'} must be a JSON object`);
  }
  return normalized;
}

function normalize(value: unknown, path: string, seen: Set<object>, depth: number): JsonValue | undefined {
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
  if (typeof object.toJSON === 'function') return normalize(object.toJSON(), path, seen, depth);
  if (seen.has(object)) throw new ValueError(`${path || 'value'} contains a cycle`);
  if (depth > DEFAULT_JSON_LIMITS.maxDepth) throw jsonLimitExceeded('depth');
  seen.add(object);
  try {
    if (Array.isArray(object)) {
      return object.map((item, index) => normalize(item, `${path}/${index}`, seen, depth + 1) ?? null);
    }
    const result: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(object)) {
      const normalized = normalize(item, `${path}/${key}`, seen, depth + 1);
      if (normalized === undefined) continue;
      // A `__proto__` key stays an own data property, as JSON.parse makes it.
      if (key === '__proto__') {
        Object.defineProperty(result, key, {
          value: normalized,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else result[key] = normalized;
    }
    return result;
  } finally {
    seen.delete(object);
  }
}
