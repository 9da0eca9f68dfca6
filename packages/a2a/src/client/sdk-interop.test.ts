/**
 * Our A2A client against the official SDK's server (`@a2a-js/sdk` 1.3.0 on Express): card
 * discovery, the version header, send/stream/get/list/cancel on both bindings, credentials, tenants
 * and error mapping.
 */
import { createHmac } from 'node:crypto';
import { APIKeyAuth, BearerTokenAuth } from '@agent/auth';
import {
  CLIENT_OPERATIONS,
  createMessage,
  createTask,
  messageText,
  validateTask,
  type AgentCard,
  type Task,
  type TaskEvent,
  type TaskList,
} from '@agent/core';
import {
  startSdkServer,
  type SdkBinding,
  type SdkServer,
  type SdkServerOptions,
} from '../test-support/sdk-server.js';
import { A2ATransport } from './a2a-transport.js';
import type { A2ATransportOptions } from './options.js';

let server: SdkServer | undefined;
let transport: A2ATransport | undefined;

async function setup(
  serverOptions: SdkServerOptions = {},
  transportOptions: A2ATransportOptions = {},
): Promise<{ server: SdkServer; transport: A2ATransport }> {
  server = await startSdkServer(serverOptions);
  transport = new A2ATransport(transportOptions);
  return { server, transport };
}

afterEach(async () => {
  await transport?.stop();
  await server?.close();
  server = undefined;
  transport = undefined;
});

beforeAll(() => {
  // The SDK logs every error it answers with.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});

function sendTask(t: A2ATransport, url: string, task: Task): Promise<Task> {
  return t.send<Task>(CLIENT_OPERATIONS.send_task, url, task).then((result) => validateTask(result));
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const out: TaskEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The paths the bindings were called on (the card fetch left out). */
function bindingPaths(s: SdkServer): string[] {
  return s.requests.filter((request) => request.path.startsWith('/a2a')).map((request) => request.path);
}

const BOTH: SdkBinding[] = ['JSONRPC', 'HTTP+JSON'];

describe('S1 card resolution', () => {
  it('reads the canonical card, once per base URL, and translates it for get_card', async () => {
    const { server: s, transport: t } = await setup(
      { apiKey: 'k' },
      {
        authenticator: new APIKeyAuth({ validKeys: { k: [] } }),
        credentials: 'k',
      },
    );
    await sendTask(t, s.url, createTask('one'));
    await sendTask(t, `${s.url}/`, createTask('two'));
    expect(s.requests.filter((r) => r.path === '/.well-known/agent-card.json')).toHaveLength(1);
    const card = await t.send<AgentCard>(CLIENT_OPERATIONS.get_card, s.url);
    expect(card).toMatchObject({
      name: 'sdk-echo',
      url: `${s.url}/a2a/jsonrpc`,
      capabilities: { streaming: true },
      securitySchemes: { apiKey: { type: 'apiKey' } },
    });
  });

  it("tolerates the SDK's non-canonical {scheme: {$case}} entries", async () => {
    const { server: s, transport: t } = await setup({ bearer: 'tok', nonCanonicalCard: true });
    const raw = s.card.securitySchemes as Record<string, Record<string, unknown>>;
    expect(raw.bearer!.scheme).toMatchObject({ $case: 'httpAuthSecurityScheme' });
    const card = await t.send<AgentCard>(CLIENT_OPERATIONS.get_card, s.url);
    expect(card.name).toBe('sdk-echo');
    expect(card.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it("follows the card's interface order unless bindings says otherwise", async () => {
    const { server: s, transport: t } = await setup({ bindings: ['HTTP+JSON', 'JSONRPC'] });
    await sendTask(t, s.url, createTask('rest first'));
    expect(bindingPaths(s)).toEqual(['/a2a/rest/message:send']);
    const preferring = new A2ATransport({ bindings: ['JSONRPC'] });
    try {
      await sendTask(preferring, s.url, createTask('rpc please'));
    } finally {
      await preferring.stop();
    }
    expect(bindingPaths(s).at(-1)).toBe('/a2a/jsonrpc');
  });

  it('refuses a card without a usable interface, and fetches it again on the next call', async () => {
    const { server: s } = await setup({ bindings: ['HTTP+JSON'] });
    const t = (transport = new A2ATransport({ bindings: ['JSONRPC'] }));
    await expect(sendTask(t, s.url, createTask('x'))).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
    });
    await expect(sendTask(t, s.url, createTask('x'))).rejects.toMatchObject({
      code: 'UNSUPPORTED_OPERATION',
    });
    expect(s.requests.filter((r) => r.path === '/.well-known/agent-card.json')).toHaveLength(2);
  });
});

describe.each(BOTH)('over %s', (binding) => {
  const only = { bindings: [binding] };

  it('S2 sends A2A-Version: 1.0 on every call', async () => {
    const { server: s, transport: t } = await setup(only);
    const task = await sendTask(t, s.url, createTask('hi'));
    await t.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: task.id });
    await collect(t.subscribe(s.url, createTask('streamed')));
    const calls = s.requests.filter((r) => r.path.startsWith('/a2a'));
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(call.headers['a2a-version']).toBe('1.0');
  });

  it('S3 decodes a {task} result: states, roles, artifacts, the context as session', async () => {
    const { server: s, transport: t } = await setup(only);
    const task = await sendTask(t, s.url, createTask('hello'));
    expect(task.state).toBe('completed');
    expect(task.messages.map((m) => [m.role, messageText(m)])).toEqual([
      ['user', 'hello'],
      ['agent', 'echo: hello'],
    ]);
    expect(task.artifacts).toMatchObject([{ id: 'echo', parts: [{ type: 'text', content: 'hello' }] }]);
    expect(task.metadata.session_id).toEqual(expect.any(String));
    const failed = await sendTask(t, s.url, createTask('fail'));
    expect(failed.state).toBe('failed');
  });

  it('S3 decodes a {message} result as a completed task holding the reply', async () => {
    const { server: s, transport: t } = await setup(only);
    const sent = createTask('message:hi');
    const task = await sendTask(t, s.url, sent);
    expect(task).toMatchObject({ id: sent.id, state: 'completed' });
    expect(task.messages.map((m) => [m.role, messageText(m)])).toEqual([
      ['user', 'message:hi'],
      ['agent', 'echo: hi'],
    ]);
  });

  it('continues a task the server minted, and starts a new one for any other id', async () => {
    const { server: s, transport: t } = await setup(only);
    const asked = await sendTask(t, s.url, createTask('input'));
    expect(asked.state).toBe('input-required');
    const more = { ...asked, messages: [...asked.messages, createMessage('more')] };
    const done = await sendTask(t, s.url, more);
    expect(done).toMatchObject({ id: asked.id, state: 'completed' });
    expect(messageText(done.messages.at(-1))).toBe('continued: more');
    const fresh = await sendTask(t, s.url, createTask('new', { id: 'mine' }));
    expect(fresh.id).not.toBe('mine');
  });

  it('S4 streams a task: its status, artifact and one final status', async () => {
    const { server: s, transport: t } = await setup(only);
    const events = await collect(t.subscribe(s.url, createTask('streamed')));
    expect(events.map((e) => [e.type, 'state' in e ? e.state : undefined])).toEqual([
      ['task.status', 'submitted'],
      ['task.artifact', undefined],
      ['task.status', 'completed'],
    ]);
    const final = events.at(-1) as Extract<TaskEvent, { type: 'task.status' }>;
    expect(final.final).toBe(true);
    expect(events.filter((e) => e.type === 'task.status' && e.final)).toHaveLength(1);
    expect(messageText(final.task!.messages.at(-1))).toBe('echo: streamed');
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('S4 streams a message reply as one final completed status', async () => {
    const { server: s, transport: t } = await setup(only);
    const sent = createTask('message:yo');
    const events = await collect(t.subscribe(s.url, sent));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'task.status',
      state: 'completed',
      final: true,
      task_id: sent.id,
    });
  });

  it('S4 finishes a stream the server closed early as failed INTERNAL', async () => {
    const { server: s, transport: t } = await setup(only);
    const events = await collect(t.subscribe(s.url, createTask('hang-up')));
    expect(events.map((e) => e.type)).toEqual(['task.status', 'task.status', 'task.error', 'task.status']);
    const final = events.at(-1) as Extract<TaskEvent, { type: 'task.status' }>;
    expect(final).toMatchObject({ state: 'failed', final: true });
    expect(final.task!.metadata.error).toMatchObject({
      code: 'INTERNAL',
      message: expect.stringContaining('ended before a final state'),
    });
  });

  it('S5 cancels a running task; a finished one is TaskNotCancelable, an unknown one TaskNotFound', async () => {
    const { server: s, transport: t } = await setup(only);
    const stream = t.subscribe(s.url, createTask('slow'))[Symbol.asyncIterator]();
    const first = await stream.next();
    const id = (first.value as TaskEvent).task_id;
    const canceled = validateTask(
      await t.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: id, reason: 'enough' }),
    );
    expect(canceled.state).toBe('canceled');
    const rest: TaskEvent[] = [];
    for (let step = await stream.next(); !step.done; step = await stream.next()) rest.push(step.value);
    expect(rest.at(-1)).toMatchObject({ type: 'task.status', state: 'canceled', final: true });
    const done = await sendTask(t, s.url, createTask('x'));
    await expect(t.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: done.id })).rejects.toMatchObject({
      code: 'TASK_NOT_CANCELABLE',
    });
    await expect(t.send(CLIENT_OPERATIONS.cancel_task, s.url, { task_id: 'nope' })).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
    });
  });

  it('gets and lists tasks', async () => {
    const { server: s, transport: t } = await setup(only);
    const task = await sendTask(t, s.url, createTask('kept'));
    const got = validateTask(
      await t.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: task.id, history_length: 1 }),
    );
    expect(got).toMatchObject({ id: task.id, state: 'completed' });
    expect(got.messages.map(messageText)).toEqual(['echo: kept']);
    const list = await t.send<TaskList>(CLIENT_OPERATIONS.list_tasks, s.url, {
      session_id: task.metadata.session_id,
    });
    expect(list.tasks.map((entry) => entry.id)).toEqual([task.id]);
    expect(list.next_page_token).toBe('');
  });

  it('S7 echoes the interface tenant, and the tenant option instead', async () => {
    const { server: s, transport: t } = await setup({ ...only, tenant: 't1' });
    await sendTask(t, s.url, createTask('a'));
    const other = new A2ATransport({ ...only, tenant: 't2' });
    try {
      await sendTask(other, s.url, createTask('b'));
    } finally {
      await other.stop();
    }
    expect(s.tenants).toEqual(['t1', 't2']);
    if (binding === 'HTTP+JSON') {
      expect(bindingPaths(s)).toEqual(['/a2a/rest/t1/message:send', '/a2a/rest/t2/message:send']);
    }
  });

  it('S7 keeps tenants apart and sends none when the interface names none', async () => {
    const { server: s, transport: t } = await setup({ ...only, tenant: 't1' });
    const task = await sendTask(t, s.url, createTask('a'));
    const other = new A2ATransport({ ...only, tenant: 't2' });
    try {
      await expect(other.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: task.id })).rejects.toMatchObject(
        {
          code: 'TASK_NOT_FOUND',
        },
      );
    } finally {
      await other.stop();
    }
    const plain = await startSdkServer(only);
    try {
      await sendTask(t, plain.url, createTask('b'));
      expect(plain.tenants).toEqual([undefined]);
    } finally {
      await plain.close();
    }
  });

  it('S8 maps A2A errors to typed native errors', async () => {
    const { server: s, transport: t } = await setup(only);
    await expect(t.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: 'missing' })).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
      message: expect.stringContaining('missing'),
    });
    const done = await sendTask(t, s.url, createTask('x'));
    await expect(collect(t.subscribeTask(s.url, done.id))).resolves.toEqual([
      expect.objectContaining({ type: 'task.status', state: 'completed', final: true }),
    ]);
    await expect(collect(t.subscribeTask(s.url, 'missing'))).rejects.toMatchObject({
      code: 'TASK_NOT_FOUND',
    });
  });
});

describe('S6 credentials', () => {
  it('sends an API key through the authenticator, lazily', async () => {
    const { server: s, transport: t } = await setup(
      { apiKey: 'secret-key' },
      {
        authenticator: new APIKeyAuth({ validKeys: { 'secret-key': [] } }),
        credentials: 'secret-key',
      },
    );
    const task = await sendTask(t, s.url, createTask('hi'));
    expect(task.state).toBe('completed');
    const call = s.requests.find((r) => r.path === '/a2a/jsonrpc');
    expect(call?.headers['x-api-key']).toBe('secret-key');
  });

  it('sends a bearer token', async () => {
    const token = jwt('bearer-secret', { sub: 'alice' });
    const { server: s, transport: t } = await setup(
      { bearer: token },
      {
        authenticator: new BearerTokenAuth({ secret: 'bearer-secret' }),
        credentials: token,
      },
    );
    await expect(sendTask(t, s.url, createTask('hi'))).resolves.toMatchObject({ state: 'completed' });
  });

  it('surfaces a 401 as UNAUTHENTICATED carrying the status, on both bindings and on streams', async () => {
    const { server: s, transport: t } = await setup(
      { apiKey: 'right' },
      {
        authenticator: new APIKeyAuth({ validKeys: { wrong: [] } }),
        credentials: 'wrong',
      },
    );
    await expect(sendTask(t, s.url, createTask('hi'))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      status: 401,
    });
    await expect(collect(t.subscribe(s.url, createTask('hi')))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
    });
    const rest = new A2ATransport({ bindings: ['HTTP+JSON'] });
    try {
      await expect(rest.send(CLIENT_OPERATIONS.get_task, s.url, { task_id: 'x' })).rejects.toMatchObject({
        code: 'UNAUTHENTICATED',
      });
    } finally {
      await rest.stop();
    }
  });
});

/** A compact HS256 JWT. */
function jwt(secret: string, claims: Record<string, unknown>): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ iat: Math.floor(Date.now() / 1000), ...claims })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}
