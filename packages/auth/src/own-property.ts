/**
 * `target[key] = value` without the `__proto__` setter: keys that come from untrusted JSON (JWT
 * claims, card records) stay own, enumerable data properties, so a `__proto__` key can neither
 * replace the prototype nor surface as inherited keys, and JSON.stringify still writes it.
 */
export function setOwnProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
