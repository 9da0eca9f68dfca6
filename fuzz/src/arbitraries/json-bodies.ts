/**
 * Request bodies for the JSON wires (HTTP, SSE JSON-RPC, WebSocket frames): a valid echo task
 * mutated by fast-check. A body is built as a value with placeholder strings, serialized, and the
 * placeholders are then replaced by raw JSON text that JSON.stringify could not produce (nesting
 * 20,000 levels deep, numbers out of double range, `__proto__` keys, duplicate keys), and the
 * text itself may finally be truncated or corrupted.
 */
import fc from 'fast-check';

/** A generated body: its bytes and a short description of what was done to it. */
export interface Body {
  label: string;
  bytes: Buffer;
}

export const TIMESTAMP = '2026-01-01T00:00:00Z';

/** The valid task every mutation starts from: the demo agent answers `echo` at once. */
export function echoTask(id: string, text = 'echo fuzz'): Record<string, unknown> {
  return {
    id,
    messages: [
      { id: `${id}-m1`, role: 'user', parts: [{ type: 'text', content: text }], timestamp: TIMESTAMP },
    ],
  };
}

const PLACEHOLDER = (n: number): string => `@@fuzz-placeholder-${n}@@`;

/** Deeply nested JSON text without recursion (JSON.stringify could not build it). */
export function nestedJson(depth: number, shape: 'array' | 'object' | 'mixed', leaf = '0'): string {
  if (shape === 'array') return '['.repeat(depth) + leaf + ']'.repeat(depth);
  if (shape === 'object') return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    if (i % 2 === 0) {
      open += '{"n":';
      close = '}' + close;
    } else {
      open += '[';
      close = ']' + close;
    }
  }
  return open + leaf + close;
}

/** Numbers a double cannot hold, or that parse to surprising values. */
const ODD_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '123456789012345678901234567890123456789',
  '9007199254740993',
  '-9223372036854775809',
  '0.1e999999',
  '4294967296',
  '1.7976931348623157e309',
  '5e-324',
];

/** Raw JSON fragments put where a value goes. */
const rawValue: fc.Arbitrary<{ label: string; text: string }> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 20_000 })),
        fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
      )
      .map(([depth, shape]) => ({ label: `nesting ${depth} (${shape})`, text: nestedJson(depth, shape) })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(...ODD_NUMBERS).map((n) => ({ label: `number ${n}`, text: n })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '{"__proto__":{"polluted":"yes","state":"completed"}}',
        '{"constructor":{"prototype":{"polluted":"yes"}}}',
        '{"__proto__":null}',
        '{"__proto__":[]}',
        '{"hasOwnProperty":1,"toString":"x","valueOf":null,"toJSON":"x"}',
        '{"a":1,"a":{"b":2},"a":[]}',
      )
      .map((text) => ({ label: `prototype keys ${text.slice(0, 24)}`, text })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('0', 'null', '{}', '""', '[]'))
      .map(([n, item]) => ({
        label: `array of ${n} ${item}`,
        text: `[${new Array<string>(n).fill(item).join(',')}]`,
      })),
  },
);

/** Values of the wrong type (or odd ones of the right type) for a field. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, '', ' ', [], {}, [null], { '': '' }, 'null', 'undefined'),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer(),
  fc.double(),
);

/** Dotted paths into the echo task; `[]` marks an array index 0. */
const FIELD_PATHS = [
  'id',
  'messages',
  'messages.0',
  'messages.0.id',
  'messages.0.role',
  'messages.0.parts',
  'messages.0.parts.0',
  'messages.0.parts.0.type',
  'messages.0.parts.0.content',
  'messages.0.timestamp',
  'metadata',
  'session_id',
  'state',
  'artifacts',
  'created_at',
  'updated_at',
  'history',
] as const;

type Mutation =
  | { kind: 'set'; path: string; value: unknown }
  | { kind: 'delete'; path: string }
  | { kind: 'raw'; path: string; raw: { label: string; text: string } }
  | { kind: 'text'; text: string }
  | { kind: 'extra-message'; count: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      path: fc.constantFrom(...FIELD_PATHS),
      value: wrongValue,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...FIELD_PATHS) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('raw' as const),
      path: fc.constantFrom(
        'metadata',
        'messages.0.parts.0.content',
        'messages.0.metadata',
        'id',
        'messages',
      ),
      raw: rawValue,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      text: fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.constantFrom('\u0000', '\ud800', '\udfff', '\u202e', 'a'.repeat(70_000), '%s%n%x', '${7*7}'),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('extra-message' as const),
      count: fc.integer({ min: 1, max: 20_000 }),
    }),
  },
);

function setPath(root: Record<string, unknown>, path: string, value: unknown, remove: boolean): void {
  const keys = path.split('.');
  let node: unknown = root;
  for (const key of keys.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return;
    node = (node as Record<string, unknown>)[key];
  }
  if (node === null || typeof node !== 'object') return;
  const last = keys[keys.length - 1]!;
  if (remove) delete (node as Record<string, unknown>)[last];
  else (node as Record<string, unknown>)[last] = value;
}

/** A mutated echo task as JSON text (it may no longer be valid JSON at all). */
export function applyMutations(id: string, mutations: Mutation[]): { label: string; text: string } {
  const task = echoTask(id);
  const raws: string[] = [];
  const labels: string[] = [];
  for (const m of mutations) {
    switch (m.kind) {
      case 'set':
        setPath(task, m.path, m.value, false);
        labels.push(`${m.path}=${short(m.value)}`);
        break;
      case 'delete':
        setPath(task, m.path, undefined, true);
        labels.push(`-${m.path}`);
        break;
      case 'raw':
        setPath(task, m.path, PLACEHOLDER(raws.length), false);
        raws.push(m.raw.text);
        labels.push(`${m.path}: ${m.raw.label}`);
        break;
      case 'text':
        setPath(task, 'messages.0.parts.0.content', `echo ${m.text}`, false);
        labels.push(`text ${short(m.text)}`);
        break;
      case 'extra-message': {
        const messages = Array.isArray(task.messages) ? (task.messages as unknown[]) : [];
        // Distinct objects: a later mutation of messages.0 must change one message, not all of them.
        const extra = Array.from({ length: m.count }, (_, i) => ({
          id: `x${i}`,
          role: 'user',
          parts: [{ type: 'text', content: 'echo x' }],
          timestamp: TIMESTAMP,
        }));
        task.messages = [...extra, ...messages];
        labels.push(`${m.count} extra messages`);
        break;
      }
    }
  }
  let text = JSON.stringify(task);
  raws.forEach((raw, i) => (text = text.replace(JSON.stringify(PLACEHOLDER(i)), raw)));
  return { label: labels.join('; ') || 'valid', text };
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Text-level damage done after serialization. */
type Damage =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'append'; tail: string }
  | { kind: 'bytes'; at: number; bytes: number[] }
  | { kind: 'prefix'; head: string };

const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      tail: fc.constantFrom('}', ']', ',', ' garbage', '\u0000', '{}', '\n{"id":"second"}'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('bytes' as const),
      at: fc.nat(),
      bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('prefix' as const),
      head: fc.constantFrom('\ufeff', ' \n\t', ")]}',\n", '\u0000'),
    }),
  },
);

function damaged(text: string, d: Damage): { label: string; bytes: Buffer } {
  const bytes = Buffer.from(text, 'utf8');
  switch (d.kind) {
    case 'none':
      return { label: '', bytes };
    case 'truncate': {
      const at = bytes.length === 0 ? 0 : d.at % bytes.length;
      return { label: `truncated at ${at}`, bytes: bytes.subarray(0, at) };
    }
    case 'append':
      return {
        label: `trailing ${JSON.stringify(d.tail)}`,
        bytes: Buffer.concat([bytes, Buffer.from(d.tail)]),
      };
    case 'bytes': {
      const at = bytes.length === 0 ? 0 : d.at % bytes.length;
      const copy = Buffer.from(bytes);
      d.bytes.forEach((b, i) => {
        if (at + i < copy.length) copy[at + i] = b;
      });
      return { label: `bytes overwritten at ${at}`, bytes: copy };
    }
    case 'prefix':
      return {
        label: `prefix ${JSON.stringify(d.head)}`,
        bytes: Buffer.concat([Buffer.from(d.head), bytes]),
      };
  }
}

/** A task id: usually a fresh plain one, sometimes a hostile one. */
export const taskId: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.uuid().map((u) => `fz-${u}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '../../etc/passwd',
      '__proto__',
      'constructor',
      '%00',
      'a'.repeat(10_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }) },
);

/** A mutated task as JSON text (the unit the JSON wires wrap in their own envelopes). */
export const taskText: fc.Arbitrary<{ label: string; text: string }> = fc
  .tuple(taskId, fc.array(mutation, { minLength: 0, maxLength: 3 }))
  .map(([id, mutations]) => applyMutations(id, mutations));

/** A whole body for a task route: a mutated task, or something that is not a task at all. */
export const taskBody: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.tuple(taskText, damage).map(([task, d]) => {
      const out = damaged(task.text, d);
      return { label: [task.label, out.label].filter(Boolean).join('; '), bytes: out.bytes };
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.integer({ min: 1, max: 20_000 }),
        fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
      )
      .map(([depth, shape]) => ({
        label: `top-level nesting ${depth} (${shape})`,
        bytes: Buffer.from(nestedJson(depth, shape)),
      })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          '',
          ' ',
          'null',
          '[]',
          '{}',
          '"task"',
          '0',
          'true',
          '{"task":{}}',
          '[{}]',
          'NaN',
          'undefined',
        ),
        fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
        fc.string({ unit: 'binary', maxLength: 300 }),
      )
      .map((text) => ({ label: `not a task: ${short(text)}`, bytes: Buffer.from(text) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 2000 })
      .map((b) => ({ label: `${b.length} random bytes`, bytes: Buffer.from(b) })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 6 }).map((mb) => ({
      label: `${mb} MiB string`,
      bytes: Buffer.from(
        `{"id":"big","messages":[{"id":"m","role":"user","parts":[{"type":"text","content":"echo ${'x'.repeat(mb * 1024 * 1024)}"}],"timestamp":"${TIMESTAMP}"}]}`,
      ),
    })),
  },
);
