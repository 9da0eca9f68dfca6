/**
 * Interop C11/C12: principal and tenant isolation through every A2A method on both bindings. Another
 * principal's task, or the same principal's task named under another tenant, must be answered
 * exactly as a random id is: same HTTP status, same content type, and the same body byte for byte
 * once the id is replaced. Nothing about the task may change, and lists never show it.
 */
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { RawResponse } from '@agent/test-support';
import {
  BINDINGS,
  asTask,
  collect,
  failureOf,
  listRequest,
  rawRest,
  rawRpc,
  sdkClient,
  startInterop,
  userMessage,
  withoutId,
  type AuthMode,
  type InteropServer,
  type Who,
} from './test-support/harness.js';

const HOOK = 'http://127.0.0.1:9/hook';
const PUSH = { allowPrivateNetworks: true, maxAttempts: 1, timeoutMs: 200 };

/** Alice's tasks, in every state an operation cares about. */
interface Fixture {
  running: string;
  asked: string;
  done: string;
  configId: string;
}

type RpcProbe = (taskId: string, configId: string) => [string, Record<string, unknown>];
type RestProbe = (taskId: string, configId: string) => ['GET' | 'POST' | 'DELETE', string, unknown];

/** Every JSON-RPC method that names a task. */
const RPC_PROBES: Record<string, RpcProbe> = {
  GetTask: (id) => ['GetTask', { id }],
  CancelTask: (id) => ['CancelTask', { id }],
  SubscribeToTask: (id) => ['SubscribeToTask', { id }],
  'SendMessage{taskId}': (id) => [
    'SendMessage',
    {
      message: {
        messageId: 'probe-message',
        role: 'ROLE_USER',
        parts: [{ text: 'echo hijack' }],
        taskId: id,
      },
    },
  ],
  'SendStreamingMessage{taskId}': (id) => [
    'SendStreamingMessage',
    {
      message: {
        messageId: 'probe-message',
        role: 'ROLE_USER',
        parts: [{ text: 'echo hijack' }],
        taskId: id,
      },
    },
  ],
  CreateTaskPushNotificationConfig: (id) => ['CreateTaskPushNotificationConfig', { taskId: id, url: HOOK }],
  GetTaskPushNotificationConfig: (id, config) => [
    'GetTaskPushNotificationConfig',
    { taskId: id, id: config },
  ],
  ListTaskPushNotificationConfigs: (id) => ['ListTaskPushNotificationConfigs', { taskId: id }],
  DeleteTaskPushNotificationConfig: (id, config) => [
    'DeleteTaskPushNotificationConfig',
    { taskId: id, id: config },
  ],
};

/** Every HTTP+JSON route that names a task. */
const REST_PROBES: Record<string, RestProbe> = {
  'GET /tasks/{id}': (id) => ['GET', `/tasks/${id}`, undefined],
  'POST /tasks/{id}:cancel': (id) => ['POST', `/tasks/${id}:cancel`, {}],
  'GET /tasks/{id}:subscribe': (id) => ['GET', `/tasks/${id}:subscribe`, undefined],
  'POST /tasks/{id}:subscribe': (id) => ['POST', `/tasks/${id}:subscribe`, {}],
  'POST /message:send{taskId}': (id) => [
    'POST',
    '/message:send',
    {
      message: {
        messageId: 'probe-message',
        role: 'ROLE_USER',
        parts: [{ text: 'echo hijack' }],
        taskId: id,
      },
    },
  ],
  'POST /message:stream{taskId}': (id) => [
    'POST',
    '/message:stream',
    {
      message: {
        messageId: 'probe-message',
        role: 'ROLE_USER',
        parts: [{ text: 'echo hijack' }],
        taskId: id,
      },
    },
  ],
  'POST /tasks/{id}/pushNotificationConfigs': (id) => [
    'POST',
    `/tasks/${id}/pushNotificationConfigs`,
    { url: HOOK },
  ],
  'GET /tasks/{id}/pushNotificationConfigs': (id) => [
    'GET',
    `/tasks/${id}/pushNotificationConfigs`,
    undefined,
  ],
  'GET /tasks/{id}/pushNotificationConfigs/{cfg}': (id, config) => [
    'GET',
    `/tasks/${id}/pushNotificationConfigs/${config}`,
    undefined,
  ],
  'DELETE /tasks/{id}/pushNotificationConfigs/{cfg}': (id, config) => [
    'DELETE',
    `/tasks/${id}/pushNotificationConfigs/${config}`,
    undefined,
  ],
};

/** Who asks, and under which tenant ('' = none named). */
interface Asker {
  who: Who;
  tenant: string;
}

function rpcCall(
  server: InteropServer,
  asker: Asker,
  probe: RpcProbe,
  taskId: string,
  configId: string,
): Promise<RawResponse> {
  const [method, params] = probe(taskId, configId);
  const withTenant = asker.tenant === '' ? params : { ...params, tenant: asker.tenant };
  return rawRpc(server, method, withTenant, {
    id: 11,
    headers: server.headers(asker.who),
    accept: 'text/event-stream',
  });
}

function restCall(
  server: InteropServer,
  asker: Asker,
  probe: RestProbe,
  taskId: string,
  configId: string,
): Promise<RawResponse> {
  const [method, path, body] = probe(taskId, configId);
  const prefix = asker.tenant === '' ? '' : `/${asker.tenant}`;
  return rawRest(server, method, `${prefix}${path}`, {
    headers: server.headers(asker.who),
    accept: 'text/event-stream',
    ...(body === undefined ? {} : { body }),
  });
}

/** What must be identical: status, content type and the body with the id replaced. */
function shape(response: RawResponse, id: string): { status: number; type: unknown; body: string } {
  return {
    status: response.status,
    type: response.headers['content-type'],
    body: withoutId(response.text, id),
  };
}

function expectNotFound(response: RawResponse, binding: 'JSONRPC' | 'HTTP+JSON', what: string): void {
  if (binding === 'JSONRPC') {
    const body = response.json as {
      id?: unknown;
      error?: { code?: number; data?: Array<{ reason?: string }> };
    };
    if (response.status !== 200 || body?.error?.code !== -32001) {
      throw new Error(`${what}: expected HTTP 200 with -32001, got ${response.status} ${response.text}`);
    }
    expect(body.id).toBe(11);
    expect(body.error.data?.[0]?.reason).toBe('TASK_NOT_FOUND');
  } else {
    const body = response.json as {
      error?: { code?: number; status?: string; details?: Array<{ reason?: string }> };
    };
    if (response.status !== 404 || body?.error?.status !== 'NOT_FOUND') {
      throw new Error(`${what}: expected 404 NOT_FOUND, got ${response.status} ${response.text}`);
    }
    expect(body.error.details?.[0]?.reason).toBe('TASK_NOT_FOUND');
  }
}

/** Alice's fixture tasks (under `tenant`), through the official client. */
async function aliceFixture(server: InteropServer, alice: Client, tenant: string): Promise<Fixture> {
  const running = asTask(await alice.sendMessage(userMessage('hold', { returnImmediately: true, tenant })));
  await server.agent.whenRunning(running.id);
  const asked = asTask(await alice.sendMessage(userMessage('ask who', { tenant })));
  expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const done = asTask(await alice.sendMessage(userMessage('echo done', { tenant })));
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const config = await alice.createTaskPushNotificationConfig({
    tenant,
    id: '',
    taskId: running.id,
    url: HOOK,
    token: '',
    authentication: undefined,
  });
  expect(config.id).not.toBe('');
  return { running: running.id, asked: asked.id, done: done.id, configId: config.id };
}

/** Alice's view after the probes: nothing changed. */
async function expectUntouched(alice: Client, fixture: Fixture, tenant: string): Promise<void> {
  const running = await alice.getTask({ tenant, id: fixture.running });
  expect(running.status?.state).toBe(TaskState.TASK_STATE_WORKING);
  expect(running.history).toHaveLength(1);
  const asked = await alice.getTask({ tenant, id: fixture.asked });
  expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  expect(asked.history).toHaveLength(2);
  const done = await alice.getTask({ tenant, id: fixture.done });
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const configs = await alice.listTaskPushNotificationConfig({
    tenant,
    taskId: fixture.running,
    pageSize: 0,
    pageToken: '',
  });
  expect(configs.configs.map((config) => config.id)).toEqual([fixture.configId]);
}

/**
 * Runs every probe as `outsider` against each of Alice's tasks and against a random id, and checks
 * the answers are indistinguishable and are TASK_NOT_FOUND.
 */
async function probeAll(server: InteropServer, fixture: Fixture, outsider: Asker): Promise<string[]> {
  const mismatches: string[] = [];
  const targets: Array<[string, string]> = [
    ['running', fixture.running],
    ['input-required', fixture.asked],
    ['completed', fixture.done],
  ];
  for (const binding of BINDINGS) {
    const probes: Array<[string, (taskId: string) => Promise<RawResponse>]> =
      binding === 'JSONRPC'
        ? Object.entries(RPC_PROBES).map(([name, probe]) => [
            name,
            (taskId: string) => rpcCall(server, outsider, probe, taskId, fixture.configId),
          ])
        : Object.entries(REST_PROBES).map(([name, probe]) => [
            name,
            (taskId: string) => restCall(server, outsider, probe, taskId, fixture.configId),
          ]);
    for (const [name, call] of probes) {
      const randomId = randomUUID();
      const unknown = await call(randomId);
      try {
        expectNotFound(unknown, binding, `${binding} ${name} on a random id`);
      } catch (error) {
        mismatches.push(String(error instanceof Error ? error.message : error));
        continue;
      }
      for (const [label, taskId] of targets) {
        const theirs = await call(taskId);
        const a = shape(theirs, taskId);
        const b = shape(unknown, randomId);
        if (JSON.stringify(a) !== JSON.stringify(b)) {
          mismatches.push(
            `${binding} ${name} on Alice's ${label} task as ${outsider.who}@${outsider.tenant || '(none)'}:\n` +
              `  got      ${a.status} ${String(a.type)} ${a.body}\n  random id ${b.status} ${String(b.type)} ${b.body}`,
          );
        }
      }
    }
  }
  return mismatches;
}

function listIds(response: RawResponse, binding: 'JSONRPC' | 'HTTP+JSON'): string[] {
  const body =
    binding === 'JSONRPC'
      ? (response.json as { result?: { tasks?: Array<{ id: string }> } }).result
      : (response.json as { tasks?: Array<{ id: string }> });
  if (!body?.tasks) throw new Error(`no task list in ${response.status} ${response.text}`);
  return body.tasks.map((task) => task.id);
}

describe.each(['apiKey', 'bearer'] as AuthMode[])('C11 principal isolation, auth %s', (auth) => {
  let server: InteropServer;
  let alice: Client;
  let fixture: Fixture;

  beforeAll(async () => {
    server = await startInterop({ auth, a2a: { push: PUSH } });
    alice = await sdkClient(server, 'alice');
    fixture = await aliceFixture(server, alice, '');
  });
  afterAll(async () => {
    await server.close();
  });

  it('Bob gets exactly the random-id answer from every method on both bindings, and nothing changes', async () => {
    const mismatches = await probeAll(server, fixture, { who: 'bob', tenant: '' });
    expect(mismatches).toEqual([]);
    await expectUntouched(alice, fixture, '');
    expect(server.agent.cancels).toEqual([]);
  });

  it('control: the same comparison tells a task its caller owns apart from a random id', async () => {
    const randomId = randomUUID();
    const alice: Asker = { who: 'alice', tenant: '' };
    const mine = await rpcCall(server, alice, RPC_PROBES.GetTask!, fixture.done, fixture.configId);
    const unknown = await rpcCall(server, alice, RPC_PROBES.GetTask!, randomId, fixture.configId);
    expect(shape(mine, fixture.done)).not.toEqual(shape(unknown, randomId));
  });

  it("Bob's lists never show Alice's tasks", async () => {
    const alices = [fixture.running, fixture.asked, fixture.done];
    const rpc = listIds(await rawRpc(server, 'ListTasks', {}, { headers: server.headers('bob') }), 'JSONRPC');
    const rest = listIds(
      await rawRest(server, 'GET', '/tasks', { headers: server.headers('bob') }),
      'HTTP+JSON',
    );
    for (const id of alices) {
      expect(rpc).not.toContain(id);
      expect(rest).not.toContain(id);
    }
    const own = listIds(
      await rawRpc(server, 'ListTasks', {}, { headers: server.headers('alice') }),
      'JSONRPC',
    );
    for (const id of alices) expect(own).toContain(id);
  });

  it.each(BINDINGS)("Bob's official client gets TaskNotFound on Alice's tasks over %s", async (binding) => {
    const bob = await sdkClient(server, 'bob', { binding });
    const id = fixture.running;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['getTask', () => bob.getTask({ tenant: '', id })],
      ['cancelTask', () => bob.cancelTask({ tenant: '', id, metadata: undefined })],
      ['resubscribeTask', () => collect(bob.resubscribeTask({ tenant: '', id }))],
      ['sendMessage', () => bob.sendMessage(userMessage('echo hijack', { taskId: fixture.asked }))],
      [
        'sendMessageStream',
        () => collect(bob.sendMessageStream(userMessage('echo hijack', { taskId: fixture.asked }))),
      ],
      [
        'getTaskPushNotificationConfig',
        () => bob.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: fixture.configId }),
      ],
      [
        'listTaskPushNotificationConfig',
        () => bob.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' }),
      ],
      [
        'deleteTaskPushNotificationConfig',
        () => bob.deleteTaskPushNotificationConfig({ tenant: '', taskId: id, id: fixture.configId }),
      ],
      [
        'createTaskPushNotificationConfig',
        () =>
          bob.createTaskPushNotificationConfig({
            tenant: '',
            id: '',
            taskId: id,
            url: HOOK,
            token: '',
            authentication: undefined,
          }),
      ],
    ];
    const wrong: string[] = [];
    for (const [name, run] of calls) {
      const error = await failureOf(run);
      if (!(error instanceof TaskNotFoundError)) wrong.push(`${name}: ${String(error)}`);
    }
    expect(wrong).toEqual([]);
    await expectUntouched(alice, fixture, '');
  });
});

describe.each(['none', 'apiKey', 'bearer'] as AuthMode[])('C12 tenant isolation, auth %s', (auth) => {
  let server: InteropServer;
  let alice: Client;
  let fixture: Fixture;

  beforeAll(async () => {
    server = await startInterop({ auth, a2a: { push: PUSH, tenant: 't1' } });
    alice = await sdkClient(server, 'alice');
    // The card's interface tenant: the SDK fills params.tenant with it.
    fixture = await aliceFixture(server, alice, '');
  });
  afterAll(async () => {
    await server.close();
  });

  it("the official client echoes the card's interface tenant on both bindings", async () => {
    expect(server.agent.calls.map((entry) => entry.ctx.tenant)).toEqual(['t1', 't1', 't1']);
    const rest = await sdkClient(server, 'alice', { binding: 'HTTP+JSON' });
    const task = asTask(await rest.sendMessage(userMessage('echo via rest')));
    expect(server.agent.calls.at(-1)!.ctx.tenant).toBe('t1');
    expect((await alice.getTask({ tenant: '', id: task.id })).id).toBe(task.id);
    const found = await rawRpc(
      server,
      'GetTask',
      { id: fixture.done, tenant: 't1' },
      { headers: server.headers('alice') },
    );
    expect((found.json as { result?: { id?: string } }).result?.id).toBe(fixture.done);
    const prefixed = await rawRest(server, 'GET', `/t1/tasks/${fixture.done}`, {
      headers: server.headers('alice'),
    });
    expect((prefixed.json as { id?: string }).id).toBe(fixture.done);
  });

  it.each(['t2', ''])(
    'the same principal under tenant "%s" gets exactly the random-id answer everywhere',
    async (tenant) => {
      const mismatches = await probeAll(server, fixture, { who: 'alice', tenant });
      expect(mismatches).toEqual([]);
      await expectUntouched(alice, fixture, '');
    },
  );

  it("lists under another tenant never show t1's tasks", async () => {
    const alices = [fixture.running, fixture.asked, fixture.done];
    for (const tenant of ['t2', '']) {
      const rpc = listIds(
        await rawRpc(server, 'ListTasks', tenant ? { tenant } : {}, { headers: server.headers('alice') }),
        'JSONRPC',
      );
      const rest = listIds(
        await rawRest(server, 'GET', tenant ? `/${tenant}/tasks` : '/tasks', {
          headers: server.headers('alice'),
        }),
        'HTTP+JSON',
      );
      for (const id of alices) {
        expect(rpc).not.toContain(id);
        expect(rest).not.toContain(id);
      }
    }
    const sdkT2 = await alice.listTasks(listRequest({ tenant: 't2' }));
    for (const id of alices) expect(sdkT2.tasks.map((task) => task.id)).not.toContain(id);
    const sdkT1 = await alice.listTasks(listRequest());
    for (const id of alices) expect(sdkT1.tasks.map((task) => task.id)).toContain(id);
  });

  it.each(BINDINGS)('the official client naming tenant t2 over %s gets TaskNotFound', async (binding) => {
    const client = await sdkClient(server, 'alice', { binding });
    const error = await failureOf(() => client.getTask({ tenant: 't2', id: fixture.done }));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    const cancel = await failureOf(() =>
      client.cancelTask({ tenant: 't2', id: fixture.running, metadata: undefined }),
    );
    expect(cancel).toBeInstanceOf(TaskNotFoundError);
    await expectUntouched(alice, fixture, '');
  });

  if (auth !== 'none') {
    it('a principal limited to t1 naming t2 is refused before any lookup: same answer for a real and a random id', async () => {
      const carol = await sdkClient(server, 'carol');
      const own = asTask(await carol.sendMessage(userMessage('echo carol')));
      const allowed = await rawRpc(
        server,
        'GetTask',
        { id: own.id, tenant: 't1' },
        { headers: server.headers('carol') },
      );
      expect((allowed.json as { result?: { id?: string } }).result?.id).toBe(own.id);
      const [real, random] = [own.id, randomUUID()];
      const a = await rawRpc(
        server,
        'GetTask',
        { id: real, tenant: 't2' },
        { headers: server.headers('carol') },
      );
      const b = await rawRpc(
        server,
        'GetTask',
        { id: random, tenant: 't2' },
        { headers: server.headers('carol') },
      );
      expect(shape(a, real)).toEqual(shape(b, random));
      const error = (a.json as { error?: { data?: Array<{ reason?: string }> } }).error;
      expect(error?.data?.[0]?.reason).toBe('PERMISSION_DENIED');
      const restA = await rawRest(server, 'GET', `/t2/tasks/${real}`, { headers: server.headers('carol') });
      const restB = await rawRest(server, 'GET', `/t2/tasks/${random}`, { headers: server.headers('carol') });
      expect(shape(restA, real)).toEqual(shape(restB, random));
      expect(restA.status).toBe(403);
      const list = await rawRest(server, 'GET', '/t2/tasks', { headers: server.headers('carol') });
      expect(list.status).toBe(403);
    });
  }
});
