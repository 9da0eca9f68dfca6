/**
 * Malformed input per transport: generated requests sent to a fresh server per transport, each
 * answer checked against the oracles (no crash, no 5xx/INTERNAL/-32603, an answer or a close within
 * the hang limit, nothing internal leaked). Case `i` of a seed is always the same request, so
 * `--seed S --transport T --case i` replays it.
 */
import fc from 'fast-check';
import { encodeHttpCase, httpRequest, sseRequest, type HttpCase } from '../arbitraries/http-requests.js';
import { grpcCase, type GrpcCase } from '../arbitraries/protobuf.js';
import { wsCase, type WsCase } from '../arbitraries/ws-frames.js';
import { findLeaks, preview, type Finding, type FindingLog, type Oracle } from '../oracle.js';
import type { FuzzOptions, Target } from '../options.js';
import { ServerUnderTest } from '../server.js';
import { grpcClient, grpcServerStream, grpcUnary, toMetadata, type GrpcAnswer } from '../wire/grpc-raw.js';
import { sendRawHttp, type RawHttpAnswer } from '../wire/raw-http.js';
import { encodeFrame, FrameReader, handshake } from '../wire/ws-raw.js';
import type { Client } from '@grpc/grpc-js';

/** What one case produced: findings without the run's common fields, and a one-word outcome. */
interface CaseResult {
  outcome: string;
  findings: Array<Pick<Finding, 'oracle' | 'kind' | 'answer' | 'detail'>>;
  /** The full answer, printed when a case is replayed. */
  answer?: unknown;
}

export interface MalformedSummary {
  target: Target;
  cases: number;
  seconds: number;
  /** Outcomes by kind (`HTTP 400`, `grpc INVALID_ARGUMENT`, `ws close 1002` …). */
  outcomes: Record<string, number>;
  restarts: number;
}

/** A 32-bit mix of the run's seed, the target and the case index: every case has its own seed. */
export function caseSeed(seed: number, target: Target, index: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const c of target) h = Math.imul(h ^ c.charCodeAt(0), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ index, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x27d4eb2d) >>> 0;
  return (h ^ (h >>> 15)) & 0x7fffffff;
}

/** Case `index` of a target: biased toward edge values on even indexes, unbiased on odd ones. */
export function caseAt<T>(arbitrary: fc.Arbitrary<T>, seed: number, target: Target, index: number): T {
  return fc.sample(arbitrary, {
    seed: caseSeed(seed, target, index),
    numRuns: 1,
    unbiased: index % 2 === 1,
  })[0]!;
}

/** One request answered slower than this costs the server more than a request should. */
const SLOW_ANSWER_MS = 5000;

const INTERNAL_CODE = /"code"\s*:\s*"INTERNAL"/;
const JSONRPC_INTERNAL = /"code"\s*:\s*-32603\b/;

function httpFindings(answer: RawHttpAnswer, request: Buffer, rpc: boolean, isHead: boolean): CaseResult {
  const findings: CaseResult['findings'] = [];
  const body = answer.body.toString('utf8');
  const head = Object.entries(answer.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
  const shown = { status: answer.status, headers: answer.headers, body: preview(body) };
  const requestText = request.toString('utf8');
  if (answer.timedOut) {
    findings.push({
      oracle: 'hang',
      kind: 'no answer or close',
      answer: shown,
      detail: `waited ${answer.elapsedMs} ms`,
    });
  }
  if (answer.status >= 500)
    findings.push({ oracle: 'server-error', kind: `HTTP ${answer.status}`, answer: shown });
  if (!answer.timedOut && answer.elapsedMs > SLOW_ANSWER_MS)
    findings.push({
      oracle: 'resources',
      kind: `answer took over ${SLOW_ANSWER_MS / 1000} s`,
      answer: shown,
      detail: `${answer.elapsedMs} ms`,
    });
  if (INTERNAL_CODE.test(body) && !INTERNAL_CODE.test(requestText))
    findings.push({ oracle: 'server-error', kind: 'INTERNAL error code', answer: shown });
  if (rpc && JSONRPC_INTERNAL.test(body) && !JSONRPC_INTERNAL.test(requestText))
    findings.push({ oracle: 'server-error', kind: 'JSON-RPC -32603', answer: shown });
  for (const leak of findLeaks(`${head}\n${body}`, request)) {
    findings.push({
      oracle: 'leak',
      kind: `leak: ${leak.name}`,
      answer: shown,
      detail: `${leak.match} — in: ${leak.context}`,
    });
  }
  // A HEAD answer has no body by definition.
  if (answer.status >= 400 && !answer.timedOut && !isHead) {
    let ok: boolean;
    try {
      const json = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
      ok = typeof json.error?.code === 'string' && typeof json.error.message === 'string';
    } catch {
      ok = false;
    }
    if (!ok) {
      const type = answer.headers['content-type']?.split(';')[0] ?? 'no content-type';
      findings.push({
        oracle: 'error-body',
        kind: `HTTP ${answer.status} ${body.length === 0 ? 'empty body' : type}`,
        answer: shown,
      });
    }
  }
  const outcome = answer.timedOut
    ? 'timeout'
    : answer.status > 0
      ? `HTTP ${answer.status}`
      : answer.closedEarly
        ? `closed without answer${answer.error ? ` (${answer.error})` : ''}`
        : 'no answer';
  return {
    outcome,
    findings,
    answer: { ...shown, body: preview(body, 20_000), elapsedMs: answer.elapsedMs },
  };
}

async function runHttpCase(
  c: HttpCase,
  server: ServerUnderTest,
  url: string,
  hangMs: number,
  rpc: boolean,
): Promise<CaseResult> {
  const { hostname, port } = new URL(url);
  const { bytes, incomplete } = encodeHttpCase(c);
  const answer = await sendRawHttp(
    hostname,
    Number(port),
    { bytes, incomplete, head: c.method === 'HEAD' },
    hangMs,
  );
  return httpFindings(answer, bytes, rpc, c.method === 'HEAD');
}

const PROBE_ID = 'fuzz-probe';
const PROBE = Buffer.from(JSON.stringify({ op: 'agent.card', id: PROBE_ID }));

async function runWsCase(c: WsCase, url: string, hangMs: number): Promise<CaseResult> {
  const { hostname, port } = new URL(url);
  const findings: CaseResult['findings'] = [];
  const requestBytes = Buffer.concat([
    Buffer.from(c.path + JSON.stringify(c.headers)),
    ...c.frames.map((f) => f.payload),
  ]);
  let hs;
  try {
    hs = await handshake(hostname, Number(port), c.path, c.headers, hangMs, new Set(c.omit));
  } catch {
    return { outcome: 'timeout', findings: [{ oracle: 'hang', kind: 'handshake unanswered' }] };
  }
  if (hs.status !== 101) {
    hs.socket.destroy();
    const text = `${hs.head}\n${hs.rest.toString('utf8')}`;
    if (hs.status >= 500)
      findings.push({ oracle: 'server-error', kind: `handshake HTTP ${hs.status}`, answer: preview(text) });
    for (const leak of findLeaks(text, requestBytes))
      findings.push({
        oracle: 'leak',
        kind: `leak: ${leak.name}`,
        answer: preview(text),
        detail: `${leak.match} — in: ${leak.context}`,
      });
    return {
      outcome: hs.status === 0 ? 'handshake closed' : `handshake HTTP ${hs.status}`,
      findings,
      answer: preview(text),
    };
  }
  const socket = hs.socket;
  const reader = new FrameReader();
  const texts: string[] = [];
  let closeCode: number | undefined;
  let closeReason = '';
  const pending = new Set(c.ids);
  let probeAnswered = false;
  const result = await new Promise<'answered' | 'closed' | 'timeout'>((resolve) => {
    let grace: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => resolve('timeout'), hangMs);
    const done = (how: 'answered' | 'closed'): void => {
      clearTimeout(timer);
      clearTimeout(grace);
      resolve(how);
    };
    const onFrames = (chunk: Buffer): void => {
      for (const frame of reader.push(chunk)) {
        if (frame.opcode === 0x8) {
          closeCode = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005;
          closeReason = frame.payload.subarray(2).toString('utf8');
          continue;
        }
        if (frame.opcode !== 0x1) continue;
        const text = frame.payload.toString('utf8');
        texts.push(text);
        let id: unknown;
        let op: unknown;
        try {
          ({ id, op } = JSON.parse(text) as { id?: unknown; op?: unknown });
        } catch {
          // not JSON: the oracles below still read it
        }
        if (id === PROBE_ID) probeAnswered = true;
        if (typeof id === 'string' && (op === 'result' || op === 'error')) pending.delete(id);
      }
      if (probeAnswered && pending.size === 0) done('answered');
      else if (probeAnswered && grace === undefined) grace = setTimeout(() => done('answered'), 50);
    };
    if (hs.rest.length > 0) onFrames(hs.rest);
    socket.on('data', onFrames);
    socket.on('close', () => done('closed'));
    socket.on('error', () => undefined);
    for (const frame of c.frames) socket.write(encodeFrame(frame));
    socket.write(encodeFrame({ opcode: 0x1, payload: PROBE }));
  });
  socket.destroy();
  const allText = texts.join('\n');
  const shown = { frames: texts.slice(0, 5).map((t) => preview(t, 500)), closeCode, closeReason };
  if (result === 'timeout')
    findings.push({ oracle: 'hang', kind: 'probe unanswered, socket open', answer: shown });
  if (closeCode === 1011) findings.push({ oracle: 'server-error', kind: 'ws close 1011', answer: shown });
  if (INTERNAL_CODE.test(allText) && !INTERNAL_CODE.test(requestBytes.toString('utf8')))
    findings.push({ oracle: 'server-error', kind: 'INTERNAL error frame', answer: shown });
  for (const leak of findLeaks(`${allText}\n${closeReason}`, requestBytes))
    findings.push({
      oracle: 'leak',
      kind: `leak: ${leak.name}`,
      answer: shown,
      detail: `${leak.match} — in: ${leak.context}`,
    });
  const outcome =
    result === 'timeout'
      ? 'timeout'
      : closeCode !== undefined
        ? `ws close ${closeCode}`
        : result === 'closed'
          ? 'ws closed (no close frame)'
          : 'ws answered';
  return { outcome, findings, answer: { ...shown, frames: texts.map((t) => preview(t, 5000)) } };
}

async function runGrpcCase(c: GrpcCase, client: Client, hangMs: number): Promise<CaseResult> {
  const md = toMetadata(c.metadata);
  const answer: GrpcAnswer =
    c.method === 'Invoke'
      ? await grpcUnary(client, c.method, c.body, md, hangMs)
      : await grpcServerStream(client, c.method, c.body, md, hangMs);
  const findings: CaseResult['findings'] = [];
  const messagesText = answer.messages.map((m) => m.toString('latin1')).join('\n');
  const shown = {
    code: answer.codeName,
    details: preview(answer.details, 500),
    metadata: answer.metadata,
    messages: answer.messages.length,
  };
  if (answer.codeName !== 'DEADLINE_EXCEEDED' && answer.elapsedMs > SLOW_ANSWER_MS)
    findings.push({
      oracle: 'resources',
      kind: `answer took over ${SLOW_ANSWER_MS / 1000} s`,
      answer: shown,
      detail: `${answer.elapsedMs} ms`,
    });
  if (answer.codeName === 'DEADLINE_EXCEEDED')
    findings.push({ oracle: 'hang', kind: 'gRPC deadline passed', answer: shown });
  if (answer.codeName === 'INTERNAL' || answer.codeName === 'UNKNOWN')
    findings.push({ oracle: 'server-error', kind: `gRPC ${answer.codeName}`, answer: shown });
  else if (answer.metadata['agent-error-code'] === 'INTERNAL')
    findings.push({ oracle: 'server-error', kind: 'agent-error-code INTERNAL', answer: shown });
  if (/INTERNAL/.test(messagesText) && !c.body.toString('latin1').includes('INTERNAL'))
    findings.push({
      oracle: 'server-error',
      kind: 'INTERNAL in a streamed event',
      answer: { ...shown, text: preview(messagesText, 500) },
    });
  const text = `${answer.details}\n${JSON.stringify(answer.metadata)}\n${messagesText}`;
  for (const leak of findLeaks(text, c.body))
    findings.push({
      oracle: 'leak',
      kind: `leak: ${leak.name}`,
      answer: shown,
      detail: `${leak.match} — in: ${leak.context}`,
    });
  return {
    outcome: `grpc ${answer.codeName}`,
    findings,
    answer: { ...shown, text: preview(messagesText, 5000) },
  };
}

interface TargetSpec<C> {
  arbitrary: fc.Arbitrary<C>;
  env: Record<string, string>;
  label(c: C): string;
  request(c: C): unknown;
  open(server: ServerUnderTest): { run(c: C): Promise<CaseResult>; close(): void };
}

function httpSpec(env: Record<string, string>, rpc: boolean): TargetSpec<HttpCase> {
  return {
    arbitrary: rpc ? sseRequest : httpRequest,
    env,
    label: (c) => c.label,
    request: (c) => preview(encodeHttpCase(c).bytes),
    open: (server) => ({
      run: (c) => runHttpCase(c, server, rpc ? server.urls.sse : server.urls.http, HANG.ms, rpc),
      close: () => undefined,
    }),
  };
}

/** The hang limit of the running target (set per run). */
const HANG = { ms: 10_000 };

const SPECS: { [T in Target]: TargetSpec<HttpCase> | TargetSpec<WsCase> | TargetSpec<GrpcCase> } = {
  'http-node': httpSpec({ AGENT_HTTP_BACKEND: 'node' }, false),
  'http-express': httpSpec({ AGENT_HTTP_BACKEND: 'express' }, false),
  sse: httpSpec({}, true),
  ws: {
    arbitrary: wsCase,
    env: {},
    label: (c) => c.label,
    request: (c) => ({
      path: c.path,
      headers: c.headers.map(([k, v]) => [k, preview(v, 200)]),
      omit: c.omit,
      frames: c.frames.map((f) => ({
        ...f,
        payload: preview(f.payload, 500),
        declaredLength: f.declaredLength?.toString(),
      })),
    }),
    open: (server) => ({ run: (c) => runWsCase(c, server.urls.ws, HANG.ms), close: () => undefined }),
  } satisfies TargetSpec<WsCase>,
  grpc: {
    arbitrary: grpcCase,
    env: {},
    label: (c) => c.label,
    request: (c) => ({
      method: c.method,
      bodyBase64:
        c.body.length > 3000
          ? `${c.body.subarray(0, 3000).toString('base64')}… (${c.body.length} bytes)`
          : c.body.toString('base64'),
      metadata: c.metadata.map(([k, v]) => [k, preview(Buffer.isBuffer(v) ? v.toString('base64') : v, 200)]),
    }),
    open: (server) => {
      const client = grpcClient(server.urls.grpc);
      return { run: (c) => runGrpcCase(c, client, HANG.ms), close: () => client.close() };
    },
  } satisfies TargetSpec<GrpcCase>,
};

/** How often (in cases) the server's health is checked between cases. */
const HEALTH_EVERY = 100;

export async function runMalformed(
  target: Target,
  options: FuzzOptions,
  findings: FindingLog,
): Promise<MalformedSummary> {
  HANG.ms = options.hangMs;
  const spec = SPECS[target] as TargetSpec<unknown>;
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  const outcomes: Record<string, number> = {};
  let server = await ServerUnderTest.start(spec.env);
  let session = spec.open(server);
  let restarts = 0;
  let next = options.caseIndex ?? 0;
  const last = options.caseIndex ?? options.count - 1;
  let done = 0;
  /** Cases sent since the last health check: the suspects when the server is found dead. */
  let recent: Array<{ index: number; label: string; request: unknown }> = [];
  const record = (
    index: number,
    c: unknown,
    result: Pick<Finding, 'oracle' | 'kind' | 'answer' | 'detail'>,
  ): void => {
    findings.add({
      ...result,
      target,
      seed: options.seed,
      caseIndex: index,
      label: spec.label(c),
      request: spec.request(c),
    });
  };
  let checking: Promise<void> | undefined;
  const checkHealth = async (): Promise<void> => {
    const alive = server.alive;
    const healthy = alive && (await server.healthy(options.hangMs));
    if (healthy) {
      recent = [];
      return;
    }
    const oracle: Oracle = 'crash';
    findings.add({
      oracle,
      kind: alive
        ? '/healthz unanswered'
        : `process exited (${server.exit?.signal ?? `code ${server.exit?.code}`})`,
      target,
      seed: options.seed,
      detail: `stderr tail: ${server.stderr().slice(-3000)}`,
      request: recent.slice(-20),
    });
    options.log(
      `  ${target}: server ${alive ? 'unhealthy' : 'exited'}; restarting (suspects: cases ${recent.map((r) => r.index).join(', ')})`,
    );
    session.close();
    await server.stop('SIGKILL');
    server = await ServerUnderTest.start(spec.env);
    session = spec.open(server);
    restarts++;
    recent = [];
  };
  const worker = async (): Promise<void> => {
    while (next <= last && (options.caseIndex !== undefined || Date.now() < deadline)) {
      const index = next++;
      const c = caseAt(spec.arbitrary, options.seed, target, index);
      recent.push({ index, label: spec.label(c), request: spec.request(c) });
      let result: CaseResult;
      try {
        result = await session.run(c);
      } catch (error) {
        result = { outcome: `harness error: ${(error as Error).message}`, findings: [] };
      }
      outcomes[result.outcome] = (outcomes[result.outcome] ?? 0) + 1;
      for (const f of result.findings) record(index, c, f);
      if (options.caseIndex !== undefined) {
        options.log(`case ${index}: ${spec.label(c)}`);
        options.log(`request: ${JSON.stringify(spec.request(c), null, 2)}`);
        options.log(`answer (${result.outcome}): ${JSON.stringify(result.answer, null, 2)}`);
        options.log(`findings: ${JSON.stringify(result.findings.map((f) => `${f.oracle}: ${f.kind}`))}`);
      }
      done++;
      if (done % HEALTH_EVERY === 0 || !server.alive) {
        checking ??= checkHealth().finally(() => (checking = undefined));
        await checking;
      }
    }
  };
  await Promise.all(
    Array.from({ length: options.caseIndex !== undefined ? 1 : options.concurrency }, () => worker()),
  );
  await checkHealth();
  session.close();
  await server.stop();
  const seconds = (Date.now() - started) / 1000;
  return { target, cases: done, seconds, outcomes, restarts };
}
