import { createHash } from 'node:crypto';

/**
 * The hash a decision is bound to: SHA-256 (lowercase hex) of the action's canonical JSON, where
 * object keys are sorted (JavaScript's default string order) and nothing is added between tokens. Two actions hash alike
 * exactly when they are the same JSON value, however their keys were ordered.
 */
export function actionHash(action: unknown): string {
  return createHash('sha256').update(canonicalJson(action)).digest('hex');
}

/** JSON with sorted keys; `undefined` members are left out, as JSON.stringify leaves them. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined || typeof item === 'function') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${members.join(',')}}`;
}
