/**
 * Interop C5/C6/C8/C9/C14/C17: the official SDK client sends messages to our server on both
 * bindings, with authentication off, by API key and by bearer token: blocking and non-blocking sends,
 * history lengths, task lists, multi-turn tasks and capability gating.
 */
import { Role, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  PushNotificationNotSupportedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import {
  AUTH_MODES,
  BINDINGS,
  asTask,
  failureOf,
  listRequest,
  rawRest,
  rawRpc,
  sdkClient,
  sdkCodeOf,
  startInterop,
  texts,
  userMessage,
  waitForTerminal,
  type InteropServer,
} from './test-support/harness.js';

const MATRIX = AUTH_MODES.flatMap((auth) => BINDINGS.map((binding) => [auth, binding] as const));

describe.each(MATRIX)('auth %s over %s', (auth, binding) => {
  let server: InteropServer;
  let alice: Client;
  let bob: Client;

  beforeAll(async () => {
    server = await startInterop({ auth });
    alice = await sdkClient(server, 'alice', { binding });
    bob = await sdkClient(server, 'bob', { binding });
  });
  afterAll(async () => {
    await server.close();
  });

  it('C5: a blocking SendMessage answers the terminal Task with its artifacts', async () => {
    const task = asTask(await alice.sendMessage(userMessage('echo hello world')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).not.toBe('');
    expect(task.contextId).not.toBe('');
    expect(task.artifacts.flatMap((artifact) => texts(artifact.parts))).toEqual(['hello', 'world']);
    for (const artifact of task.artifacts) expect(artifact.artifactId).not.toBe('');
    expect(task.status?.message?.role).toBe(Role.ROLE_AGENT);
    expect(texts(task.status?.message?.parts)).toEqual(['hello world']);
    expect(task.history.map((message) => message.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
    for (const message of task.history) {
      expect(message.taskId).toBe(task.id);
      expect(message.contextId).toBe(task.contextId);
    }
    expect(task.status?.timestamp).toMatch(/Z$/);
  });

  it('C5: the server mints the task id and keeps the client contextId', async () => {
    const contextId = `ctx-${randomUUID()}`;
    const first = asTask(await alice.sendMessage(userMessage('echo one', { contextId })));
    const second = asTask(await alice.sendMessage(userMessage('echo two', { contextId })));
    expect(first.contextId).toBe(contextId);
    expect(second.contextId).toBe(contextId);
    expect(second.id).not.toBe(first.id);
  });

  it('C6: returnImmediately answers a non-terminal Task at once; polling reaches COMPLETED', async () => {
    const started = Date.now();
    const task = asTask(await alice.sendMessage(userMessage('sleep 400', { returnImmediately: true })));
    expect(Date.now() - started).toBeLessThan(350);
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status?.state);
    const done = await waitForTerminal(alice, task.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('C8: GetTask historyLength unset / 0 / 1', async () => {
    const task = asTask(await alice.sendMessage(userMessage('echo remember me')));
    const all = await alice.getTask({ tenant: '', id: task.id });
    expect(all.history.map((message) => message.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
    const none = await alice.getTask({ tenant: '', id: task.id, historyLength: 0 });
    expect(none.history).toEqual([]);
    const last = await alice.getTask({ tenant: '', id: task.id, historyLength: 1 });
    expect(last.history.map((message) => message.role)).toEqual([Role.ROLE_AGENT]);
    expect(texts(last.history[0]!.parts)).toEqual(['remember me']);
    // The raw answer for 0 has no history key at all (ProtoJSON omits what is empty).
    const raw =
      binding === 'JSONRPC'
        ? (
            (
              await rawRpc(
                server,
                'GetTask',
                { id: task.id, historyLength: 0 },
                { headers: server.headers('alice') },
              )
            ).json as { result: Record<string, unknown> }
          ).result
        : ((
            await rawRest(server, 'GET', `/tasks/${task.id}?historyLength=0`, {
              headers: server.headers('alice'),
            })
          ).json as Record<string, unknown>);
    expect(raw).not.toHaveProperty('history');
    expect(raw.id).toBe(task.id);
  });

  it('C9: ListTasks pages through the caller\'s tasks, newest first, with nextPageToken "" at the end', async () => {
    const contextId = `list-${randomUUID()}`;
    const ids: string[] = [];
    for (const word of ['a', 'b', 'c']) {
      ids.push(asTask(await alice.sendMessage(userMessage(`echo ${word}`, { contextId }))).id);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const whole = await alice.listTasks(listRequest({ contextId }));
    expect(whole.nextPageToken).toBe('');
    if (auth !== 'none') {
      // Bob's task in the same context is not Alice's.
      const bobs = asTask(await bob.sendMessage(userMessage('echo bob', { contextId })));
      const again = await alice.listTasks(listRequest({ contextId }));
      expect(again.tasks.map((task) => task.id)).not.toContain(bobs.id);
      expect((await bob.listTasks(listRequest({ contextId }))).tasks.map((task) => task.id)).toEqual([
        bobs.id,
      ]);
    }
    expect(whole.tasks.map((task) => task.id)).toEqual([...ids].reverse());
    const seen: string[] = [];
    let pageToken = '';
    for (let page = 0; page < 10; page += 1) {
      const result = await alice.listTasks(listRequest({ contextId, pageSize: 1, pageToken }));
      expect(result.tasks.length).toBeLessThanOrEqual(1);
      seen.push(...result.tasks.map((task) => task.id));
      pageToken = result.nextPageToken;
      if (pageToken === '') break;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('C9: artifacts are absent unless includeArtifacts; pageSize above 100 is refused', async () => {
    const contextId = `arts-${randomUUID()}`;
    await alice.sendMessage(userMessage('echo with artifacts', { contextId }));
    const plain =
      binding === 'JSONRPC'
        ? (
            (await rawRpc(server, 'ListTasks', { contextId }, { headers: server.headers('alice') })).json as {
              result: { tasks: Array<Record<string, unknown>>; nextPageToken: unknown };
            }
          ).result
        : ((
            await rawRest(server, 'GET', `/tasks?contextId=${contextId}`, {
              headers: server.headers('alice'),
            })
          ).json as { tasks: Array<Record<string, unknown>>; nextPageToken: unknown });
    expect(plain.tasks).toHaveLength(1);
    expect(plain.tasks[0]).not.toHaveProperty('artifacts');
    expect(plain.nextPageToken).toBe('');
    const withArtifacts = await alice.listTasks(listRequest({ contextId, includeArtifacts: true }));
    expect(withArtifacts.tasks[0]!.artifacts.flatMap((artifact) => texts(artifact.parts))).toEqual([
      'with',
      'artifacts',
    ]);
    const tooMany = await failureOf(() => alice.listTasks(listRequest({ pageSize: 101 })));
    expect(String(tooMany)).toMatch(/pageSize/);
    if (binding === 'JSONRPC') expect(sdkCodeOf(tooMany)).toBe(-32602);
  });

  it('C14: a message naming an input-required task continues it under the same id', async () => {
    const asked = asTask(await alice.sendMessage(userMessage('ask for a name')));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(texts(asked.status?.message?.parts)).toEqual(['need more: for a name']);
    const done = asTask(
      await alice.sendMessage(userMessage('echo Ada', { taskId: asked.id, contextId: asked.contextId })),
    );
    expect(done.id).toBe(asked.id);
    expect(done.contextId).toBe(asked.contextId);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.history.map((message) => message.role)).toEqual([
      Role.ROLE_USER,
      Role.ROLE_AGENT,
      Role.ROLE_USER,
      Role.ROLE_AGENT,
    ]);
  });

  it('C14: unknown task id -> TaskNotFound; terminal task -> UnsupportedOperation; wrong context -> invalid params', async () => {
    const unknown = await failureOf(() => alice.sendMessage(userMessage('echo x', { taskId: randomUUID() })));
    expect(unknown).toBeInstanceOf(TaskNotFoundError);
    if (binding === 'JSONRPC') expect(sdkCodeOf(unknown)).toBe(-32001);

    const finished = asTask(await alice.sendMessage(userMessage('echo done')));
    const terminal = await failureOf(() =>
      alice.sendMessage(userMessage('echo again', { taskId: finished.id })),
    );
    expect(terminal).toBeInstanceOf(UnsupportedOperationError);
    if (binding === 'JSONRPC') expect(sdkCodeOf(terminal)).toBe(-32004);

    const asked = asTask(await alice.sendMessage(userMessage('ask twice')));
    const mismatch = await failureOf(() =>
      alice.sendMessage(userMessage('echo x', { taskId: asked.id, contextId: `other-${randomUUID()}` })),
    );
    expect(String(mismatch)).toMatch(/contextId/);
    if (binding === 'JSONRPC') expect(sdkCodeOf(mismatch)).toBe(-32602);
    // The refused message did not touch the task.
    const still = await alice.getTask({ tenant: '', id: asked.id });
    expect(still.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(still.history).toHaveLength(2);
  });
});

describe.each(BINDINGS)('push configs through the official client over %s', (binding) => {
  it('create, get, list and delete round-trip; a deleted config is gone', async () => {
    const server = await startInterop({
      auth: 'bearer',
      a2a: { push: { allowPrivateNetworks: true, maxAttempts: 1, timeoutMs: 200 } },
    });
    try {
      const client = await sdkClient(server, 'alice', { binding });
      const task = asTask(await client.sendMessage(userMessage('hold', { returnImmediately: true })));
      const created = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: '',
        taskId: task.id,
        url: 'http://127.0.0.1:9/hook',
        token: 'secret-token',
        authentication: undefined,
      });
      expect(created.id).not.toBe('');
      expect(created.taskId).toBe(task.id);
      expect(created.url).toBe('http://127.0.0.1:9/hook');
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
      expect(got.id).toBe(created.id);
      const listed = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(listed.configs.map((config) => config.id)).toEqual([created.id]);
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
      const gone = await failureOf(() =>
        client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id }),
      );
      expect(gone).toBeInstanceOf(TaskNotFoundError);
      const empty = await client.listTaskPushNotificationConfig({
        tenant: '',
        taskId: task.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(empty.configs).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('capability gating (C17)', () => {
  it('push off: the card says so, the SDK refuses client-side, raw calls get -32003 with its ErrorInfo', async () => {
    const server = await startInterop({ auth: 'apiKey', a2a: { push: false } });
    try {
      const client = await sdkClient(server, 'alice');
      const task = asTask(await client.sendMessage(userMessage('echo push')));
      const refused = await failureOf(async () =>
        client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'c1' }),
      );
      expect(refused).toBeInstanceOf(PushNotificationNotSupportedError);
      const calls: Array<[string, Record<string, unknown>]> = [
        ['CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://example.com/hook' }],
        ['GetTaskPushNotificationConfig', { taskId: task.id, id: 'c1' }],
        ['ListTaskPushNotificationConfigs', { taskId: task.id }],
        ['DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'c1' }],
      ];
      for (const [method, params] of calls) {
        const response = await rawRpc(server, method, params, { headers: server.headers('alice') });
        const error = (response.json as { error: { code: number; data: Array<Record<string, unknown>> } })
          .error;
        expect([method, error.code]).toEqual([method, -32003]);
        expect(error.data[0]).toMatchObject({
          reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
        });
      }
      const rest = await rawRest(server, 'GET', `/tasks/${task.id}/pushNotificationConfigs`, {
        headers: server.headers('alice'),
      });
      expect(rest.status).toBe(400);
      expect((rest.json as { error: { status: string } }).error.status).toBe('FAILED_PRECONDITION');
    } finally {
      await server.close();
    }
  });

  it('no extended card configured: GetExtendedAgentCard is -32004 UnsupportedOperation', async () => {
    const server = await startInterop({ auth: 'apiKey' });
    try {
      const response = await rawRpc(server, 'GetExtendedAgentCard', {}, { headers: server.headers('alice') });
      const error = (response.json as { error: { code: number; data: Array<Record<string, unknown>> } })
        .error;
      expect(error.code).toBe(-32004);
      expect(error.data[0]).toMatchObject({ reason: 'UNSUPPORTED_OPERATION' });
    } finally {
      await server.close();
    }
  });

  it('an extended card configured: the capability is on and the SDK fetches it with credentials', async () => {
    const server = await startInterop({
      auth: 'bearer',
      a2a: { extendedCard: (call) => ({ description: `for ${call.owner.principal_id}` }) },
    });
    try {
      const client = await sdkClient(server, 'alice');
      const card = await client.getAgentCard();
      expect(card.capabilities?.extendedAgentCard).toBe(true);
      expect(card.description).toBe('for alice');
      const rest = await sdkClient(server, 'bob', { binding: 'HTTP+JSON' });
      expect((await rest.getAgentCard()).description).toBe('for bob');
    } finally {
      await server.close();
    }
  });
});
