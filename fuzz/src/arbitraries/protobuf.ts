/**
 * gRPC request bodies for `agent.v1.AgentService` written by a small protobuf encoder of our own,
 * so they can be wrong in every way the wire format allows: truncated or overlong varints, lengths
 * that lie, wrong wire types, enums out of range, unknown and invalid fields, Struct nesting 20,000
 * levels deep, and repeated fields with 100,000 entries.
 */
import fc from 'fast-check';

// --- encoder --------------------------------------------------------------------------------------

export function varint(value: bigint | number): Buffer {
  let v = BigInt(value);
  if (v < 0n) v = (1n << 64n) + v; // negative int32/enum values go out as 10-byte two's complement
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
}

const key = (field: number, wireType: number): Buffer => varint((BigInt(field) << 3n) | BigInt(wireType));
export const ld = (field: number, bytes: Buffer): Buffer =>
  Buffer.concat([key(field, 2), varint(bytes.length), bytes]);
const str = (field: number, s: string | Buffer): Buffer =>
  ld(field, Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8'));
const num = (field: number, v: bigint | number): Buffer => Buffer.concat([key(field, 0), varint(v)]);
const dbl = (field: number, v: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return Buffer.concat([key(field, 1), b]);
};

/** google.protobuf.Value holding a string. */
const stringValue = (s: string): Buffer => str(3, s);

/** A Value nesting `depth` Structs (or ListValues), built inside out without recursion. */
export function nestedValue(depth: number, list: boolean): Buffer {
  const inner = dbl(2, 1);
  const prefixes: Buffer[] = [];
  let size = inner.length;
  for (let i = 0; i < depth; i++) {
    let prefix: Buffer;
    if (list) {
      // Value{list_value: ListValue{values: [inner]}}
      const listBody = Buffer.concat([key(1, 2), varint(size)]);
      prefix = Buffer.concat([key(6, 2), varint(listBody.length + size), listBody]);
    } else {
      // Value{struct_value: Struct{fields: {"a": inner}}}
      const entryHead = Buffer.concat([str(1, 'a'), key(2, 2), varint(size)]);
      const entrySize = entryHead.length + size;
      const structHead = Buffer.concat([key(1, 2), varint(entrySize), entryHead]);
      prefix = Buffer.concat([key(5, 2), varint(structHead.length + size), structHead]);
    }
    prefixes.push(prefix);
    size += prefix.length;
  }
  return Buffer.concat([...prefixes.reverse(), inner]);
}

/** A Struct with one field `a` whose value is `value`. */
const structOf = (value: Buffer): Buffer => ld(1, Buffer.concat([str(1, 'a'), ld(2, value)]));

// --- cases ----------------------------------------------------------------------------------------

export type GrpcMethod = 'Invoke' | 'Stream' | 'Subscribe';

export interface GrpcCase {
  label: string;
  method: GrpcMethod;
  body: Buffer;
  metadata: Array<[string, string | Buffer]>;
}

type Content =
  | { kind: 'echo'; text: string }
  | { kind: 'deep'; depth: number; list: boolean }
  | { kind: 'huge-list'; n: number }
  | { kind: 'number'; v: number }
  | { kind: 'null-enum'; v: number }
  | { kind: 'absent' };

interface TaskPlan {
  id: string | Buffer;
  state: number;
  role: number;
  messages: number;
  parts: number;
  content: Content;
  metadataDepth: number;
  wrongWire: 'none' | 'id' | 'messages' | 'state' | 'parts' | 'content';
  unknown: 'none' | 'field 15' | 'field max' | 'field 0' | 'group' | 'wire 6' | 'wire 7';
}

const content: fc.Arbitrary<Content> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .string({ unit: 'grapheme', maxLength: 40 })
      .map((t) => ({ kind: 'echo' as const, text: `echo ${t}` })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 20_000 })), fc.boolean())
      .map(([depth, list]) => ({ kind: 'deep' as const, depth, list })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 200_000 }).map((n) => ({ kind: 'huge-list' as const, n })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(NaN, Infinity, -Infinity, -0, 1e308, 5e-324)
      .map((v) => ({ kind: 'number' as const, v })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(1, 7, -1, 2 ** 31).map((v) => ({ kind: 'null-enum' as const, v })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'absent' as const }) },
);

const enumValue = (valid: number[]): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...valid) },
    { weight: 2, arbitrary: fc.constantFrom(0, 9, 99, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 + 1) },
  );

const taskPlan: fc.Arbitrary<TaskPlan> = fc.record({
  id: fc.oneof(
    { weight: 8, arbitrary: fc.uuid().map((u) => `fz-${u}`) },
    { weight: 1, arbitrary: fc.constantFrom('', '__proto__', 'a'.repeat(70_000)) },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 16 })
        .map((b) => Buffer.concat([Buffer.from([0xff, 0xc3]), Buffer.from(b)])),
    },
  ),
  // SUBMITTED: the server refuses TASK_STATE_UNSPECIFIED (and so a Task without state) up front.
  state: enumValue([1]),
  role: enumValue([1]),
  messages: fc.oneof(
    { weight: 10, arbitrary: fc.constant(1) },
    { weight: 1, arbitrary: fc.constantFrom(0, 2, 1000, 100_000) },
  ),
  parts: fc.oneof(
    { weight: 10, arbitrary: fc.constant(1) },
    { weight: 1, arbitrary: fc.constantFrom(0, 50, 100_000) },
  ),
  content,
  metadataDepth: fc.oneof(
    { weight: 8, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20_000 }) },
  ),
  wrongWire: fc.oneof(
    { weight: 10, arbitrary: fc.constant('none' as const) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'id' as const,
        'messages' as const,
        'state' as const,
        'parts' as const,
        'content' as const,
      ),
    },
  ),
  unknown: fc.oneof(
    { weight: 10, arbitrary: fc.constant('none' as const) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'field 15' as const,
        'field max' as const,
        'field 0' as const,
        'group' as const,
        'wire 6' as const,
        'wire 7' as const,
      ),
    },
  ),
});

function encodeContent(c: Content, wrongWire: boolean): Buffer | undefined {
  if (wrongWire) return num(2, 5);
  switch (c.kind) {
    case 'echo':
      return ld(2, stringValue(c.text));
    case 'deep':
      return ld(2, nestedValue(c.depth, c.list));
    case 'huge-list': {
      const one = ld(1, dbl(2, 0));
      return ld(2, ld(6, Buffer.concat(new Array<Buffer>(c.n).fill(one))));
    }
    case 'number':
      return ld(2, dbl(2, c.v));
    case 'null-enum':
      return ld(2, num(1, c.v));
    case 'absent':
      return undefined;
  }
}

const MAX_REPEATED_BYTES = 8 * 1024 * 1024;

export function encodeTask(p: TaskPlan): Buffer {
  const part = Buffer.concat([
    p.wrongWire === 'parts' ? num(1, 1) : str(1, 'text'),
    encodeContent(p.content, p.wrongWire === 'content') ?? Buffer.alloc(0),
  ]);
  const message = Buffer.concat([
    str(1, 'm1'),
    num(2, p.role),
    ...(p.parts > 0 ? new Array<Buffer>(Math.min(p.parts, 1)).fill(ld(3, part)) : []),
    ...(p.parts > 1
      ? new Array<Buffer>(p.parts - 1).fill(ld(3, Buffer.concat([str(1, 'text'), ld(2, stringValue('x'))])))
      : []),
    str(4, '2026-01-01T00:00:00Z'),
  ]);
  const fields: Buffer[] = [
    p.wrongWire === 'id' ? num(1, 12345) : str(1, p.id),
    p.wrongWire === 'state' ? str(2, 'working') : num(2, p.state),
  ];
  // Repeated messages stay under 8 MiB in all (past the server's 4 MiB limit, not past the harness's memory).
  const messages = Math.max(1, Math.min(p.messages, Math.floor(MAX_REPEATED_BYTES / (message.length + 4))));
  if (p.messages > 0) fields.push(p.wrongWire === 'messages' ? num(3, 1) : ld(3, message));
  if (messages > 1) fields.push(...new Array<Buffer>(messages - 1).fill(ld(3, message)));
  if (p.metadataDepth > 0)
    fields.push(ld(5, structOf(nestedValue(p.metadataDepth, p.metadataDepth % 2 === 0))));
  fields.push(str(6, '2026-01-01T00:00:00Z'));
  switch (p.unknown) {
    case 'none':
      break;
    case 'field 15':
      fields.push(str(15, 'unknown'));
      break;
    case 'field max':
      fields.push(num(2 ** 29 - 1, 1));
      break;
    case 'field 0':
      fields.push(num(0, 1));
      break;
    case 'group':
      fields.push(key(9, 3), num(1, 1), key(9, 4));
      break;
    case 'wire 6':
      fields.push(key(9, 6), Buffer.from([1, 2, 3]));
      break;
    case 'wire 7':
      fields.push(key(9, 7), Buffer.from([1, 2, 3]));
      break;
  }
  return Buffer.concat(fields);
}

/** InvokeRequest operations other than send_task. */
const otherOperation = fc.oneof(
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.option(fc.string({ maxLength: 40 })))
    .map(([id, reason]) => ({
      label: 'cancel_task',
      body: ld(2, Buffer.concat([str(1, id), reason === null ? Buffer.alloc(0) : str(2, reason)])),
    })),
  fc.constant({ label: 'get_agent_card', body: ld(3, Buffer.alloc(0)) }),
  fc
    .tuple(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.option(fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 32 + 5, -1)),
    )
    .map(([id, h]) => ({
      label: `get_task history ${String(h)}`,
      body: ld(4, Buffer.concat([str(1, id), h === null ? Buffer.alloc(0) : num(2, h)])),
    })),
  fc
    .tuple(
      fc.option(fc.string({ maxLength: 20 })),
      fc.option(enumValue([1, 2, 3])),
      fc.option(fc.constantFrom(0, 1, 100, 101, 2 ** 32 - 1, -1)),
      fc.option(fc.oneof(fc.string({ maxLength: 60 }), fc.constant('!!!'))),
    )
    .map(([session, state, size, token]) => ({
      label: `list_tasks state ${String(state)} size ${String(size)}`,
      body: ld(
        5,
        Buffer.concat([
          session === null ? Buffer.alloc(0) : str(1, session),
          state === null ? Buffer.alloc(0) : num(2, state),
          size === null ? Buffer.alloc(0) : num(3, size),
          token === null ? Buffer.alloc(0) : str(4, token),
        ]),
      ),
    })),
  fc.constant({ label: 'empty InvokeRequest', body: Buffer.alloc(0) }),
  fc.constant({
    label: 'two oneof members',
    body: Buffer.concat([ld(3, Buffer.alloc(0)), ld(2, str(1, 'x'))]),
  }),
);

type Damage =
  'none' | 'truncate' | 'length lie' | 'truncated varint' | 'overlong varint' | 'random bytes' | 'zero bytes';

const damage: fc.Arbitrary<{ kind: Damage; at: number; bytes: Uint8Array }> = fc.record({
  kind: fc.oneof(
    { weight: 8, arbitrary: fc.constant('none' as const) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'truncate' as const,
        'length lie' as const,
        'truncated varint' as const,
        'overlong varint' as const,
        'random bytes' as const,
        'zero bytes' as const,
      ),
    },
  ),
  at: fc.nat(),
  bytes: fc.uint8Array({ minLength: 1, maxLength: 600 }),
});

function applyDamage(body: Buffer, d: { kind: Damage; at: number; bytes: Uint8Array }): Buffer {
  switch (d.kind) {
    case 'none':
      return body;
    case 'truncate':
      return body.subarray(0, body.length === 0 ? 0 : d.at % body.length);
    case 'length lie':
      // The outer field claims far more bytes than follow.
      return Buffer.concat([body.subarray(0, 1), varint(body.length * 4 + 1000), body.subarray(1)]);
    case 'truncated varint':
      return Buffer.concat([body, Buffer.from([0x10, 0xff, 0xff, 0xff])]);
    case 'overlong varint':
      return Buffer.concat([Buffer.from([0x10]), Buffer.alloc(11, 0xff), Buffer.from([0x01]), body]);
    case 'random bytes':
      return Buffer.from(d.bytes);
    case 'zero bytes':
      return Buffer.alloc(d.bytes.length);
  }
}

const metadata: fc.Arbitrary<Array<[string, string | Buffer]>> = fc.oneof(
  { weight: 10, arbitrary: fc.constant([] as Array<[string, string | Buffer]>) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Array<[string, string | Buffer]>>(
      [['x-tenant', '../../']],
      [['x-tenant', 'a'.repeat(200)]],
      [
        ['x-tenant', 'acme'],
        ['x-tenant', 'other'],
      ],
      [['authorization', 'Bearer garbage']],
      [['traceparent', 'zz-not-a-trace']],
      [['x-fuzz-bin', Buffer.from([0, 255, 1])]],
      [['x-fuzz', 'v'.repeat(6000)]],
    ),
  },
);

export const grpcCase: fc.Arbitrary<GrpcCase> = fc
  .tuple(
    fc.constantFrom<GrpcMethod>('Invoke', 'Invoke', 'Invoke', 'Stream', 'Stream', 'Subscribe'),
    fc.oneof(
      { weight: 4, arbitrary: taskPlan.map((p) => ({ plan: p as TaskPlan | undefined })) },
      { weight: 1, arbitrary: fc.constant({ plan: undefined }) },
    ),
    otherOperation,
    fc.record({
      id: fc.string({ unit: 'binary', maxLength: 30 }),
      after: fc.constantFrom(0, 1, 2 ** 32 - 1, -1, 2 ** 40),
    }),
    damage,
    metadata,
  )
  .map(([method, { plan }, other, sub, d, md]) => {
    let body: Buffer;
    let label: string;
    if (method === 'Subscribe') {
      body = Buffer.concat([str(1, sub.id), num(2, sub.after)]);
      label = `subscribe after ${sub.after}`;
    } else if (plan !== undefined) {
      body = ld(1, ld(1, encodeTask(plan)));
      label = describePlan(plan);
    } else {
      body = other.body;
      label = other.label;
    }
    body = applyDamage(body, d);
    const mdLabel = md.length > 0 ? ` | metadata ${md.map(([k]) => k).join(',')}` : '';
    return {
      label: `${method} ${label}${d.kind === 'none' ? '' : ` | ${d.kind}`}${mdLabel}`,
      method,
      body,
      metadata: md,
    };
  });

function describePlan(p: TaskPlan): string {
  const parts: string[] = ['send_task'];
  if (typeof p.id !== 'string') parts.push('id invalid UTF-8');
  else if (!p.id.startsWith('fz-')) parts.push(`id ${JSON.stringify(p.id.slice(0, 12))}`);
  if (p.state !== 0 && p.state !== 1) parts.push(`state ${p.state}`);
  if (p.role !== 1) parts.push(`role ${p.role}`);
  if (p.messages !== 1) parts.push(`${p.messages} messages`);
  if (p.parts !== 1) parts.push(`${p.parts} parts`);
  if (p.content.kind === 'deep')
    parts.push(`content nesting ${p.content.depth}${p.content.list ? ' (lists)' : ''}`);
  else if (p.content.kind !== 'echo') parts.push(`content ${p.content.kind}`);
  if (p.metadataDepth > 0) parts.push(`metadata nesting ${p.metadataDepth}`);
  if (p.wrongWire !== 'none') parts.push(`wrong wire type on ${p.wrongWire}`);
  if (p.unknown !== 'none') parts.push(`unknown ${p.unknown}`);
  return parts.join(', ');
}
