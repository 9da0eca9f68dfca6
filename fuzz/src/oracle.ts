/**
 * What counts as a failure, and the record of every failing case. A check names the oracle it
 * failed; whether that oracle makes a run fail (or CI red) is decided by {@link Oracle}'s table.
 */

/** Every oracle the harness checks. */
export type Oracle =
  /** The server process exited, or `/healthz` stopped answering. */
  | 'crash'
  /** No answer and no close within the hang limit. */
  | 'hang'
  /** HTTP 5xx, gRPC INTERNAL or UNKNOWN, JSON-RPC -32603, an INTERNAL error code, WebSocket close 1011. */
  | 'server-error'
  /** An answer carrying an engine message, a stack frame, a path or a module name. */
  | 'leak'
  /** An HTTP error status whose body is not the `{"error":{code,message}}` JSON body. */
  | 'error-body'
  /** A task acknowledged as completed before a kill -9 is missing or different after the restart. */
  | 'lost-task'
  /** A task left in a non-terminal state after a restart. */
  | 'non-terminal-after-restart'
  /** Memory that did not come back after slow consumers left, or a healthy caller slowed down. */
  | 'resources';

export const ORACLES: Record<Oracle, { description: string }> = {
  crash: { description: 'process exited or /healthz stopped answering' },
  hang: { description: 'no answer and no close within the hang limit' },
  'server-error': {
    description:
      'HTTP 5xx, gRPC INTERNAL/UNKNOWN, JSON-RPC -32603, INTERNAL error code, WebSocket close 1011',
  },
  leak: { description: 'engine message, stack frame, file path or module name in an answer' },
  'error-body': { description: 'HTTP error status without the JSON error body' },
  'lost-task': { description: 'a completed (acknowledged) task missing or changed after kill -9 + restart' },
  'non-terminal-after-restart': { description: 'a task still submitted/working after kill -9 + restart' },
  resources: { description: 'RSS not back within 10 % after slow consumers left, or a slow healthy caller' },
};

/**
 * What a Node server leaks when an error escapes: engine messages (V8's own wording, JSON.parse's
 * included), stack frames, file system paths, module and internal error names.
 */
export const LEAK_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'stack overflow', pattern: /Maximum call stack size exceeded/ },
  { name: 'stack frame', pattern: /\bat (?:\S+ )?\(?(?:\/|node:|file:)[^\s()"']*\.[cm]?[jt]sx?:\d+:\d+\)?/ },
  { name: 'stack frame (.js:line)', pattern: /\bat [^\n"]*\.[cm]?js:\d+/ },
  { name: 'node internals', pattern: /node:internal|internal\/(?:process|streams|modules)\// },
  { name: 'work path', pattern: /\/work\// },
  { name: 'home path', pattern: /\/(?:root|home\/[\w.-]+)\/[\w.-]/ },
  { name: 'node_modules', pattern: /node_modules/ },
  { name: 'dist path', pattern: /\/dist\/[\w/-]+\.js/ },
  {
    name: 'error class name',
    pattern: /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|EvalError|URIError)\b/,
  },
  { name: 'property access', pattern: /Cannot (?:read|set) propert(?:y|ies) of/ },
  { name: 'not a function', pattern: /\bis not a function\b/ },
  { name: 'not iterable', pattern: /\bis not iterable\b/ },
  {
    name: 'undefined/null conversion',
    pattern: /Cannot convert undefined or null to object|undefined is not/,
  },
  {
    name: 'JSON.parse wording',
    pattern:
      /Unexpected token .{1,8} in JSON|Unexpected end of JSON input|Unexpected token .{1,12}, \\?".{0,80}is not valid JSON|Expected property name or '\}'|Bad control character in string literal|Unterminated string in JSON|Expected ',' or '[}\]]' after|Bad escaped character|Unexpected non-whitespace character after JSON|No number after minus sign|Exponent part is missing a number|Unterminated fractional number|in JSON at position \d+|Expected double-quoted property name/,
  },
  {
    name: 'string/array limits',
    pattern: /Invalid string length|Invalid array length|Array buffer allocation failed/,
  },
  { name: 'out of memory', pattern: /out of memory|heap limit/i },
  { name: 'circular JSON', pattern: /Converting circular structure to JSON/ },
  { name: 'node error code', pattern: /\bERR_[A-Z][A-Z_]{3,}\b/ },
  { name: 'syscall error', pattern: /\b(?:ECONNRESET|EPIPE|EADDRINUSE|ENOENT|EACCES|EMFILE)\b/ },
  { name: 'sqlite', pattern: /\bSQLITE_[A-Z]+|SqliteError/ },
  { name: 'object stringified', pattern: /\[object (?:Object|Promise)\]/ },
  {
    name: 'protobuf decoder',
    pattern:
      /invalid wire type|index out of range: \d+ \+ \d+ > \d+|illegal tag|premature EOF|invalid varint/i,
  },
  { name: 'ajv internals', pattern: /schema is invalid|strict mode: unknown keyword/ },
];

export interface LeakMatch {
  name: string;
  match: string;
  /** The answer around the match. */
  context: string;
}

/**
 * Leak patterns matched by `answer` that do not just echo what the request sent (an echo agent
 * repeats fuzzed text, so a match is only a leak when the request did not carry the same text).
 */
export function findLeaks(answer: string, request: string | Buffer): LeakMatch[] {
  const requestText = typeof request === 'string' ? request : request.toString('latin1');
  const requestUtf8 = typeof request === 'string' ? request : request.toString('utf8');
  const out: LeakMatch[] = [];
  for (const { name, pattern } of LEAK_PATTERNS) {
    const found = pattern.exec(answer);
    if (found === null) continue;
    const match = found[0];
    if (requestText.includes(match) || requestUtf8.includes(match)) continue;
    const from = Math.max(0, found.index - 120);
    out.push({
      name,
      match: match.slice(0, 200),
      context: answer.slice(from, found.index + match.length + 120),
    });
  }
  return out;
}

/** One failing case, as the JSON report keeps it. */
export interface Finding {
  oracle: Oracle;
  /** Short grouping key within the oracle, e.g. `HTTP 500` or `leak: stack frame`. */
  kind: string;
  /** http-node, http-express, sse, ws, grpc (or the mode's own name). */
  target: string;
  seed: number;
  /** The case's index: `--seed <seed> --transport <target> --case <index>` replays it. */
  caseIndex?: number;
  label?: string;
  request?: unknown;
  answer?: unknown;
  detail?: string;
}

/** Cut big payloads for the report (the replay flags regenerate the whole request). */
export function preview(data: string | Buffer | undefined, max = 2000): string | undefined {
  if (data === undefined) return undefined;
  const text = typeof data === 'string' ? data : data.toString('utf8');
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** Oracles that make `pnpm fuzz` exit non-zero. */
export const RUN_FAILS_ON: ReadonlySet<Oracle> = new Set<Oracle>([
  'crash',
  'hang',
  'server-error',
  'leak',
  'lost-task',
]);
/** Oracles the CI smoke test enforces; the others are printed. */
export const CI_FAILS_ON: ReadonlySet<Oracle> = new Set<Oracle>(['crash', 'hang']);

export interface FindingGroup {
  oracle: Oracle;
  kind: string;
  target: string;
  count: number;
  /** The first few failing cases of the group, in full. */
  examples: Finding[];
}

/** Findings grouped by (oracle, kind, target): every one counted, the first few kept whole. */
export class FindingLog {
  private readonly groups = new Map<string, FindingGroup>();

  constructor(private readonly examplesPerGroup = 5) {}

  add(finding: Finding): void {
    const key = `${finding.oracle}\u0000${finding.kind}\u0000${finding.target}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { oracle: finding.oracle, kind: finding.kind, target: finding.target, count: 0, examples: [] };
      this.groups.set(key, group);
    }
    group.count++;
    if (group.examples.length < this.examplesPerGroup) group.examples.push(finding);
  }

  list(): FindingGroup[] {
    return [...this.groups.values()].sort(
      (a, b) => a.oracle.localeCompare(b.oracle) || a.target.localeCompare(b.target) || b.count - a.count,
    );
  }

  count(oracles?: ReadonlySet<Oracle>): number {
    let n = 0;
    for (const g of this.groups.values()) if (!oracles || oracles.has(g.oracle)) n += g.count;
    return n;
  }
}
