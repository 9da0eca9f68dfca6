import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ConcurrencyLimit,
  ResourceExhaustedError,
  ValidationError,
  ValueError,
  type Logger,
} from '@agent/core';
import type { A2AStreamResponse } from '../protojson.js';
import {
  DEFAULT_PUSH_DELIVERY_LIMIT,
  PushNotifier,
  type PushAttempt,
  type PushOptions,
} from './push-notifier.js';
import type { ResolveHost } from './ssrf.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1; `answer` decides each response (default 200). */
class Receiver {
  readonly received: Received[] = [];
  answer: (request: Received, index: number, res: ServerResponse) => void = (_r, _i, res) => void res.end();
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = {
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.received.push(request);
        this.answer(request, this.received.length - 1, res);
      });
    });
    this.server.on('connection', (socket) => {
      this.openConnections += 1;
      socket.on('close', () => void (this.openConnections -= 1));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Answers with these statuses in turn (then 200). */
  statuses(...codes: number[]): void {
    this.answer = (_r, index, res) => {
      res.statusCode = codes[index] ?? 200;
      res.end();
    };
  }

  /** Connections the receiver currently has open. */
  openConnections = 0;

  bodies(): unknown[] {
    return this.received.map((request) => JSON.parse(request.body) as unknown);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

interface Line {
  level: string;
  fields: object;
  message?: string;
}

function captureLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: object, message?: string): void =>
      void lines.push({ level, fields, message });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const alice = { tenant: '', principal_id: 'alice' };
const bob = { tenant: '', principal_id: 'bob' };
const aliceElsewhere = { tenant: 'other', principal_id: 'alice' };

function status(n: number): A2AStreamResponse {
  return {
    statusUpdate: {
      taskId: 'task-1',
      contextId: 'ctx',
      status: { state: 'TASK_STATE_WORKING' },
      metadata: { n },
    },
  };
}

const fast: PushOptions = {
  allowPrivateNetworks: true,
  initialBackoffMs: 1,
  maxBackoffMs: 5,
  timeoutMs: 2000,
};

describe('PushNotifier', () => {
  let receiver: Receiver;
  let notifier: PushNotifier | undefined;
  let log: ReturnType<typeof captureLogger>;
  let attempts: PushAttempt[];

  function make(options: PushOptions = fast, resolve?: ResolveHost): PushNotifier {
    attempts = [];
    notifier = new PushNotifier(
      { ...options, onAttempt: (attempt) => attempts.push(attempt) },
      resolve ? { logger: log.logger, resolve } : { logger: log.logger },
    );
    return notifier;
  }

  beforeEach(async () => {
    log = captureLogger();
    receiver = await new Receiver().start();
  });

  afterEach(async () => {
    await notifier?.close();
    notifier = undefined;
    await receiver.stop();
  });

  it('POSTs the StreamResponse as application/a2a+json with the token and Authorization headers', async () => {
    const push = make();
    const config = await push.create(alice, 'task-1', {
      url: `${receiver.url}?sig=query-secret`,
      token: 'tok-123',
      authentication: { scheme: 'Bearer', credentials: 'cred-456' },
    });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.length === 1);

    expect(receiver.bodies()).toEqual([status(1)]);
    const headers = receiver.received[0]?.headers;
    expect(headers?.['content-type']).toBe('application/a2a+json');
    expect(headers?.['x-a2a-notification-token']).toBe('tok-123');
    expect(headers?.authorization).toBe('Bearer cred-456');
    expect(attempts).toEqual([
      {
        owner: alice,
        taskId: 'task-1',
        configId: config.id,
        url: receiver.url,
        attempt: 1,
        ok: true,
        status: 200,
        final: true,
      },
    ]);
    // Nothing secret reaches the log.
    const logged = JSON.stringify(log.lines);
    expect(log.lines.some((line) => line.level === 'debug')).toBe(true);
    for (const secret of ['tok-123', 'cred-456', 'query-secret']) expect(logged).not.toContain(secret);
  });

  it('sends no token or Authorization header when none is configured', async () => {
    const push = make();
    await push.create(alice, 'task-1', { url: receiver.url, authentication: { scheme: 'Bearer' } });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.length === 1);
    expect(receiver.received[0]?.headers['x-a2a-notification-token']).toBeUndefined();
    expect(receiver.received[0]?.headers.authorization).toBeUndefined();
  });

  it('retries after 503 and 500, then succeeds', async () => {
    receiver.statuses(503, 500, 200);
    const push = make();
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));

    expect(receiver.received).toHaveLength(3);
    expect(attempts.map(({ attempt, ok, status: code, final }) => ({ attempt, ok, code, final }))).toEqual([
      { attempt: 1, ok: false, code: 503, final: false },
      { attempt: 2, ok: false, code: 500, final: false },
      { attempt: 3, ok: true, code: 200, final: true },
    ]);
    expect(new Set(receiver.bodies().map((body) => JSON.stringify(body))).size).toBe(1);
  });

  it('retries 408 and 429 and network errors, but not 400', async () => {
    receiver.statuses(408, 429, 400, 200);
    const push = make();
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts.map((attempt) => [attempt.status, attempt.final])).toEqual([
      [408, false],
      [429, false],
      [400, true],
    ]);
    expect(attempts[2]?.error).toBe('HTTP 400');

    await push.close();
    const closedPort = receiver.url;
    await receiver.stop();
    const next = make({ ...fast, maxAttempts: 2 });
    await next.create(alice, 'task-2', { url: closedPort });
    next.notify(alice, 'task-2', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts.map((attempt) => [attempt.attempt, attempt.ok, attempt.final])).toEqual([
      [1, false, false],
      [2, false, true],
    ]);
    expect(attempts[0]?.error).toMatch(/ECONNREFUSED/);
    await next.close();
    receiver = await new Receiver().start();
  });

  it('retries an attempt that gets no answer within timeoutMs', async () => {
    const hung: ServerResponse[] = [];
    receiver.answer = (_r, index, res) => (index === 0 ? void hung.push(res) : void res.end());
    const push = make({ ...fast, timeoutMs: 200 });
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts).toMatchObject([
      { attempt: 1, ok: false, final: false, error: 'no answer within 200 ms' },
      { attempt: 2, ok: true, final: true },
    ]);
    for (const res of hung) res.end();
  });

  it('discards a large answer body and goes on delivering', async () => {
    receiver.answer = (_r, _i, res) => void res.end(Buffer.alloc(1024 * 1024, 120));
    const push = make();
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    push.notify(alice, 'task-1', status(2));
    await waitFor(() => attempts.length === 2);
    expect(attempts.map((attempt) => attempt.ok)).toEqual([true, true]);
  });

  it('does not follow redirects', async () => {
    receiver.answer = (_r, _i, res) => {
      res.writeHead(307, { Location: 'http://169.254.169.254/' }).end();
    };
    const push = make();
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts).toMatchObject([{ attempt: 1, ok: false, status: 307, final: true }]);
  });

  it('honours Retry-After, capped at maxBackoffMs', async () => {
    receiver.answer = (_r, index, res) => {
      if (index === 0) res.writeHead(429, { 'Retry-After': '3600' });
      else if (index === 1)
        res.writeHead(503, { 'Retry-After': new Date(Date.now() + 3_600_000).toUTCString() });
      res.end();
    };
    // An hour-long Retry-After capped at 20 ms: the test finishing at all shows the cap.
    const push = make({ ...fast, maxBackoffMs: 20 });
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts.map((attempt) => attempt.status)).toEqual([429, 503, 200]);
  });

  it('gives up after maxAttempts, reporting the last attempt as final and logging a warning', async () => {
    receiver.statuses(500, 500, 500, 500, 500);
    const push = make({ ...fast, maxAttempts: 3 });
    await push.create(alice, 'task-1', { url: receiver.url, token: 'tok-secret' });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));

    expect(receiver.received).toHaveLength(3);
    expect(attempts.map((attempt) => attempt.final)).toEqual([false, false, true]);
    expect(attempts[2]).toMatchObject({ attempt: 3, ok: false, status: 500, error: 'HTTP 500' });
    const warnings = log.lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toBe('push notification not delivered');
    expect(JSON.stringify(log.lines)).not.toContain('tok-secret');
  });

  it('delivers each config its events in order, across failures and slow answers', async () => {
    const seen: { path: string; n: number; code: number }[] = [];
    receiver.answer = (request, _index, res) => {
      const n = (JSON.parse(request.body) as { statusUpdate: { metadata: { n: number } } }).statusUpdate
        .metadata.n;
      const path = request.path;
      // Every third event fails its first attempt; some answers are slow.
      const retry = seen.some((entry) => entry.path === path && entry.n === n);
      const code = n % 3 === 0 && !retry ? 503 : 200;
      seen.push({ path, n, code });
      res.statusCode = code;
      setTimeout(() => res.end(), n % 4 === 0 ? 10 : 0);
    };
    const push = make();
    await push.create(alice, 'task-1', { id: 'a', url: `${receiver.url}/a` });
    await push.create(alice, 'task-1', { id: 'b', url: `${receiver.url}/b` });
    for (let n = 1; n <= 20; n += 1) push.notify(alice, 'task-1', status(n));
    await waitFor(() => attempts.filter((attempt) => attempt.ok).length === 40);

    const numbers = Array.from({ length: 20 }, (_, i) => i + 1);
    for (const path of ['/hook/a', '/hook/b']) {
      const arrivals = seen.filter((entry) => entry.path === path);
      // Never ahead of an undelivered event: arrival numbers only repeat (a retry) or step up by one.
      arrivals.slice(1).forEach((entry, i) => expect(entry.n - (arrivals[i]?.n ?? 0)).toBeLessThanOrEqual(1));
      expect(arrivals.filter((entry) => entry.code === 200).map((entry) => entry.n)).toEqual(numbers);
    }
  });

  it('refuses non-public webhook URLs unless allowPrivateNetworks is set', async () => {
    const push = make({});
    const port = new URL(receiver.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://localhost:${port}/hook`,
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      'ftp://example.com/hook',
      'file:///etc/passwd',
    ]) {
      const error = await push.create(alice, 'task-1', { url }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).data).toEqual({
        errors: [{ pointer: '/url', message: expect.any(String) }],
      });
    }
    const nested = await push
      .create(alice, 'task-1', { pushNotificationConfig: { url: 'http://10.0.0.1/' } }, '/params')
      .catch((e: unknown) => e);
    expect((nested as ValidationError).data).toEqual({
      errors: [{ pointer: '/params/pushNotificationConfig/url', message: expect.any(String) }],
    });
    expect(push.list(alice, 'task-1')).toEqual([]);
    expect(receiver.received).toHaveLength(0);
  });

  it('checks the address again when it connects (DNS rebinding)', async () => {
    let answer = '93.184.216.34';
    const resolve: ResolveHost = () => Promise.resolve([{ address: answer, family: 4 }]);
    const push = make({ ...fast, allowPrivateNetworks: false }, resolve);
    const port = new URL(receiver.url).port;
    await push.create(alice, 'task-1', { url: `http://hooks.example.com:${port}/hook` });
    answer = '127.0.0.1';
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.some((attempt) => attempt.final));
    expect(attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        ok: false,
        final: true,
        error: expect.stringMatching(/^refused/),
      }),
    ]);
    expect(receiver.received).toHaveLength(0);
  });

  it('keeps each owner’s configs apart', async () => {
    const push = make();
    const config = await push.create(alice, 'task-1', { url: receiver.url });
    expect(push.get(alice, 'task-1', config.id)).toEqual(config);
    for (const other of [bob, aliceElsewhere]) {
      expect(push.get(other, 'task-1', config.id)).toBeUndefined();
      expect(push.list(other, 'task-1')).toEqual([]);
      expect(push.delete(other, 'task-1', config.id)).toBe(false);
      push.notify(other, 'task-1', status(1));
    }
    // Bob registering the same id on "his" task-1 does not touch Alice's.
    await push.create(bob, 'task-1', { id: config.id, url: `${receiver.url}?bob` });
    expect(push.get(alice, 'task-1', config.id)?.url).toBe(receiver.url);

    push.notify(alice, 'task-1', status(2));
    await waitFor(() => attempts.length === 1);
    expect(receiver.bodies()).toEqual([status(2)]);
    expect(push.delete(alice, 'task-1', config.id)).toBe(true);
    expect(push.list(alice, 'task-1')).toEqual([]);
    expect(push.list(bob, 'task-1')).toHaveLength(1);
  });

  it('mints ids, keeps given ones, replaces by id and returns copies', async () => {
    const push = make();
    const minted = await push.create(alice, 'task-1', { url: receiver.url, taskId: 'task-1' });
    expect(minted.id).toMatch(/^[0-9a-f-]{36}$/);
    const given = await push.create(alice, 'task-1', { id: 'mine', url: receiver.url, token: 'a' });
    expect(given).toEqual({ id: 'mine', taskId: 'task-1', url: receiver.url, token: 'a' });
    await push.create(alice, 'task-1', { id: 'mine', url: receiver.url, token: 'b' });
    expect(push.list(alice, 'task-1').map((config) => [config.id, config.token])).toEqual([
      [minted.id, undefined],
      ['mine', 'b'],
    ]);
    const read = push.get(alice, 'task-1', 'mine');
    if (read) read.url = 'http://mutated.example/';
    expect(push.get(alice, 'task-1', 'mine')?.url).toBe(receiver.url);
    await expect(
      push.create(alice, 'task-1', { url: receiver.url, taskId: 'task-9' }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('enforces maxConfigsPerTask and maxConfigs', async () => {
    const push = make({ ...fast, maxConfigsPerTask: 2, maxConfigs: 3 });
    await push.create(alice, 'task-1', { id: 'a', url: receiver.url });
    await push.create(alice, 'task-1', { id: 'b', url: receiver.url });
    await expect(push.create(alice, 'task-1', { id: 'c', url: receiver.url })).rejects.toBeInstanceOf(
      ResourceExhaustedError,
    );
    await push.create(alice, 'task-1', { id: 'b', url: `${receiver.url}?again` }); // a replacement fits
    await push.create(bob, 'task-1', { url: receiver.url });
    await expect(push.create(bob, 'task-2', { url: receiver.url })).rejects.toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
    });
    expect(push.size).toBe(3);
    push.delete(alice, 'task-1', 'a');
    await push.create(bob, 'task-2', { url: receiver.url });
    expect(push.deleteTask(alice, 'task-1')).toBe(1);
    expect(push.size).toBe(2);
  });

  it('drops the oldest waiting event beyond maxPendingPerConfig and reports it', async () => {
    let release: (() => void) | undefined;
    receiver.answer = (_r, index, res) => {
      if (index === 0) release = () => res.end();
      else res.end();
    };
    const push = make({ ...fast, maxPendingPerConfig: 2 });
    await push.create(alice, 'task-1', { id: 'c', url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => release !== undefined); // event 1 is in flight; 2.. wait
    for (let n = 2; n <= 5; n += 1) push.notify(alice, 'task-1', status(n));
    expect(attempts).toEqual([
      expect.objectContaining({ attempt: 0, dropped: true, final: true, ok: false, configId: 'c' }),
      expect.objectContaining({ attempt: 0, dropped: true, final: true, ok: false, configId: 'c' }),
    ]);
    release?.();
    await waitFor(() => receiver.received.length === 3 && attempts.length === 5);
    expect(receiver.bodies()).toEqual([status(1), status(4), status(5)]);
  });

  it('sends nothing more for a deleted config', async () => {
    let release: (() => void) | undefined;
    receiver.answer = (_r, index, res) => {
      if (index === 0) release = () => res.end();
      else res.end();
    };
    const push = make();
    await push.create(alice, 'task-1', { id: 'c', url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    push.notify(alice, 'task-1', status(2));
    await waitFor(() => release !== undefined);
    push.delete(alice, 'task-1', 'c');
    release?.();
    await waitFor(() => attempts.length === 1);
    await push.close();
    expect(receiver.received).toHaveLength(1);
  });

  it('close() cancels waiting retries and discards queued events', async () => {
    receiver.statuses(500, 500, 500);
    const push = make({ ...fast, initialBackoffMs: 600_000, maxBackoffMs: 600_000 });
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    push.notify(alice, 'task-1', status(2));
    await waitFor(() => attempts.length === 1);
    await push.close(); // would wait ten minutes if the retry timer were not cut short
    expect(receiver.received).toHaveLength(1);
    expect(log.lines.some((line) => line.level === 'warn' && /discarded/.test(line.message ?? ''))).toBe(
      true,
    );
    push.notify(alice, 'task-1', status(3));
    expect(attempts).toHaveLength(1);
  });

  it('close() waits for an attempt in flight, then aborts it after timeoutMs', async () => {
    const hung: ServerResponse[] = [];
    receiver.answer = (_r, _i, res) => void hung.push(res);
    const push = make({ ...fast, timeoutMs: 100 });
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => hung.length === 1);
    await push.close();
    expect(attempts).toEqual([expect.objectContaining({ attempt: 1, ok: false, final: true })]);
    for (const res of hung) res.end();
  });

  it('leaves no socket or timer behind after close()', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const timersBefore = timers();
    receiver.statuses(500, 200);
    const push = make({ ...fast, initialBackoffMs: 60_000, maxBackoffMs: 60_000 });
    await push.create(alice, 'task-1', { url: receiver.url });
    await push.create(alice, 'task-1', { url: `${receiver.url}/ok` });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => attempts.length === 2); // one delivered (its socket kept alive), one waiting to retry
    expect(receiver.openConnections).toBeGreaterThan(0);
    await push.close();
    // The receiver sees the kept-alive connections end; node drops closed handles a turn later.
    await waitFor(() => receiver.openConnections === 0);
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  });

  it('outboundLimit: N + 5 configs, at most N deliveries in flight at the receiver, every one delivered on its first attempt', async () => {
    const N = 3;
    const held: ServerResponse[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    receiver.answer = (_r, _i, res) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      held.push(res);
    };
    const push = make({ ...fast, outboundLimit: N });
    for (let i = 0; i < N + 5; i++)
      await push.create(alice, 'task-1', { id: `c${i}`, url: `${receiver.url}/${i}` });
    push.notify(alice, 'task-1', status(1));
    // Every lane asked for its slot inside notify(): N have one, 5 wait, and none is given back
    // before the receiver answers.
    expect(push.outboundLimit.active).toBe(N);
    let answered = 0;
    while (answered < N + 5) {
      await waitFor(() => held.length === Math.min(N, N + 5 - answered));
      for (const res of held.splice(0)) {
        inFlight -= 1;
        answered += 1;
        res.end();
      }
    }
    await waitFor(() => attempts.length === N + 5);
    expect(maxInFlight).toBe(N);
    expect(receiver.received).toHaveLength(N + 5);
    expect(new Set(receiver.received.map((r) => r.path)).size).toBe(N + 5);
    // Waiting for a slot used up no attempt.
    expect(attempts.every((a) => a.ok && a.attempt === 1 && a.final)).toBe(true);
    expect(push.outboundLimit.active).toBe(0);
  });

  it('outboundLimit: close() ends the lanes still waiting for a slot; their events are not sent', async () => {
    const hung: ServerResponse[] = [];
    receiver.answer = (_r, _i, res) => void hung.push(res);
    const push = make({ ...fast, outboundLimit: 1 });
    await push.create(alice, 'task-1', { id: 'a', url: `${receiver.url}/a` });
    await push.create(alice, 'task-1', { id: 'b', url: `${receiver.url}/b` });
    push.notify(alice, 'task-1', status(1));
    await waitFor(() => hung.length === 1);
    const closing = push.close();
    for (const res of hung) res.end();
    await closing;
    expect(receiver.received).toHaveLength(1);
    expect(push.outboundLimit.active).toBe(0);
  });

  it('outboundLimit: a ConcurrencyLimit shared with other work is waited for, then used', async () => {
    const shared = new ConcurrencyLimit(1, { name: 'webhooks', retryAfterMs: 5 });
    const taken = shared.acquire();
    const push = make({ ...fast, outboundLimit: shared });
    await push.create(alice, 'task-1', { url: receiver.url });
    push.notify(alice, 'task-1', status(1));
    expect(receiver.received).toHaveLength(0);
    taken();
    await waitFor(() => attempts.length === 1);
    expect(attempts[0]).toMatchObject({ ok: true, attempt: 1 });
    expect(new PushNotifier({}, { logger: log.logger }).outboundLimit.max).toBe(DEFAULT_PUSH_DELIVERY_LIMIT);
    expect(DEFAULT_PUSH_DELIVERY_LIMIT).toBe(64);
    expect(() => new PushNotifier({ outboundLimit: 0 }, { logger: log.logger })).toThrow(/outboundLimit/);
  });

  it('refuses unknown and invalid options', () => {
    expect(() => new PushNotifier({ retries: 3 } as PushOptions, { logger: log.logger })).toThrow(ValueError);
    expect(() => new PushNotifier({ maxAttempts: 0 }, { logger: log.logger })).toThrow(/maxAttempts/);
    expect(() => new PushNotifier({ timeoutMs: 0 }, { logger: log.logger })).toThrow(/timeoutMs/);
  });
});
