import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { APIKeyAuth, type SecurityContext } from '@agent/auth';
import {
  AgentError,
  CLIENT_OPERATIONS,
  createTask,
  isFinalEvent,
  type AgentCard,
  type Logger,
  type Task,
  type TaskEvent,
  type TaskList,
  type TaskStatusEvent,
  type Transport,
} from '@agent/core';
import { ContractHandler, SECRET_MESSAGE } from './contract-handler.js';
import type { ContractClientOptions, ContractServerOptions, TransportHarness } from './harness.js';
import { INTERNAL_MESSAGE } from '@agent/core/internal';
import { SHUTDOWN_REASON } from '../pipeline.js';

const API_KEY = 'contract-key-7f3a9c1e5b2d';
/** A key restricted to two tenants (and not to the default one). */
const TENANT_KEY = 'contract-tenant-key-4d8e2a6c';
const LEAKY_CREDENTIAL = 'sk-live-0123456789abcdefghij';

/** A logger that keeps every line, so a case can find the one carrying an `error_id`. */
export class RecordingLogger implements Logger {
  readonly lines: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
  error(fields: object, message?: string): void {
    this.lines.push({ level: 'error', fields: fields as Record<string, unknown>, message });
  }
  warn(fields: object, message?: string): void {
    this.lines.push({ level: 'warn', fields: fields as Record<string, unknown>, message });
  }
  info(fields: object, message?: string): void {
    this.lines.push({ level: 'info', fields: fields as Record<string, unknown>, message });
  }
  debug(fields: object, message?: string): void {
    this.lines.push({ level: 'debug', fields: fields as Record<string, unknown>, message });
  }

  /** The line logged under `errorId`, if any. */
  withErrorId(errorId: unknown): { fields: Record<string, unknown> } | undefined {
    return this.lines.find((line) => line.fields.error_id === errorId);
  }
}

/** An authenticator whose refusal quotes the credential, as a careless one would. */
class LeakyAuth extends APIKeyAuth {
  constructor() {
    super({ validKeys: {} });
  }
  override authenticate(credentials: string): Promise<SecurityContext> {
    return Promise.reject(new Error(`key ${credentials} is not valid`));
  }
}

interface Setup {
  server: Transport;
  client: Transport;
  url: string;
  handler: ContractHandler;
  logger: RecordingLogger;
}

/** Every failure a call can end in, as the caller sees it. */
async function failure(work: Promise<unknown> | (() => Promise<unknown>)): Promise<AgentError> {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (error instanceof AgentError) return error;
    throw new Error(`expected an AgentError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected the call to fail');
}

/** What `work` threw, so a case can look at its fields. */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw');
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const all: TaskEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function finals(events: TaskEvent[]): TaskStatusEvent[] {
  return events.filter(isFinalEvent);
}

/** No 8-character run of `secret` appears in `text`. */
function carriesNoPartOf(text: string, secret: string): boolean {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return false;
  return true;
}

const OPERATIONS = ['send_task', 'stream_task', 'cancel_task', 'get_card'] as const;

function wireText(error: AgentError): string {
  return JSON.stringify({ code: error.code, message: error.message, data: error.data });
}

function rawPost(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        rejectUnauthorized: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The contract every transport passes, whatever its wire: the same calls give the same answers
 * (code, message and data shape) on every transport. Cases start real servers on 127.0.0.1 with
 * port 0 and go through the transport's own client.
 */
export function describeTransport(harness: TransportHarness): void {
  const kind = harness.kind;

  describe(`${kind} transport contract`, () => {
    const open: Transport[] = [];

    async function setup(
      serverOptions: ContractServerOptions = {},
      clientOptions: ContractClientOptions = {},
      bind: (server: Transport, handler: ContractHandler) => void = (server, handler) => server.bind(handler),
    ): Promise<Setup> {
      const logger = new RecordingLogger();
      const server = harness.server({ logger, ...serverOptions });
      open.push(server);
      const handler = new ContractHandler();
      bind(server, handler);
      await server.start();
      const client = harness.client(server, clientOptions);
      if (client !== server) open.push(client);
      return { server, client, url: harness.url(server), handler, logger };
    }

    function send(s: Setup, text: string, task: Task = createTask(text)): Promise<Task> {
      return s.client.send<Task>(CLIENT_OPERATIONS.send_task, s.url, task);
    }

    function cancel(s: Setup, taskId: string, reason?: string): Promise<Task> {
      const body: Record<string, string> = { task_id: taskId };
      if (reason !== undefined) body.reason = reason;
      return s.client.send<Task>(CLIENT_OPERATIONS.cancel_task, s.url, body);
    }

    /** One operation by name on a task whose first message is `text`: the cases that hold for each. */
    function operation(s: Setup, name: (typeof OPERATIONS)[number], text: string): Promise<unknown> {
      const task = createTask(text);
      switch (name) {
        case 'send_task':
          return send(s, text, task);
        case 'stream_task':
          return collect(s.client.subscribe(s.url, task));
        case 'cancel_task':
          return cancel(s, task.id);
        case 'get_card':
          return s.client.send(CLIENT_OPERATIONS.get_card, s.url);
      }
    }

    afterEach(async () => {
      const all = open.splice(0);
      await Promise.all(all.reverse().map((transport) => transport.stop().catch(() => undefined)));
    });

    describe('calls', () => {
      it('sends a task and gets the finished task back', async () => {
        const s = await setup();
        const task = createTask('echo hello');
        const done = await send(s, 'echo hello', task);
        expect(done.id).toBe(task.id);
        expect(done.state).toBe('completed');
        expect(done.messages.at(-1)?.parts[0]?.content).toBe('hello');
      });

      it('streams a task: its events, ending with exactly one final status', async () => {
        const s = await setup();
        const events = await collect(s.client.subscribe(s.url, createTask('echo hi')));
        expect(events.map((e) => e.type)).toEqual(['task.status', 'task.artifact', 'task.status']);
        expect(finals(events)).toHaveLength(1);
        expect(events.at(-1)).toMatchObject({ type: 'task.status', state: 'completed', final: true });
      });

      it('returns the card', async () => {
        const s = await setup();
        const card = await s.client.send<AgentCard>(CLIENT_OPERATIONS.get_card, s.url);
        expect(card.name).toBe('contract');
      });

      it('keeps the code and message of an AgentError the handler throws', async () => {
        const s = await setup();
        const error = await failure(send(s, 'missing'));
        expect(error.code).toBe('TASK_NOT_FOUND');
        expect(error.message).toBe('No task named missing');
      });

      it('answers a cancel of an unknown task with TASK_NOT_FOUND', async () => {
        const s = await setup();
        const error = await failure(cancel(s, 'no-such-task'));
        expect(error.code).toBe('TASK_NOT_FOUND');
      });

      it('refuses a task that fails the schema with VALIDATION_FAILED, before the handler', async () => {
        const s = await setup();
        const bad = { ...createTask('echo x'), state: 'sleeping' } as unknown as Task;
        const error = await failure(send(s, 'echo x', bad));
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(s.handler.calls).toEqual([]);
      });
    });

    describe('error policy', () => {
      it('masks an unexpected error of a unary call and logs it under the same error_id', async () => {
        const s = await setup();
        const error = await failure(send(s, 'throw'));
        expect(error.code).toBe('INTERNAL');
        expect(error.message).toBe(INTERNAL_MESSAGE);
        const errorId = (error.data as { error_id?: unknown } | undefined)?.error_id;
        expect(typeof errorId).toBe('string');
        expect(carriesNoPartOf(wireText(error), SECRET_MESSAGE)).toBe(true);
        const line = s.logger.withErrorId(errorId);
        expect(line).toBeDefined();
        expect(String((line!.fields.err as Error).message)).toBe(SECRET_MESSAGE);
      });

      it('masks an unexpected error before the first stream event as a plain error', async () => {
        const s = await setup();
        const error = await failure(collect(s.client.subscribe(s.url, createTask('throw'))));
        expect(error.code).toBe('INTERNAL');
        expect(error.message).toBe(INTERNAL_MESSAGE);
        const errorId = (error.data as { error_id?: unknown } | undefined)?.error_id;
        expect(typeof errorId).toBe('string');
        expect(s.logger.withErrorId(errorId)).toBeDefined();
        expect(carriesNoPartOf(wireText(error), SECRET_MESSAGE)).toBe(true);
      });

      it('ends a stream that failed after its first event with task.error and one final failed status', async () => {
        const s = await setup();
        const events = await collect(s.client.subscribe(s.url, createTask('throw-later')));
        expect(events.map((e) => e.type)).toEqual(['task.status', 'task.error', 'task.status']);
        const last = finals(events);
        expect(last).toHaveLength(1);
        expect(last[0]).toMatchObject({ state: 'failed', final: true });
        const detail = last[0]!.task?.metadata.error as {
          code?: string;
          message?: string;
          data?: { error_id?: string };
        };
        expect(detail).toMatchObject({ code: 'INTERNAL', message: INTERNAL_MESSAGE });
        expect(s.logger.withErrorId(detail.data?.error_id)).toBeDefined();
        expect(carriesNoPartOf(JSON.stringify(events), SECRET_MESSAGE)).toBe(true);
      });
    });

    describe('stream rule', () => {
      it('finishes a handler stream that ends without a final status as failed INTERNAL', async () => {
        const s = await setup();
        const events = await collect(s.client.subscribe(s.url, createTask('unfinished')));
        expect(events.map((e) => e.type)).toEqual([
          'task.status',
          'task.artifact',
          'task.error',
          'task.status',
        ]);
        const last = finals(events);
        expect(last).toHaveLength(1);
        expect(last[0]).toMatchObject({ state: 'failed', final: true });
        expect(last[0]!.task?.metadata.error).toMatchObject({ code: 'INTERNAL' });
      });

      it('ends a canceled stream with exactly one final canceled status carrying the reason', async () => {
        const s = await setup();
        const task = createTask('hold');
        const iterator = s.client.subscribe(s.url, task)[Symbol.asyncIterator]();
        const first = await iterator.next();
        expect(first.value).toMatchObject({ type: 'task.status', state: 'working' });
        await s.handler.whenRunning(task.id);
        const canceled = await cancel(s, task.id, 'enough');
        expect(canceled.state).toBe('canceled');
        const rest: TaskEvent[] = [];
        for (let step = await iterator.next(); !step.done; step = await iterator.next())
          rest.push(step.value);
        expect(finals(rest)).toHaveLength(1);
        expect(rest.at(-1)).toMatchObject({ type: 'task.status', state: 'canceled', final: true });
        expect((rest.at(-1) as TaskStatusEvent).task?.metadata.cancel_reason).toBe('enough');
      });
    });

    describe('authentication before the handler', () => {
      const auth = (): APIKeyAuth => new APIKeyAuth({ validKeys: { [API_KEY]: ['tasks'] } });

      it.each(OPERATIONS)('refuses %s without credentials, and the handler never runs', async (name) => {
        const s = await setup({ authenticator: auth() });
        const error = await failure(operation(s, name, 'echo secret'));
        expect(error.code).toBe('UNAUTHENTICATED');
        expect(s.handler.calls).toEqual([]);
      });

      it('serves every operation with valid credentials', async () => {
        const s = await setup({ authenticator: auth() }, { authenticator: auth(), credentials: API_KEY });
        expect((await send(s, 'echo ok')).state).toBe('completed');
        const events = await collect(s.client.subscribe(s.url, createTask('echo ok')));
        expect(finals(events)).toHaveLength(1);
        expect((await failure(cancel(s, 'nope'))).code).toBe('TASK_NOT_FOUND');
      });

      it('advertises the scheme on the card of a plain function handler', async () => {
        const s = await setup(
          { authenticator: auth() },
          { authenticator: auth(), credentials: API_KEY },
          (server) => server.onTaskReceived((task) => Promise.resolve({ ...task, state: 'completed' })),
        );
        const card = await s.client.send<AgentCard>(CLIENT_OPERATIONS.get_card, s.url);
        expect(Object.keys(card.securitySchemes ?? {})).toEqual(['apiKey']);
      });

      it('scrubs every fragment of the credential from a client-side authenticator error', async () => {
        const s = await setup({}, { authenticator: new LeakyAuth(), credentials: LEAKY_CREDENTIAL });
        const error = await failure(send(s, 'echo x'));
        expect(error.code).toBe('UNAUTHENTICATED');
        expect(carriesNoPartOf(wireText(error), LEAKY_CREDENTIAL)).toBe(true);
        expect(s.handler.calls).toEqual([]);
      });
    });

    describe('tenants', () => {
      const tenantAuth = (): APIKeyAuth =>
        new APIKeyAuth({
          validKeys: { [API_KEY]: [], [TENANT_KEY]: [] },
          tenants: { [TENANT_KEY]: ['acme', 'globex.eu:prod-1_a'] },
        });
      const restricted = (tenant?: string): ContractClientOptions => ({
        authenticator: tenantAuth(),
        credentials: TENANT_KEY,
        ...(tenant === undefined ? {} : { tenant }),
      });

      async function answers(s: Setup): Promise<{ sent: unknown; streamed: unknown }> {
        const sent = (await send(s, 'echo-tenant')).messages.at(-1)?.parts[0]?.content;
        const events = await collect(s.client.subscribe(s.url, createTask('echo-tenant')));
        const streamed = finals(events)[0]?.task?.messages.at(-1)?.parts[0]?.content;
        return { sent, streamed };
      }

      it('hands a named tenant to the handler on send and stream', async () => {
        const s = await setup({}, { tenant: 'globex.eu:prod-1_a' });
        expect(await answers(s)).toEqual({ sent: 'globex.eu:prod-1_a', streamed: 'globex.eu:prod-1_a' });
      });

      it('hands the default tenant "" to the handler when the call names none', async () => {
        const s = await setup();
        expect(await answers(s)).toEqual({ sent: '', streamed: '' });
      });

      it('serves a restricted key naming one of its tenants', async () => {
        const s = await setup({ authenticator: tenantAuth() }, restricted('acme'));
        expect(await answers(s)).toEqual({ sent: 'acme', streamed: 'acme' });
        expect((await failure(cancel(s, 'nope'))).code).toBe('TASK_NOT_FOUND');
      });

      it('leaves a key without a tenant list free to name any tenant', async () => {
        const s = await setup(
          { authenticator: tenantAuth() },
          { authenticator: tenantAuth(), credentials: API_KEY, tenant: 'initech' },
        );
        expect(await answers(s)).toEqual({ sent: 'initech', streamed: 'initech' });
      });

      it.each(OPERATIONS)(
        "refuses %s naming a tenant outside the key's list with PERMISSION_DENIED, before the handler",
        async (name) => {
          const s = await setup({ authenticator: tenantAuth() }, restricted('initech'));
          const error = await failure(operation(s, name, 'echo-tenant'));
          expect(error.code).toBe('PERMISSION_DENIED');
          // The refusal does not tell the caller which tenants exist.
          expect(wireText(error)).not.toMatch(/acme|globex/);
          expect(s.handler.calls).toEqual([]);
        },
      );

      it('refuses a restricted key naming no tenant (its list lacks "") with PERMISSION_DENIED', async () => {
        const s = await setup({ authenticator: tenantAuth() }, restricted());
        expect((await failure(send(s, 'echo-tenant'))).code).toBe('PERMISSION_DENIED');
        expect((await failure(collect(s.client.subscribe(s.url, createTask('echo-tenant'))))).code).toBe(
          'PERMISSION_DENIED',
        );
        expect(s.handler.calls).toEqual([]);
      });

      it('refuses a malformed tenant with INVALID_REQUEST, before the handler', async () => {
        const s = await setup({}, { tenant: 'acme' });
        // The client refuses a malformed tenant option itself (ValueError); overriding its field is
        // the way to put one on the wire and reach the server's own rule.
        Object.defineProperty(s.client, 'tenant', { value: 'acme corp/eu', configurable: true });
        expect((await failure(send(s, 'echo-tenant'))).code).toBe('INVALID_REQUEST');
        expect(s.handler.calls).toEqual([]);
      });

      it('refuses a malformed tenant option on the client with a ValueError', () => {
        expect(thrown(() => harness.construct({ tenant: 'a'.repeat(129) }))).toMatchObject({
          code: 'VALUE_ERROR',
        });
      });
    });

    describe('task API', () => {
      const OTHER_KEY = 'zz-other-key-51c0ffee9a';
      const ownersAuth = (): APIKeyAuth => new APIKeyAuth({ validKeys: { [API_KEY]: [], [OTHER_KEY]: [] } });

      /** A server with two principals: `s.client` acts for one, `other` for the second. */
      async function twoOwners(): Promise<{ s: Setup; other: Transport }> {
        const s = await setup(
          { authenticator: ownersAuth() },
          { authenticator: ownersAuth(), credentials: API_KEY },
        );
        const other = harness.client(s.server, { authenticator: ownersAuth(), credentials: OTHER_KEY });
        if (other !== s.server && other !== s.client) open.push(other);
        return { s, other };
      }

      function getTask(
        client: Transport,
        url: string,
        taskId: string,
        historyLength?: number,
      ): Promise<Task> {
        const body: Record<string, unknown> = { task_id: taskId };
        if (historyLength !== undefined) body.history_length = historyLength;
        return client.send<Task>(CLIENT_OPERATIONS.get_task, url, body);
      }

      function listTasks(
        client: Transport,
        url: string,
        query: Record<string, unknown> = {},
      ): Promise<TaskList> {
        return client.send<TaskList>(CLIENT_OPERATIONS.list_tasks, url, query);
      }

      function subscribeTask(
        client: Transport,
        url: string,
        taskId: string,
        after?: number,
      ): AsyncIterable<TaskEvent> {
        if (!client.subscribeTask) throw new Error(`${kind} client has no subscribeTask`);
        return client.subscribeTask(url, taskId, after === undefined ? {} : { after });
      }

      /** An answer as the wire gave it, with the task id in it made neutral. */
      async function answerOf(work: () => Promise<unknown>, taskId: string): Promise<string> {
        const error = await failure(work);
        return wireText(error).split(taskId).join('<id>');
      }

      it('reads a finished task back, keeping at most history_length messages', async () => {
        const s = await setup();
        const task = createTask('echo hello');
        await send(s, 'echo hello', task);
        const whole = await getTask(s.client, s.url, task.id);
        expect(whole).toMatchObject({ id: task.id, state: 'completed' });
        expect(whole.messages).toHaveLength(2);
        const last = await getTask(s.client, s.url, task.id, 1);
        expect(last.messages.map((m) => m.parts[0]?.content)).toEqual(['hello']);
        expect((await getTask(s.client, s.url, task.id, 0)).messages).toEqual([]);
      });

      it('reads a running task back, and answers an unknown id with TASK_NOT_FOUND', async () => {
        const s = await setup();
        const task = createTask('hold');
        const answer = send(s, 'hold', task);
        await s.handler.whenRunning(task.id);
        expect((await getTask(s.client, s.url, task.id)).state).toBe('working');
        await cancel(s, task.id, 'done looking');
        await expect(answer).resolves.toMatchObject({ state: 'canceled' });
        expect((await getTask(s.client, s.url, task.id)).state).toBe('canceled');
        const error = await failure(getTask(s.client, s.url, 'no-such-task'));
        expect(error.code).toBe('TASK_NOT_FOUND');
        expect((await failure(cancel(s, task.id))).code).toBe('TASK_NOT_CANCELABLE');
      });

      it("lists the caller's tasks newest first, page by page, filtered by state", async () => {
        const s = await setup();
        const ids: string[] = [];
        for (const text of ['echo a', 'echo b', 'echo c']) {
          const task = createTask(text);
          ids.push(task.id);
          await send(s, text, task);
          // Newest first is by update time: tasks finished within one millisecond tie.
          await new Promise((resolve) => setTimeout(resolve, 3));
        }
        const first = await listTasks(s.client, s.url, { page_size: 2 });
        expect(first.tasks.map((t) => t.id)).toEqual([ids[2], ids[1]]);
        expect(first.next_page_token).not.toBe('');
        const second = await listTasks(s.client, s.url, { page_size: 2, page_token: first.next_page_token });
        expect(second).toEqual({ tasks: [expect.objectContaining({ id: ids[0] })], next_page_token: '' });
        expect((await listTasks(s.client, s.url, { state: 'failed' })).tasks).toEqual([]);
        expect((await listTasks(s.client, s.url, { state: 'completed' })).tasks).toHaveLength(3);
      });

      it('numbers stream events from 1 and replays a finished task from any sequence', async () => {
        const s = await setup();
        const task = createTask('ticks 2');
        const streamed = await collect(s.client.subscribe(s.url, task));
        expect(streamed.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
        const replayed = await collect(subscribeTask(s.client, s.url, task.id));
        expect(replayed.map((e) => [e.sequence, e.type])).toEqual(streamed.map((e) => [e.sequence, e.type]));
        const tail = await collect(subscribeTask(s.client, s.url, task.id, 2));
        expect(tail.map((e) => e.sequence)).toEqual([3, 4]);
        expect(finals(tail)).toHaveLength(1);
        expect(await collect(subscribeTask(s.client, s.url, task.id, 4))).toEqual([]);
      });

      it('continues a dropped stream from its last sequence: each later event once, then the final status', async () => {
        const s = await setup();
        const task = createTask('ticks 5');
        const seen: TaskEvent[] = [];
        for await (const event of s.client.subscribe(s.url, task)) {
          seen.push(event);
          if (seen.length === 3) break;
        }
        const last = seen.at(-1)?.sequence ?? 0;
        expect(last).toBe(3);
        const rest = await collect(subscribeTask(s.client, s.url, task.id, last));
        expect(rest.map((e) => e.sequence)).toEqual([4, 5, 6, 7]);
        expect(finals(rest)).toEqual([expect.objectContaining({ state: 'completed', final: true })]);
      });

      it('answers a resubmitted finished id with the stored task and runs nothing', async () => {
        const s = await setup();
        const task = createTask('echo once');
        const first = await send(s, 'echo once', task);
        const again = await send(s, 'echo once', task);
        expect(again).toEqual(first);
        const replay = await collect(s.client.subscribe(s.url, task));
        expect(finals(replay)[0]?.task).toEqual(first);
        expect(s.handler.calls).toEqual(['handleTask']);
      });

      it('attaches a resubmission of a running id to the run', async () => {
        const s = await setup();
        const task = createTask('wait 150');
        const first = send(s, 'wait 150', task);
        await s.handler.whenRunning(task.id);
        const second = send(s, 'wait 150', task);
        const streamed = collect(s.client.subscribe(s.url, task));
        const [a, b, events] = await Promise.all([first, second, streamed]);
        expect(b).toEqual(a);
        expect(finals(events)[0]?.task).toEqual(a);
        expect(s.handler.calls).toEqual(['handleTask']);
      });

      it('answers another principal exactly as an unknown id, on every operation', async () => {
        const { s, other } = await twoOwners();
        const done = createTask('echo mine');
        await send(s, 'echo mine', done);
        const running = createTask('hold');
        const held = send(s, 'hold', running);
        await s.handler.whenRunning(running.id);
        const unknown = createTask('echo nobody').id;
        for (const target of [done.id, running.id]) {
          const ops: [string, (id: string) => Promise<unknown>][] = [
            ['get', (id) => getTask(other, s.url, id)],
            ['cancel', (id) => other.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: id })],
            ['subscribe', (id) => collect(subscribeTask(other, s.url, id))],
          ];
          for (const [name, op] of ops) {
            const theirs = await answerOf(() => op(target), target);
            const nobodys = await answerOf(() => op(unknown), unknown);
            expect({ name, answer: theirs }).toEqual({ name, answer: nobodys });
          }
        }
        expect((await listTasks(other, s.url)).tasks).toEqual([]);
        // Their resubmission of my id is a task of their own.
        const theirs = await other.send<Task>(CLIENT_OPERATIONS.send_task, s.url, {
          ...done,
          messages: [createTask('echo yours').messages[0]],
        });
        expect(theirs.messages.at(-1)?.parts[0]?.content).toBe('yours');
        expect((await getTask(s.client, s.url, running.id)).state).toBe('working');
        await cancel(s, running.id);
        await expect(held).resolves.toMatchObject({ state: 'canceled' });
        expect((await getTask(s.client, s.url, done.id)).messages.at(-1)?.parts[0]?.content).toBe('mine');
      });

      it('keeps the tenants of one principal apart', async () => {
        const s = await setup({}, { tenant: 'acme' });
        const globex = harness.client(s.server, { tenant: 'globex' });
        if (globex !== s.server && globex !== s.client) open.push(globex);
        const task = createTask('echo acme');
        await send(s, 'echo acme', task);
        expect((await failure(getTask(globex, s.url, task.id))).code).toBe('TASK_NOT_FOUND');
        expect((await listTasks(globex, s.url)).tasks).toEqual([]);
        expect((await getTask(s.client, s.url, task.id)).state).toBe('completed');
      });

      it('refuses malformed task API requests with VALIDATION_FAILED', async () => {
        const s = await setup();
        // Built lazily: a client may refuse a value its wire cannot carry before anything is sent.
        const bad: [() => Promise<unknown>, string][] = [
          [() => getTask(s.client, s.url, 'x', -1), '/history_length'],
          [() => listTasks(s.client, s.url, { page_size: 0 }), '/page_size'],
          [() => listTasks(s.client, s.url, { page_size: 101 }), '/page_size'],
          [() => listTasks(s.client, s.url, { state: 'sleeping' }), '/state'],
          [() => listTasks(s.client, s.url, { page_token: 'not-a-token' }), '/page_token'],
          [() => collect(subscribeTask(s.client, s.url, 'x', -1)), '/after'],
        ];
        for (const [work, pointer] of bad) {
          const error = await failure(work);
          expect({ pointer, code: error.code }).toEqual({ pointer, code: 'VALIDATION_FAILED' });
          expect(JSON.stringify(error.data)).toContain(pointer);
        }
      });
    });

    describe('options and lifecycle', () => {
      it('refuses credentials without an authenticator', () => {
        expect(thrown(() => harness.construct({ credentials: API_KEY }))).toMatchObject({
          code: 'VALUE_ERROR',
        });
      });

      it('accepts timeoutMs 0 (no deadline) and the shared stopGraceMs', () => {
        expect(() => harness.construct({ timeoutMs: 0, stopGraceMs: 250 })).not.toThrow();
      });

      it('refuses unknown option names, naming them', () => {
        expect(() => harness.construct({ timeout: 5 })).toThrow(/"timeout"/);
      });

      it('rejects start() without a handler', async () => {
        const server = harness.server({});
        open.push(server);
        await expect(server.start()).rejects.toMatchObject({ code: 'VALUE_ERROR' });
      });

      it('refuses bind() after start()', async () => {
        const s = await setup();
        expect(thrown(() => s.server.bind(new ContractHandler()))).toMatchObject({ code: 'VALUE_ERROR' });
      });

      it('stops idempotently, also before start', async () => {
        const idle = harness.server({});
        await expect(idle.stop()).resolves.toBeUndefined();
        const s = await setup();
        await Promise.all([s.server.stop(), s.server.stop()]);
        await expect(s.server.stop()).resolves.toBeUndefined();
      });

      const urlFor = harness.urlFor?.bind(harness);
      if (urlFor) {
        it.each(['127.0.0.1', '127.0.0.2', 'localhost', 'app.localhost', hostname()])(
          'validateUrl() accepts %s as local',
          (host) => {
            expect(harness.construct({ url: urlFor(host) }).validateUrl()).toBe(true);
          },
        );
        it('validateUrl() refuses a remote host', () => {
          expect(harness.construct({ url: urlFor('192.0.2.1') }).validateUrl()).toBe(false);
        });
      }
    });

    describe('two-phase stop', () => {
      it('lets a call in flight finish within stopGraceMs', async () => {
        const s = await setup({ stopGraceMs: 10_000 });
        const task = createTask('wait 300');
        const answer = send(s, 'wait 300', task);
        await s.handler.whenRunning(task.id);
        const stopped = s.server.stop();
        await expect(answer).resolves.toMatchObject({ id: task.id, state: 'completed' });
        await stopped;
        expect(s.handler.calls).not.toContain('cancelTask');
      });

      it('cancels what is left after the grace with reason "server shutting down"', async () => {
        const s = await setup({ stopGraceMs: 200 });
        const task = createTask('hold');
        const answer = send(s, 'hold', task);
        await s.handler.whenRunning(task.id);
        await s.server.stop();
        const finished = await answer;
        expect(finished.state).toBe('canceled');
        expect(finished.metadata.cancel_reason).toBe(SHUTDOWN_REASON);
      });

      it('refuses new calls with UNAVAILABLE while it drains', async () => {
        const s = await setup({ stopGraceMs: 1_000 });
        const task = createTask('hold');
        const answer = send(s, 'hold', task);
        await s.handler.whenRunning(task.id);
        const stopped = s.server.stop();
        const refused = await failure(send(s, 'echo late'));
        expect(refused.code).toBe('UNAVAILABLE');
        await stopped;
        expect((await answer).state).toBe('canceled');
        expect(s.handler.calls.filter((call) => call === 'handleTask')).toHaveLength(1);
      });

      it('ends an open stream with one final canceled status when the grace is over', async () => {
        const s = await setup({ stopGraceMs: 200 });
        const task = createTask('hold');
        const iterator = s.client.subscribe(s.url, task)[Symbol.asyncIterator]();
        expect((await iterator.next()).value).toMatchObject({ state: 'working' });
        await s.handler.whenRunning(task.id);
        const stopped = s.server.stop();
        const rest: TaskEvent[] = [];
        for (let step = await iterator.next(); !step.done; step = await iterator.next())
          rest.push(step.value);
        await stopped;
        expect(finals(rest)).toHaveLength(1);
        expect(rest.at(-1)).toMatchObject({ state: 'canceled', final: true });
        expect((rest.at(-1) as TaskStatusEvent).task?.metadata.cancel_reason).toBe(SHUTDOWN_REASON);
      });

      const readiness = harness.readiness?.bind(harness);
      if (readiness) {
        it('reports ready while serving and stopping while it drains', async () => {
          const s = await setup({ stopGraceMs: 1_000 });
          expect(await readiness(s.server)).toBe('ready');
          const task = createTask('hold');
          const answer = send(s, 'hold', task);
          await s.handler.whenRunning(task.id);
          const stopped = s.server.stop();
          expect(await readiness(s.server)).toBe('stopping');
          await stopped;
          await answer;
        });
      }
    });

    const rawPostUrl = harness.rawPostUrl?.bind(harness);
    if (rawPostUrl) {
      describe('request bodies', () => {
        it('refuses a compressed body with 400 and never inflates it', async () => {
          const s = await setup();
          const body = gzipSync(Buffer.from(JSON.stringify({ task: createTask('echo zipped') })));
          const status = await rawPost(rawPostUrl(s.server), body, {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
          });
          expect(status).toBe(400);
          expect(s.handler.calls).toEqual([]);
        });
      });
    }
  });
}
