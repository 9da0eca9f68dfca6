/**
 * WebSocket cases: a handshake (usually a valid one) and a few frames, from well-formed request
 * frames carrying mutated tasks to frames that break the framing itself.
 */
import fc from 'fast-check';
import type { FrameSpec } from '../wire/ws-raw.js';
import { nestedJson, taskText } from './json-bodies.js';

export interface WsCase {
  label: string;
  path: string;
  headers: Array<[string, string]>;
  /** Handshake headers left out. */
  omit: string[];
  frames: FrameSpec[];
  /** Request ids sent in well-formed frames: their answers are awaited too. */
  ids: string[];
}

const TEXT = 0x1;
const BINARY = 0x2;
const CONTINUATION = 0x0;
const CLOSE = 0x8;
const PING = 0x9;
const PONG = 0xa;

const text = (s: string | Buffer): FrameSpec => ({
  opcode: TEXT,
  payload: Buffer.isBuffer(s) ? s : Buffer.from(s),
});

const op = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'task.send',
      'task.send',
      'task.send',
      'task.get',
      'task.list',
      'task.subscribe',
      'task.cancel',
      'agent.card',
      'call.abort',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'TASK.SEND', 'event', 'result', 'error', '__proto__', 'a'.repeat(5000)),
  },
);

const frameIdArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 1e9 }).map((n) => `r${n}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>('', null, 5, [], {}, true, '__proto__', 'x'.repeat(10_000)),
  },
);

/** A request frame's JSON with a mutated task (or other operands). */
const requestFrame = fc
  .tuple(
    op,
    frameIdArb,
    taskText,
    fc.oneof(fc.constant(undefined), fc.boolean(), fc.constantFrom<unknown>('yes', 1, null)),
    fc.record(
      {
        task_id: fc.oneof(
          fc.string({ unit: 'binary', maxLength: 20 }),
          fc.constantFrom<unknown>(null, 7, {}, []),
        ),
        after: fc.oneof(fc.integer(), fc.constantFrom<unknown>('1', -1, Infinity)),
        history_length: fc.oneof(fc.integer(), fc.constantFrom<unknown>(null, '2')),
        page_size: fc.oneof(fc.integer(), fc.constantFrom<unknown>(0, 1000)),
        reason: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom<unknown>({}, 5)),
        traceparent: fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom<unknown>(5, null)),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([o, id, task, stream, extra]) => {
    const fields: string[] = [`"op":${JSON.stringify(o)}`, `"id":${JSON.stringify(id) ?? 'null'}`];
    if (o === 'task.send') fields.push(`"task":${task.text}`);
    if (stream !== undefined) fields.push(`"stream":${JSON.stringify(stream)}`);
    for (const [k, v] of Object.entries(extra))
      fields.push(`${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`);
    const json = `{${fields.join(',')}}`;
    return {
      label: `${o} ${o === 'task.send' ? task.label : ''}`.trim(),
      json,
      id: typeof id === 'string' && id !== '' ? id : undefined,
    };
  });

type FrameGroup = { label: string; frames: FrameSpec[]; ids: string[] };

const frameGroup: fc.Arbitrary<FrameGroup> = fc.oneof(
  {
    weight: 10,
    arbitrary: requestFrame.map((f) => ({ label: f.label, frames: [text(f.json)], ids: f.id ? [f.id] : [] })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
        fc.constantFrom(
          '',
          'null',
          '[]',
          '"x"',
          '{"op":"task.send"}',
          '{"id":"a"}',
          '{"op":"task.send","id":"a"}',
        ),
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc
          .tuple(
            fc.integer({ min: 1, max: 20_000 }),
            fc.constantFrom('array' as const, 'object' as const, 'mixed' as const),
          )
          .map(([d, s]) => nestedJson(d, s)),
      )
      .map((s) => ({ label: `text ${JSON.stringify(s.slice(0, 30))}`, frames: [text(s)], ids: [] })),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 0, maxLength: 2000 }).map((b) => ({
      label: `binary ${b.length} bytes`,
      frames: [{ opcode: BINARY, payload: Buffer.from(b) }],
      ids: [],
    })),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => ({
      label: 'text with invalid UTF-8',
      frames: [
        text(Buffer.concat([Buffer.from('{"op":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(b)])),
      ],
      ids: [],
    })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 24 }).map((mb) => ({
      label: `huge text frame ${mb} MiB`,
      frames: [
        text(
          `{"op":"task.send","id":"huge","task":{"id":"huge-${mb}","messages":[{"id":"m","role":"user","parts":[{"type":"text","content":"echo ${'x'.repeat(mb * 1024 * 1024)}"}],"timestamp":"2026-01-01T00:00:00Z"}]}}`,
        ),
      ],
      ids: ['huge'],
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(2n ** 63n - 1n, 2n ** 40n, 2n ** 32n, 200_000_000n, 2n ** 63n).map((n) => ({
      label: `declared length ${n}`,
      frames: [{ opcode: TEXT, payload: Buffer.from('{"op":"agent.card","id":"x"}'), declaredLength: n }],
      ids: [],
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        requestFrame,
        fc.integer({ min: 2, max: 6 }),
        fc.constantFrom('ok', 'ping inside', 'no end', 'no start', 'text inside'),
      )
      .map(([f, n, how]) => {
        const bytes = Buffer.from(f.json);
        const step = Math.max(1, Math.ceil(bytes.length / n));
        const pieces: FrameSpec[] = [];
        for (let i = 0; i < bytes.length; i += step) {
          pieces.push({
            opcode: i === 0 ? TEXT : CONTINUATION,
            fin: i + step >= bytes.length,
            payload: bytes.subarray(i, i + step),
          });
        }
        if (how === 'ping inside' && pieces.length > 1)
          pieces.splice(1, 0, { opcode: PING, payload: Buffer.from('p') });
        if (how === 'text inside' && pieces.length > 1)
          pieces.splice(1, 0, text('{"op":"agent.card","id":"in"}'));
        if (how === 'no end') pieces[pieces.length - 1]!.fin = false;
        if (how === 'no start') pieces[0]!.opcode = CONTINUATION;
        return {
          label: `fragmented x${pieces.length} (${how}) ${f.label}`,
          frames: pieces,
          ids: how === 'ok' && f.id ? [f.id] : [],
        };
      }),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'reserved opcode 3',
        'reserved opcode 0xB',
        'rsv1',
        'rsv3',
        'unmasked',
        'ping 126 bytes',
        'fragmented ping',
        'pong',
        'ping',
        'close 1000',
        'close 999',
        'close 1005',
        'close 5000',
        'close 1-byte',
        'close bad utf8',
        'continuation alone',
      )
      .map((how): FrameGroup => {
        const card = Buffer.from('{"op":"agent.card","id":"c"}');
        const f: FrameSpec =
          how === 'reserved opcode 3'
            ? { opcode: 3, payload: card }
            : how === 'reserved opcode 0xB'
              ? { opcode: 0xb, payload: card }
              : how === 'rsv1'
                ? { opcode: TEXT, rsv: 4, payload: card }
                : how === 'rsv3'
                  ? { opcode: TEXT, rsv: 1, payload: card }
                  : how === 'unmasked'
                    ? { opcode: TEXT, masked: false, payload: card }
                    : how === 'ping 126 bytes'
                      ? { opcode: PING, payload: Buffer.alloc(126, 1) }
                      : how === 'fragmented ping'
                        ? { opcode: PING, fin: false, payload: Buffer.from('p') }
                        : how === 'pong'
                          ? { opcode: PONG, payload: Buffer.from('unsolicited') }
                          : how === 'ping'
                            ? { opcode: PING, payload: Buffer.from('hello') }
                            : how === 'continuation alone'
                              ? { opcode: CONTINUATION, payload: card }
                              : closeFrame(how);
        return { label: how, frames: [f], ids: [] };
      }),
  },
);

function closeFrame(how: string): FrameSpec {
  const code = (n: number, reason: Buffer = Buffer.alloc(0)): Buffer => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(n);
    return Buffer.concat([b, reason]);
  };
  if (how === 'close 1-byte') return { opcode: CLOSE, payload: Buffer.from([3]) };
  if (how === 'close bad utf8') return { opcode: CLOSE, payload: code(1000, Buffer.from([0xff, 0xfe])) };
  return { opcode: CLOSE, payload: code(Number(how.slice(6))) };
}

const handshakeTwist = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.constant({
      label: '',
      path: '/',
      headers: [] as Array<[string, string]>,
      omit: [] as string[],
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '/control',
        '/ws',
        '/ws/control',
        '/?api_key=x&tenant=acme',
        '/?tenant=%zz',
        '/?tenant=' + 'a'.repeat(300),
      )
      .map((path) => ({
        label: `path ${path.slice(0, 30)}`,
        path,
        headers: [] as Array<[string, string]>,
        omit: [] as string[],
      })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<{ label: string; headers: Array<[string, string]>; omit: string[] }>(
        { label: 'version 8', headers: [['Sec-WebSocket-Version', '8']], omit: ['sec-websocket-version'] },
        { label: 'no key', headers: [], omit: ['sec-websocket-key'] },
        { label: 'bad key', headers: [['Sec-WebSocket-Key', '!!!']], omit: ['sec-websocket-key'] },
        { label: 'no upgrade', headers: [], omit: ['upgrade'] },
        { label: 'upgrade h2c', headers: [['Upgrade', 'h2c']], omit: ['upgrade'] },
        {
          label: 'deflate offer',
          headers: [['Sec-WebSocket-Extensions', 'permessage-deflate; client_max_window_bits']],
          omit: [],
        },
        { label: 'garbage extension', headers: [['Sec-WebSocket-Extensions', 'x;;=;']], omit: [] },
        { label: 'protocols', headers: [['Sec-WebSocket-Protocol', 'a, b, , c']], omit: [] },
        {
          label: 'tenant twice',
          headers: [
            ['X-Tenant', 'a'],
            ['X-Tenant', 'b'],
          ],
          omit: [],
        },
        { label: 'bad tenant', headers: [['X-Tenant', '../../']], omit: [] },
        { label: 'huge header', headers: [['X-Fuzz', 'a'.repeat(40_000)]], omit: [] },
        { label: 'bad auth', headers: [['Authorization', 'Bearer ' + 'x'.repeat(500)]], omit: [] },
      )
      .map((t) => ({ ...t, path: '/' })),
  },
);

export const wsCase: fc.Arbitrary<WsCase> = fc
  .tuple(handshakeTwist, fc.array(frameGroup, { minLength: 1, maxLength: 4 }))
  .map(([h, groups]) => ({
    label: [h.label, ...groups.map((g) => g.label)].filter(Boolean).join(' + '),
    path: h.path,
    headers: h.headers,
    omit: h.omit,
    frames: groups.flatMap((g) => g.frames),
    ids: groups.flatMap((g) => g.ids),
  }));
