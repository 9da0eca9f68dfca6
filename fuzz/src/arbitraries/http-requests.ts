/**
 * Whole HTTP/1.1 requests as bytes: methods, request targets (absolute-form, `..`, trailing
 * slashes, huge), headers (huge, many, duplicated, contradictory framing and encodings) and bodies
 * from {@link taskBody}. The SSE JSON-RPC wire uses the same builder with JSON-RPC envelopes.
 */
import fc from 'fast-check';
import { echoTask, taskBody, taskText, type Body } from './json-bodies.js';

export interface HttpCase {
  label: string;
  method: string;
  target: string;
  version: string;
  headers: Array<[string, string]>;
  body: Buffer;
  framing: Framing;
}

type Framing =
  | { kind: 'length' }
  | { kind: 'none' }
  | { kind: 'chunked'; pieces: number }
  | { kind: 'length-wrong'; delta: number }
  | { kind: 'length-text'; value: string }
  | { kind: 'length-twice'; other: number }
  | { kind: 'chunked-and-length' }
  | { kind: 'chunked-broken'; how: 'size' | 'no-end' | 'extension' | 'trailer' };

const ROUTES_POST = ['/tasks/', '/tasks', '/tasks/stream', '/tasks/cancel', '/rpc', '/tasks/stream/'];
const ROUTES_GET = [
  '/tasks/fz-1',
  '/tasks?page_size=1',
  '/tasks/fz-1/events',
  '/.well-known/agent.json',
  '/healthz',
  '/readyz',
  '/',
  '/tasks/%2e%2e/healthz',
];

/** A request target: the routes, twisted. */
const target: fc.Arbitrary<{ label: string; target: string; method: string }> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...ROUTES_POST).map((p) => ({ p, method: 'POST' })),
      fc.constantFrom(...ROUTES_GET).map((p) => ({ p, method: 'GET' })),
    ),
    fc.oneof(
      { weight: 6, arbitrary: fc.constant('as is') },
      {
        weight: 4,
        arbitrary: fc.constantFrom(
          'trailing slashes',
          'double slash',
          'dot segments',
          'absolute-form',
          'absolute-form other host',
          'asterisk',
          'encoded',
          'upper case',
          'query junk',
          'fragment',
          'no leading slash',
          'backslashes',
          'raw bytes',
          'NUL',
        ),
      },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 120 }).map((kb) => `huge ${kb}`) },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.integer({ min: -5, max: 2 ** 40 }).map((n) => `page_size ${n}`),
          fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `id ${encodeURIComponent(s)}`),
        ),
      },
    ),
  )
  .map(([{ p, method }, twist]) => {
    let t = p;
    if (twist === 'trailing slashes') t = `${p.replace(/\/$/, '')}///`;
    else if (twist === 'double slash') t = `/${p}`;
    else if (twist === 'dot segments') t = `/x/..${p}`.replace('/tasks', '/tasks/../tasks/./');
    else if (twist === 'absolute-form') t = `http://127.0.0.1${p}`;
    else if (twist === 'absolute-form other host') t = `http://evil.example:8080${p}`;
    else if (twist === 'asterisk') t = '*';
    else if (twist === 'encoded') t = p.replace(/[a-z]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
    else if (twist === 'upper case') t = p.toUpperCase();
    else if (twist === 'query junk') t = `${p}?%zz=%&a=1&a=2&__proto__[x]=1&history_length=-1&after=1e400`;
    else if (twist === 'fragment') t = `${p}#frag`;
    else if (twist === 'no leading slash') t = p.slice(1);
    else if (twist === 'backslashes') t = p.replace(/\//g, '\\');
    else if (twist === 'raw bytes') t = `${p}\u00ff\u00fe`;
    else if (twist === 'NUL') t = `${p}%00`;
    else if (twist.startsWith('huge ')) t = `${p}${'/a'.repeat(Number(twist.slice(5)) * 512)}`;
    else if (twist.startsWith('page_size '))
      t = `/tasks?page_size=${twist.slice(10)}&page_token=${'z'.repeat(40)}`;
    else if (twist.startsWith('id ')) t = `/tasks/${twist.slice(3) || '%'}?history_length=99999999999`;
    return { label: `${method} ${p} (${twist})`, target: t, method };
  });

const method: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'GET',
      'POST',
      'PUT',
      'DELETE',
      'PATCH',
      'HEAD',
      'OPTIONS',
      'TRACE',
      'CONNECT',
      'post',
      'PRI',
      'PROPFIND',
      'GETT',
      'P0ST',
      '',
    ),
  },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json-rpc',
  '',
  'application/*',
  'application/json, text/plain',
);

/** Extra headers: each generator gives a list of [name, value] pairs. */
const extraHeaders: fc.Arbitrary<{ label: string; headers: Array<[string, string]> }> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ label: '', headers: [] as Array<[string, string]> }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'gzip',
        'deflate',
        'br',
        'identity',
        'gzip, identity',
        'x-unknown',
        'identity, identity',
        '',
      )
      .map((v) => ({
        label: `content-encoding ${v}`,
        headers: [['Content-Encoding', v]] as Array<[string, string]>,
      })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 96 }).map((kb) => ({
      label: `${kb} KiB header`,
      headers: [['X-Fuzz', 'a'.repeat(kb * 1024)]] as Array<[string, string]>,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 5000 }).map((n) => ({
      label: `${n} headers`,
      headers: Array.from({ length: n }, (_, i) => [`X-Fuzz-${i}`, 'v'] as [string, string]),
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'X-Tenant',
        'Authorization',
        'Host',
        'Content-Type',
        'Last-Event-ID',
        'traceparent',
        'Accept',
        'Connection',
        'Expect',
        'Upgrade',
      )
      .chain((name) =>
        fc
          .array(
            fc.oneof(
              fc.constantFrom(
                '',
                'acme',
                'a'.repeat(200),
                '../x',
                'Bearer x',
                'Basic !!!',
                '00-00000000000000000000000000000000-0000000000000000-00',
                '100-continue',
                'upgrade',
                'keep-alive',
                '-1',
                '1e400',
                'websocket',
                'text/event-stream',
                'h2c',
              ),
              fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
            ),
            { minLength: 1, maxLength: 3 },
          )
          .map((values) => ({
            label: `${name} x${values.length}`,
            headers: values.map((v) => [name, v] as [string, string]),
          })),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        ['X Bad Name', 'v'],
        ['X-Fuzz', 'line\r\n folded'],
        ['X-Fuzz', 'bare\nnewline'],
        ['X-Fuzz', 'nul\u0000byte'],
        ['X-Fuzz', 'latin \u00ff\u00e9'],
        [':authority', 'x'],
        ['', 'empty name'],
        ['X-Fuzz', ' \t '],
      )
      .map(([name, value]) => ({
        label: `bad header ${JSON.stringify(name)}`,
        headers: [[name, value]] as Array<[string, string]>,
      })),
  },
);

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'length' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 1, max: 8 }).map((pieces) => ({ kind: 'chunked' as const, pieces })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.integer({ min: -50, max: -1 }), fc.integer({ min: 1, max: 50 }))
      .map((delta) => ({ kind: 'length-wrong' as const, delta })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('-1', 'abc', '1e3', '0x10', '99999999999999999999', '', ' 5', '+5', '5, 6', '5.0')
      .map((value) => ({ kind: 'length-text' as const, value })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 100 }).map((other) => ({ kind: 'length-twice' as const, other })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'chunked-and-length' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('size' as const, 'no-end' as const, 'extension' as const, 'trailer' as const)
      .map((how) => ({ kind: 'chunked-broken' as const, how })),
  },
);

const version = fc.oneof(
  { weight: 20, arbitrary: fc.constant('HTTP/1.1') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'HTTP/9.9', 'http/1.1', ''),
  },
);

/** Builds a request from parts; `body` is sent on every method (a GET with a body is a case too). */
export function httpCase(
  base: { label: string; target: string; method: string },
  m: string | undefined,
  body: Body,
  ct: string,
  extra: { label: string; headers: Array<[string, string]> },
  f: Framing,
  v: string,
): HttpCase {
  const theMethod = m ?? base.method;
  const sendsBody = theMethod !== 'GET' && theMethod !== 'HEAD' ? true : m !== undefined;
  const headers: Array<[string, string]> = [['Host', '127.0.0.1']];
  if (sendsBody && ct !== '') headers.push(['Content-Type', ct]);
  headers.push(...extra.headers);
  headers.push(['Connection', 'close']);
  const labels = [base.label, m !== undefined ? `method ${JSON.stringify(m)}` : '', extra.label, v];
  if (sendsBody) labels.push(f.kind, body.label);
  return {
    label: labels.filter((l) => l !== '' && l !== 'length' && l !== 'HTTP/1.1').join(' | '),
    method: theMethod,
    target: base.target,
    version: v,
    headers,
    body: sendsBody ? body.bytes : Buffer.alloc(0),
    framing: sendsBody ? f : { kind: 'length' },
  };
}

/** The bytes of a case, and whether it is deliberately incomplete (the server should wait, then give up). */
export function encodeHttpCase(c: HttpCase): { bytes: Buffer; incomplete: boolean } {
  const head: string[] = [`${c.method} ${c.target}${c.version === '' ? '' : ` ${c.version}`}`];
  for (const [name, value] of c.headers) head.push(`${name}: ${value}`);
  let body = c.body;
  let incomplete = false;
  const f = c.framing;
  switch (f.kind) {
    case 'length':
      if (body.length > 0 || c.method === 'POST') head.push(`Content-Length: ${body.length}`);
      break;
    case 'none':
      break;
    case 'length-wrong':
      head.push(`Content-Length: ${Math.max(0, body.length + f.delta)}`);
      if (f.delta > 0) incomplete = true;
      break;
    case 'length-text':
      // Some of these parse as a length (' 5', '+5'): the server may rightly wait for more bytes.
      head.push(`Content-Length: ${f.value}`);
      incomplete = true;
      break;
    case 'length-twice':
      head.push(`Content-Length: ${body.length}`, `Content-Length: ${f.other}`);
      break;
    case 'chunked':
    case 'chunked-and-length':
    case 'chunked-broken': {
      head.push('Transfer-Encoding: chunked');
      if (f.kind === 'chunked-and-length') head.push(`Content-Length: ${body.length}`);
      const pieces = f.kind === 'chunked' ? f.pieces : 2;
      const step = Math.max(1, Math.ceil(body.length / pieces));
      const parts: Buffer[] = [];
      for (let i = 0; i < body.length; i += step) {
        const piece = body.subarray(i, i + step);
        const size =
          f.kind === 'chunked-broken' && f.how === 'size' && i === 0
            ? 'zz'
            : f.kind === 'chunked-broken' && f.how === 'extension'
              ? `${piece.length.toString(16)};ext="${'e'.repeat(100)}"`
              : piece.length.toString(16);
        parts.push(Buffer.from(`${size}\r\n`), piece, Buffer.from('\r\n'));
      }
      if (f.kind === 'chunked-broken' && f.how === 'no-end') incomplete = true;
      else if (f.kind === 'chunked-broken' && f.how === 'trailer')
        parts.push(Buffer.from('0\r\nX-Trailer: 1\r\n\r\n'));
      else parts.push(Buffer.from('0\r\n\r\n'));
      body = Buffer.concat(parts);
      break;
    }
  }
  const bytes = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
  return { bytes, incomplete };
}

/** A malformed (or valid) HTTP request against the task routes. */
export const httpRequest: fc.Arbitrary<HttpCase> = fc
  .tuple(target, method, taskBody, contentType, extraHeaders, framing, version)
  .map(([t, m, body, ct, extra, f, v]) => httpCase(t, m, body, ct, extra, f, v));

/** A JSON-RPC id: valid ones, and the kinds the envelope check must refuse. */
const rpcId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'id-1', '', 1.5, -0, true, [], {}, 1e308) },
);

const rpcMethod = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'tasks/send',
      'tasks/send',
      'tasks/send',
      'tasks/cancel',
      'tasks/get',
      'tasks/list',
      'agent/card',
      'tasks/stream',
      'tasks/resubscribe',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'TASKS/SEND',
      'tasks/',
      '__proto__',
      'constructor',
      'toString',
      'rpc.discover',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

/** JSON-RPC params as raw JSON text, built around a (mutated) task. */
const rpcParams = fc.oneof(
  { weight: 6, arbitrary: taskText.map((t) => ({ label: t.label, text: `{"task":${t.text}}` })) },
  { weight: 1, arbitrary: taskText.map((t) => ({ label: `bare ${t.label}`, text: t.text })) },
  {
    weight: 2,
    arbitrary: fc
      .record(
        {
          task_id: fc.oneof(
            fc.string({ unit: 'binary', maxLength: 20 }),
            fc.constantFrom<unknown>(null, 1, [], {}),
          ),
          history_length: fc.oneof(fc.integer(), fc.constantFrom<unknown>(-1, Infinity, '5', null)),
          after: fc.oneof(fc.integer(), fc.constantFrom<unknown>(-1, 'x', 2 ** 53)),
          page_size: fc.oneof(fc.integer(), fc.constantFrom<unknown>(0, 101, '50', null)),
          state: fc.oneof(fc.constantFrom<unknown>('working', 'bogus', 7, null)),
          page_token: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom<unknown>('!!!', 5)),
        },
        { requiredKeys: [] },
      )
      .map((p) => ({ label: `params ${JSON.stringify(p).slice(0, 60)}`, text: JSON.stringify(p) ?? '{}' })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('null', '"params"', '1', '[]', '[{"task":{}}]', 'true')
      .map((text) => ({ label: `params ${text}`, text })),
  },
);

const envelopeTwist = fc.constantFrom(
  'valid',
  'valid',
  'valid',
  'valid',
  'no jsonrpc',
  'jsonrpc 1.0',
  'jsonrpc number',
  'no method',
  'notification',
  'extra fields',
  'duplicate method',
);

/** One JSON-RPC envelope as text. */
export const rpcEnvelope = fc
  .tuple(rpcId, rpcMethod, rpcParams, envelopeTwist)
  .map(([id, m, params, twist]) => {
    const parts: string[] = [];
    if (twist === 'jsonrpc 1.0') parts.push('"jsonrpc":"1.0"');
    else if (twist === 'jsonrpc number') parts.push('"jsonrpc":2.0');
    else if (twist !== 'no jsonrpc') parts.push('"jsonrpc":"2.0"');
    if (twist !== 'notification') parts.push(`"id":${JSON.stringify(id) ?? 'null'}`);
    if (twist !== 'no method') parts.push(`"method":${JSON.stringify(m)}`);
    if (twist === 'duplicate method') parts.push('"method":"tasks/cancel"');
    parts.push(`"params":${params.text}`);
    if (twist === 'extra fields') parts.push('"__proto__":{"x":1},"result":1,"error":{}');
    return { label: `${m} ${twist} ${params.label}`, method: m, text: `{${parts.join(',')}}` };
  });

/** A body for `/rpc` or `/tasks/stream` on the SSE JSON-RPC wire: one envelope, a batch, or damage. */
const rpcBody: fc.Arbitrary<Body & { route: string }> = fc.oneof(
  {
    weight: 6,
    arbitrary: rpcEnvelope.map((e) => ({
      label: e.label,
      bytes: Buffer.from(e.text),
      route: e.method === 'tasks/stream' || e.method === 'tasks/resubscribe' ? '/tasks/stream' : '/rpc',
    })),
  },
  {
    weight: 2,
    arbitrary: fc.array(rpcEnvelope, { minLength: 0, maxLength: 40 }).map((list) => ({
      label: `batch of ${list.length}`,
      bytes: Buffer.from(`[${list.map((e) => e.text).join(',')}]`),
      route: '/rpc',
    })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 5000 }).map((n) => ({
      label: `batch of ${n} valid sends`,
      bytes: Buffer.from(
        `[${Array.from({ length: n }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tasks/send', params: { task: echoTask(`fz-batch-${i}`) } })).join(',')}]`,
      ),
      route: '/rpc',
    })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(taskBody, fc.constantFrom('/rpc', '/tasks/stream'))
      .map(([b, route]) => ({ label: `raw ${b.label}`, bytes: b.bytes, route })),
  },
);

/** A malformed (or valid) request for the SSE JSON-RPC server. */
export const sseRequest: fc.Arbitrary<HttpCase> = fc
  .tuple(
    rpcBody,
    fc.oneof(
      { weight: 6, arbitrary: fc.constant('as is') },
      { weight: 1, arbitrary: target.map((t) => t.target) },
    ),
    method,
    contentType,
    extraHeaders,
    framing,
    version,
  )
  .map(([body, route, m, ct, extra, f, v]) => {
    const t = route === 'as is' ? body.route : route;
    return httpCase({ label: `POST ${t}`, target: t, method: 'POST' }, m, body, ct, extra, f, v);
  });
