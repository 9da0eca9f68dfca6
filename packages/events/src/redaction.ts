/**
 * RedactionPolicy: masks secrets by key name and by value shape (the README's "RedactionPolicy").
 * Applied at every persistence and export boundary: reports, approval payloads, manifests, spans.
 */
import { ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';

/** What replaces a masked value unless `mask` says otherwise. */
export const REDACTED = '[REDACTED]';

/**
 * Normalized key names (lowercase, no `-`, `_` or spaces) that mark a value as secret when the key
 * equals or ends with one of them. `tokens` is absent on purpose: `input_tokens` is a count.
 */
export const DEFAULT_SENSITIVE_KEYS: readonly string[] = [
  'apikey',
  'apikeys',
  'token',
  'secret',
  'secrets',
  'password',
  'passwords',
  'passwd',
  'authorization',
  'cookie',
  'cookies',
  'credential',
  'credentials',
  'privatekey',
];

// By design, a string that starts with one of these schemes and whitespace is masked whole,
// whatever follows and in any letter case. This masks prose such as "Basic arithmetic" too, on
// purpose: a redaction policy errs towards hiding, and telling prose from an odd credential is a guess.
const SCHEME_PREFIX = /^\s*(?:bearer|basic|apikey)\s/i;
// A JWT anywhere in a string: base64url JSON header (`{"` → `eyJ`), payload, optional signature.
const JWT_INLINE = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
// `Bearer <token>` inside longer text, e.g. a logged header line.
const BEARER_INLINE = /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g;

export interface RedactionPolicyOptions {
  /**
   * Extra key names, matched like the defaults (case-insensitive, ignoring `-`, `_` and spaces;
   * equal to or ending with the name).
   */
  keys?: readonly string[];
  /** Extra value patterns; every match inside a string is replaced by the mask. */
  patterns?: readonly RegExp[];
  /** Start from the default key list and value shapes. Default `true`. */
  includeDefaults?: boolean;
  /** Normalized key names never masked by key, e.g. `sessiontoken` when it is not a secret. Default none. */
  allowKeys?: readonly string[];
  /** The replacement text. Default `"[REDACTED]"`. */
  mask?: string;
}

const OPTION_NAMES = optionNames<RedactionPolicyOptions>({
  keys: true,
  patterns: true,
  includeDefaults: true,
  allowKeys: true,
  mask: true,
});

/** Lowercase without `-`, `_` and spaces: `X-Api-Key` → `xapikey`. */
export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

function globalPattern(pattern: RegExp): RegExp {
  if (!(pattern instanceof RegExp)) throw new ValueError('RedactionPolicy patterns must be RegExp values');
  return pattern.flags.includes('g')
    ? new RegExp(pattern.source, pattern.flags)
    : new RegExp(pattern.source, `${pattern.flags}g`);
}

/**
 * Masks secrets in a deep copy of any JSON-like value; the input is never mutated. Keys are kept
 * and their values replaced, so the shape of a report or header map stays readable.
 */
export class RedactionPolicy {
  readonly #keys: readonly string[];
  readonly #allow: ReadonlySet<string>;
  readonly #patterns: readonly RegExp[];
  readonly #defaults: boolean;
  readonly #mask: string;
  readonly #decided = new Map<string, boolean>();

  constructor(options: RedactionPolicyOptions = {}) {
    checkOptionNames('RedactionPolicy', options, OPTION_NAMES);
    this.#defaults = options.includeDefaults ?? true;
    const extra = (options.keys ?? []).map((key) => {
      if (typeof key !== 'string' || normalizeKey(key) === '')
        throw new ValueError('RedactionPolicy keys must be non-empty strings');
      return normalizeKey(key);
    });
    this.#keys = [...(this.#defaults ? DEFAULT_SENSITIVE_KEYS : []), ...extra];
    this.#allow = new Set((options.allowKeys ?? []).map(normalizeKey));
    this.#patterns = (options.patterns ?? []).map(globalPattern);
    this.#mask = options.mask ?? REDACTED;
  }

  /** The default policy: DEFAULT_SENSITIVE_KEYS, scheme prefixes, JWTs and inline bearer tokens. */
  static default(): RedactionPolicy {
    return DEFAULT_POLICY;
  }

  /** A policy that masks nothing (still returns a deep copy). */
  static none(): RedactionPolicy {
    return NONE_POLICY;
  }

  /** True when a value stored under this key is masked whatever it is. */
  isSensitiveKey(key: string): boolean {
    // The same few dozen keys (`id`, `parts`, `content`…) come by on every record: decide each once.
    let sensitive = this.#decided.get(key);
    if (sensitive === undefined) {
      const normalized = normalizeKey(key);
      sensitive =
        normalized !== '' &&
        !this.#allow.has(normalized) &&
        this.#keys.some((name) => normalized === name || normalized.endsWith(name));
      if (this.#decided.size >= MAX_DECIDED_KEYS) this.#decided.clear();
      this.#decided.set(key, sensitive);
    }
    return sensitive;
  }

  /** Masks credential-shaped parts of a string. */
  redactString(value: string): string {
    if (this.#defaults && SCHEME_PREFIX.test(value)) return this.#mask;
    let result = value;
    // Both default shapes contain a literal (`eyJ`, `Bearer`): a string with neither is left as is.
    if (this.#defaults && (value.includes('eyJ') || value.includes('Bearer'))) {
      result = result.replace(JWT_INLINE, this.#mask).replace(BEARER_INLINE, `Bearer ${this.#mask}`);
    }
    for (const pattern of this.#patterns) result = result.replace(pattern, this.#mask);
    return result;
  }

  /**
   * `JSON.stringify(this.redact(value))` in one pass, without building the masked copy first: what a
   * store writes. A value JSON cannot carry as it is (a cycle, a BigInt) takes the copying path.
   */
  redactedJson(value: unknown): string {
    try {
      return JSON.stringify(value, this.#replacer);
    } catch {
      return JSON.stringify(this.redact(value));
    }
  }

  readonly #replacer = replacerOf(this, () => this.#mask);

  /** A masked deep copy. Cycles become `"[Circular]"`, functions and symbols are dropped. */
  redact<T>(value: T): T {
    return this.#walk(value, new WeakSet()) as T;
  }

  #walk(value: unknown, seen: WeakSet<object>): unknown {
    if (typeof value === 'string') return this.redactString(value);
    if (typeof value === 'bigint') return value.toString();
    if (value === null || typeof value !== 'object')
      return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
    if (seen.has(value)) return '[Circular]';
    seen.add(value);
    try {
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
      if (Array.isArray(value)) return this.#array(value, seen);
      if (value instanceof Map)
        return this.#entries(
          [...value.entries()].map(([k, v]) => [String(k), v]),
          seen,
        );
      if (value instanceof Set) return [...value].map((item) => this.#walk(item, seen));
      if (value instanceof Error) {
        const error = value as Error & { code?: unknown; data?: unknown };
        const body: Record<string, unknown> = { name: error.name, message: error.message };
        if (error.code !== undefined) body.code = error.code;
        if (error.data !== undefined) body.data = error.data;
        return this.#entries(Object.entries(body), seen);
      }
      const withJson = value as { toJSON?: unknown };
      if (typeof withJson.toJSON === 'function')
        return this.#walk((withJson.toJSON as () => unknown).call(value), seen);
      return this.#entries(Object.entries(value), seen);
    } finally {
      seen.delete(value);
    }
  }

  #array(value: unknown[], seen: WeakSet<object>): unknown[] {
    // A [name, value] header pair: the name decides, as it would for an object key.
    if (
      value.length === 2 &&
      typeof value[0] === 'string' &&
      this.isSensitiveKey(value[0]) &&
      value[1] !== null
    ) {
      return [value[0], this.#mask];
    }
    return value.map((item) => {
      const result = this.#walk(item, seen);
      return result === undefined ? null : result;
    });
  }

  #entries(entries: [string, unknown][], seen: WeakSet<object>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, item] of entries) {
      if (item !== null && item !== undefined && item !== '' && this.isSensitiveKey(key)) {
        setOwn(out, key, this.#mask);
        continue;
      }
      const result = this.#walk(item, seen);
      if (result !== undefined || item === undefined) setOwn(out, key, result);
    }
    return out;
  }
}

/** Keys decided by `isSensitiveKey` kept at once; the cache starts over past this. */
const MAX_DECIDED_KEYS = 4096;

/**
 * The JSON.stringify replacer of {@link RedactionPolicy.redactedJson}: the same masking as the
 * copying walk, decided as the serializer visits each value (`this` is the value's holder, and the
 * value has been through `toJSON`).
 */
function replacerOf(policy: RedactionPolicy, mask: () => string): (key: string, value: unknown) => unknown {
  return function (this: unknown, key: string, value: unknown): unknown {
    if (
      key !== '' &&
      !Array.isArray(this) &&
      value !== null &&
      value !== undefined &&
      value !== '' &&
      policy.isSensitiveKey(key)
    ) {
      return mask();
    }
    if (typeof value === 'string') return policy.redactString(value);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) {
      // A [name, value] header pair: the name decides, as it would for an object key.
      const pair = value.length === 2 && typeof value[0] === 'string' && value[1] !== null;
      return pair && policy.isSensitiveKey(value[0] as string) ? [value[0], mask()] : value;
    }
    if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), v]));
    if (value instanceof Set) return [...value];
    if (value instanceof Error) {
      const error = value as Error & { code?: unknown; data?: unknown };
      const body: Record<string, unknown> = { name: error.name, message: error.message };
      if (error.code !== undefined) body.code = error.code;
      if (error.data !== undefined) body.data = error.data;
      return body;
    }
    return value;
  };
}

// Plain assignment of a `__proto__` key would replace the copy's prototype instead of copying the key.
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

const DEFAULT_POLICY = new RedactionPolicy();
const NONE_POLICY = new RedactionPolicy({ includeDefaults: false });
