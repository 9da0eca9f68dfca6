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
 * The one-pass writer of a policy: its private method, reached through the class's static block,
 * which assigns this before anything can call it.
 */
let plainJsonOf: (policy: RedactionPolicy, value: unknown) => string | null;

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
  /** The replacer path writes a masked key's value as the mask itself… */
  readonly #maskJson: string;
  /** No custom patterns: a string without PLAIN_STRING_HINT's shapes is written as it is. */
  readonly #plainStrings: boolean;

  static {
    plainJsonOf = (policy, value) => policy.#plainJson(value);
  }

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
    this.#maskJson = quote(this.#mask);
    this.#plainStrings = this.#patterns.length === 0;
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
    if (this.#defaults && mayStartWithScheme(value) && SCHEME_PREFIX.test(value)) return this.#mask;
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
   *
   * Plain data (the records stores keep) is written by {@link #container}, which reads every value
   * once and masks and writes what it read. On meeting a value of any other type it drops its
   * partial text and the replacer path serializes the whole value afresh, so what is stored is
   * always what one serializer read and masked.
   */
  redactedJson(value: unknown): string {
    return this.#plainJson(value) ?? this.#replacerJson(value);
  }

  /**
   * The one-pass writer's text of `value`, or null when it is not plain data (the replacer path
   * then decides).
   */
  #plainJson(value: unknown): string | null {
    if (typeof value !== 'object' || value === null) return null;
    // A text of its own per call: a getter may serialize again while this call writes.
    const out = new JsonText(hasInheritedKeys());
    try {
      this.#container(value, 0, out);
      // A getter that gave Object.prototype an enumerable property meanwhile: `for…in` may have
      // written it without the own-key check.
      if (!out.inherited && hasInheritedKeys()) return null;
      return out.text();
    } catch {
      // Not plain data (or a getter threw).
      return null;
    }
  }

  #replacerJson(value: unknown): string {
    try {
      return JSON.stringify(value, this.#replacer);
    } catch {
      return JSON.stringify(this.redact(value));
    }
  }

  readonly #replacer = replacerOf(this, () => this.#mask);
  /** The mask of a header pair goes through the replacer again, so through `redactString`. */
  #pairMaskJson: string | undefined;
  /** Per object key: its JSON text as the writer puts it, and whether it is sensitive. */
  readonly #keyInfo = new Map<string, KeyInfo>();

  /**
   * Writes the JSON text of a value read from a container, as the replacer path would write it.
   * The caller has ruled out what JSON skips ({@link skipped}). Throws NOT_PLAIN on any type the
   * replacer path must handle.
   */
  #plain(value: unknown, depth: number, out: JsonText): void {
    switch (typeof value) {
      case 'string':
        if (this.#writesAsIs(value)) {
          // Three pieces rather than a quoted copy: the text takes the value itself, copied once
          // when the text is flattened.
          out.push('"');
          out.push(value);
          out.push('"');
        } else out.push(quote(this.redactString(value)));
        return;
      case 'number':
        out.push(Number.isFinite(value) ? String(value) : 'null');
        return;
      case 'boolean':
        out.push(value ? 'true' : 'false');
        return;
      case 'object':
        if (value === null) out.push('null');
        else this.#container(value, depth, out);
        return;
      default:
        throw NOT_PLAIN; // a BigInt; skipped types never get here
    }
  }

  /** True when a string's JSON text is the string in quotes: nothing to mask, nothing to escape. */
  #writesAsIs(value: string): boolean {
    // One scan rules out every default shape, custom patterns aside, and any character to escape.
    return this.#plainStrings && hintFree(value) && !(this.#defaults && mayStartWithScheme(value));
  }

  /** An array item: what JSON skips elsewhere is `null` here. */
  #item(item: unknown, depth: number, out: JsonText): void {
    if (skipped(item)) out.push('null');
    else this.#plain(item, depth, out);
  }

  /** An array of Array's prototype or an object of Object's or a null prototype, without `toJSON`. */
  #container(value: object, depth: number, out: JsonText): void {
    if (value === sharing.value && this === sharing.policy) {
      out.push(sharing.text);
      return;
    }
    // `in` looks the name up without calling a getter; past MAX_PLAIN_DEPTH is deep or a cycle.
    if (depth > MAX_PLAIN_DEPTH || 'toJSON' in value) throw NOT_PLAIN;
    const next = depth + 1;
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype) throw NOT_PLAIN;
      const items = value as unknown[];
      const length = items.length;
      if (length === 2) {
        const name = items[0];
        const item = items[1];
        // A [name, value] header pair: the name decides, as it would for an object key. The
        // replacer path then writes the pair [name, mask] through itself, so both via redactString.
        if (typeof name === 'string' && item !== null && this.isSensitiveKey(name)) {
          this.#pairMaskJson ??= quote(this.redactString(this.#mask));
          out.push(`[${quote(this.redactString(name))},${this.#pairMaskJson}]`);
          return;
        }
        out.push('[');
        this.#item(name, next, out);
        out.push(',');
        this.#item(item, next, out);
        out.push(']');
        return;
      }
      out.push('[');
      for (let index = 0; index < length; index++) {
        if (index > 0) out.push(',');
        this.#item(items[index], next, out);
      }
      out.push(']');
      return;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
    const record = value as Record<string, unknown>;
    let first = true;
    // The closing quote of a string value written as it is waits for the next piece (`","key":`
    // or `"}`): every piece costs a node of the text's rope, and these quotes were a fifth of them.
    let quoteOpen = false;
    // `for…in` reads the object's cached key list where `Object.keys` would copy it for every object
    // written. It also lists the enumerable properties of Object.prototype, of which there are none
    // unless someone added one: only then is every key checked to be the object's own.
    for (const key in record) {
      if (out.inherited && !Object.hasOwn(record, key)) continue;
      const item = record[key];
      const info = this.#keyInfoOf(key);
      if (info.sensitive && item !== null && item !== undefined && item !== '') {
        // JSON calls a `toJSON` (a BigInt's too) before the replacer decides on what it returns.
        if (
          typeof item === 'object' || typeof item === 'function' ? 'toJSON' in item : typeof item === 'bigint'
        )
          throw NOT_PLAIN;
        out.push(first ? info.open : quoteOpen ? info.afterQuote : info.next);
        out.push(this.#maskJson);
        quoteOpen = false;
      } else if (typeof item === 'string' && this.#writesAsIs(item)) {
        // The key's text carries the opening quote: one piece less for the commonest value.
        out.push(first ? info.openQuote : quoteOpen ? info.afterQuoteQuote : info.nextQuote);
        out.push(item);
        quoteOpen = true;
      } else if (item === null) {
        // The key's text carries the `null` too: the envelope's many empty ids are one piece each.
        out.push(first ? info.openNull : quoteOpen ? info.afterQuoteNull : info.nextNull);
        quoteOpen = false;
      } else {
        if (skipped(item)) continue;
        out.push(first ? info.open : quoteOpen ? info.afterQuote : info.next);
        this.#plain(item, next, out);
        quoteOpen = false;
      }
      first = false;
    }
    out.push(first ? '{}' : quoteOpen ? '"}' : '}');
  }

  #keyInfoOf(key: string): KeyInfo {
    let info = this.#keyInfo.get(key);
    if (info === undefined) {
      const head = `${quote(key)}:`;
      info = {
        open: flat('{', head, ''),
        next: flat(',', head, ''),
        afterQuote: flat('",', head, ''),
        openQuote: flat('{', head, '"'),
        nextQuote: flat(',', head, '"'),
        afterQuoteQuote: flat('",', head, '"'),
        openNull: flat('{', head, 'null'),
        nextNull: flat(',', head, 'null'),
        afterQuoteNull: flat('",', head, 'null'),
        sensitive: this.isSensitiveKey(key),
      };
      if (this.#keyInfo.size >= MAX_DECIDED_KEYS) this.#keyInfo.clear();
      this.#keyInfo.set(key, info);
    }
    return info;
  }

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

/** A value written already in the current call, and its text: see {@link redactedJsonSharing}. */
const sharing: { policy: RedactionPolicy | null; value: object | null; text: string } = {
  policy: null,
  value: null,
  text: '',
};

/**
 * The text of `value` as {@link RedactionPolicy.redactedJson} writes it, and whether the one-pass
 * writer wrote it: only such a text may stand for the value inside another (the copying path may
 * read a value's getters differently).
 */
export function plainRedactedJson(policy: RedactionPolicy, value: unknown): { text: string; plain: boolean } {
  const text = plainJsonOf(policy, value);
  return text === null ? { text: policy.redactedJson(value), plain: false } : { text, plain: true };
}

/**
 * `policy.redactedJson(value)`, where `part`, met anywhere inside `value`, is written as `partText`
 * instead of being written again: a store's task snapshot and the final status event that carries
 * the same task, in one write. `partText` must be what the one-pass writer of this policy wrote of
 * `part` ({@link plainRedactedJson}) in the same synchronous call, so that nothing can have changed
 * `part` since.
 */
export function redactedJsonSharing(
  policy: RedactionPolicy,
  value: unknown,
  part: object,
  partText: string,
): string {
  const outer = { ...sharing };
  sharing.policy = policy;
  sharing.value = part;
  sharing.text = partText;
  try {
    return policy.redactedJson(value);
  } finally {
    sharing.policy = outer.policy;
    sharing.value = outer.value;
    sharing.text = outer.text;
  }
}

/** Keys decided by `isSensitiveKey` kept at once; the cache starts over past this. */
const MAX_DECIDED_KEYS = 4096;

/** Nesting the one-pass writer follows before leaving a value to the replacer path (a cycle, say). */
const MAX_PLAIN_DEPTH = 200;

/** Thrown inside the one-pass writer on a value that is not plain data; never leaves redactedJson. */
const NOT_PLAIN = new Error('not plain data');

/**
 * A key's JSON text as the writer puts it: after `{`, after `,`, or after a string value whose
 * closing quote it writes (`",`); bare, with a string value's opening quote, or with a `null` value.
 */
interface KeyInfo {
  /** `{"key":` */
  readonly open: string;
  /** `,"key":` */
  readonly next: string;
  /** `","key":` */
  readonly afterQuote: string;
  /** `{"key":"` */
  readonly openQuote: string;
  /** `,"key":"` */
  readonly nextQuote: string;
  /** `","key":"` */
  readonly afterQuoteQuote: string;
  /** `{"key":null` */
  readonly openNull: string;
  /** `,"key":null` */
  readonly nextNull: string;
  /** `","key":null` */
  readonly afterQuoteNull: string;
  readonly sensitive: boolean;
}

/**
 * True for what JSON leaves out of an object and writes as `null` in an array. A function with a
 * `toJSON` is not skipped by JSON: it is not plain data.
 */
function skipped(value: unknown): boolean {
  switch (typeof value) {
    case 'undefined':
    case 'symbol':
      return true;
    case 'function':
      if ('toJSON' in value) throw NOT_PLAIN;
      return true;
    default:
      return false;
  }
}

/** True when Object.prototype has an enumerable property (someone added one). */
function hasInheritedKeys(): boolean {
  // `for…in` rather than `Object.keys`, which made an empty array twice per text written.
  for (const key in Object.prototype) if (Object.hasOwn(Object.prototype, key)) return true;
  return false;
}

/**
 * JSON text grown piece by piece with `+=`. V8 makes a rope of it (a node per piece, or a flat copy
 * while it is short), which the first reader of the text flattens once: a store measuring its bytes,
 * a driver writing it. Measured against collecting the pieces in reused lists and joining them once
 * (what this did before): 18 % fewer instructions for an echo run's report and task, flattening
 * included, and 10 % fewer for a report of a thousand events (400 KB). The nodes are garbage once
 * the text is flat, and they die young: a scavenge never copies them.
 */
class JsonText {
  #text = '';

  constructor(
    /** Object.prototype has an enumerable property, which `for…in` lists on every plain object. */
    readonly inherited: boolean,
  ) {}

  push(piece: string): void {
    this.#text += piece;
  }

  text(): string {
    return this.#text;
  }
}

// Any character JSON escapes (quote, backslash, control, any surrogate half: lone ones are escaped).
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
// What sends a string the long way: a literal of a default inline shape or a character to escape.
// eslint-disable-next-line no-control-regex -- as above
const PLAIN_STRING_HINT = /eyJ|Bearer|["\\\u0000-\u001f\ud800-\udfff]/;

/** Strings at least this long have their PLAIN_STRING_HINT scan remembered until the turn ends. */
const LONG_STRING = 1024;
/** At most this many are remembered at once: what a turn writes of a few large tasks. */
const MAX_LONG_SCANS = 64;
const longScans = new Map<string, boolean>();
let forgetting: NodeJS.Immediate | undefined;

/**
 * True when `value` has none of PLAIN_STRING_HINT's shapes. A task's long text is written several
 * times in a row (its snapshot, its final event, its report list the same string), and scanning
 * 64 KiB takes ~50 µs where looking the same string up takes ~20 ns (V8 hashes a long string by
 * its length). Answers are kept only until the turn ends, so no text outlives its requests here.
 */
function hintFree(value: string): boolean {
  if (value.length < LONG_STRING) return !PLAIN_STRING_HINT.test(value);
  let free = longScans.get(value);
  if (free === undefined) {
    free = !PLAIN_STRING_HINT.test(value);
    if (longScans.size >= MAX_LONG_SCANS) longScans.clear();
    longScans.set(value, free);
    forgetting ??= setImmediate(forgetLongScans).unref();
  }
  return free;
}

function forgetLongScans(): void {
  forgetting = undefined;
  longScans.clear();
}

/**
 * `before + middle + after` as one flat string. `+` and template literals make a rope (two
 * pointers) of anything 13 characters or longer, and a cached rope is walked again by every join
 * that writes it; `join` always makes a flat string.
 */
function flat(before: string, middle: string, after: string): string {
  return [before, middle, after].join('');
}

/** A string's JSON text: native escaping only when some character needs it. */
function quote(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/**
 * False only when SCHEME_PREFIX cannot match: a string whose first character is ASCII and that does
 * not begin `api`, `bea` or `bas` (any case), or is shorter than `basic ` — so `agent`, `benchmark`
 * or an id starting with a hex `a` or `b` is written without the regex. Whitespace, control and
 * non-ASCII first characters go to the regex (`\s` has Unicode spaces).
 */
function mayStartWithScheme(value: string): boolean {
  const code = value.charCodeAt(0);
  if (code <= 0x20 || code >= 0x80) return true;
  const first = code | 0x20;
  if ((first !== 0x61 && first !== 0x62) || value.length < 6) return false;
  const second = value.charCodeAt(1) | 0x20;
  const third = value.charCodeAt(2) | 0x20;
  // a-p-i, b-e-a, b-a-s
  if (first === 0x61) return second === 0x70 && third === 0x69;
  return (second === 0x65 && third === 0x61) || (second === 0x61 && third === 0x73);
}

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
