/**
 * Interop C3/C4: with an authenticator, every A2A method on both bindings answers a call without (or
 * with wrong) credentials with HTTP 401 and a WWW-Authenticate challenge, and the official SDK client
 * surfaces it as an error carrying 401; each credential carrier the SDK offers gets through.
 */
import { TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import type { RawResponse } from '@agent/test-support';
import {
  asTask,
  bearerToken,
  collect,
  failureOf,
  rawRest,
  rawRpc,
  sdkClient,
  startInterop,
  userMessage,
  type AuthMode,
  type InteropServer,
} from './test-support/harness.js';

const TASK = '7d3c0f0e-0000-4000-8000-000000000001';
const MESSAGE = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'echo hi' }] };

/** Every 1.0 JSON-RPC method with plausible params. */
const RPC_CALLS: Array<[string, Record<string, unknown>]> = [
  ['SendMessage', { message: MESSAGE }],
  ['SendStreamingMessage', { message: MESSAGE }],
  ['GetTask', { id: TASK }],
  ['ListTasks', {}],
  ['CancelTask', { id: TASK }],
  ['SubscribeToTask', { id: TASK }],
  ['CreateTaskPushNotificationConfig', { taskId: TASK, url: 'https://example.com/hook' }],
  ['GetTaskPushNotificationConfig', { taskId: TASK, id: 'c1' }],
  ['ListTaskPushNotificationConfigs', { taskId: TASK }],
  ['DeleteTaskPushNotificationConfig', { taskId: TASK, id: 'c1' }],
  ['GetExtendedAgentCard', {}],
];

/** Every HTTP+JSON route, each also below a tenant prefix. */
// Rows all have three cells: jest would take a missing third for a `done` callback.
const REST_CALLS: Array<['GET' | 'POST' | 'DELETE', string, unknown]> = [
  ['POST', '/message:send', { message: MESSAGE }],
  ['POST', '/message:stream', { message: MESSAGE }],
  ['GET', '/tasks', undefined],
  ['GET', `/tasks/${TASK}`, undefined],
  ['POST', `/tasks/${TASK}:cancel`, {}],
  ['GET', `/tasks/${TASK}:subscribe`, undefined],
  ['POST', `/tasks/${TASK}:subscribe`, {}],
  ['POST', `/tasks/${TASK}/pushNotificationConfigs`, { url: 'https://example.com/hook' }],
  ['GET', `/tasks/${TASK}/pushNotificationConfigs`, undefined],
  ['GET', `/tasks/${TASK}/pushNotificationConfigs/c1`, undefined],
  ['DELETE', `/tasks/${TASK}/pushNotificationConfigs/c1`, undefined],
  ['GET', '/extendedAgentCard', undefined],
];

const WRONG: Record<Exclude<AuthMode, 'none'>, Record<string, string>> = {
  apiKey: { 'X-API-Key': 'sk-interop-nobody-0123456789' },
  bearer: { Authorization: 'Bearer not.a.token' },
};

function expect401(response: RawResponse, what: string): void {
  if (response.status !== 401)
    throw new Error(`${what}: expected 401, got ${response.status} ${response.text}`);
  expect(response.headers['www-authenticate']).toEqual(expect.any(String));
  expect(String(response.headers['www-authenticate'])).not.toBe('');
}

/**
 * The 401 must be visible on the SDK's error: its REST status, its JSON-RPC error code, or the
 * "Status: 401" of the plain Error the SDK throws for a non-2xx answer that is no JSON-RPC envelope.
 */
function carries401(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const record = error as {
    message?: unknown;
    statusCode?: unknown;
    envelopeCode?: unknown;
    cause?: unknown;
  };
  if (record.statusCode === 401 || record.envelopeCode === 401) return true;
  if (typeof record.message === 'string' && /\b401\b/.test(record.message)) return true;
  return record.cause !== undefined && carries401(record.cause);
}

/** Every SDK client method, run once. */
function sdkCalls(client: Client): Array<[string, () => Promise<unknown>]> {
  return [
    ['sendMessage', () => client.sendMessage(userMessage('echo hi'))],
    ['sendMessageStream', () => collect(client.sendMessageStream(userMessage('echo hi')))],
    ['getTask', () => client.getTask({ tenant: '', id: TASK })],
    ['cancelTask', () => client.cancelTask({ tenant: '', id: TASK, metadata: undefined })],
    [
      'listTasks',
      () =>
        client.listTasks({
          tenant: '',
          contextId: '',
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageToken: '',
          statusTimestampAfter: undefined,
        }),
    ],
    ['resubscribeTask', () => collect(client.resubscribeTask({ tenant: '', id: TASK }))],
    [
      'createTaskPushNotificationConfig',
      () =>
        client.createTaskPushNotificationConfig({
          tenant: '',
          id: '',
          taskId: TASK,
          url: 'https://example.com/hook',
          token: '',
          authentication: undefined,
        }),
    ],
    [
      'getTaskPushNotificationConfig',
      () => client.getTaskPushNotificationConfig({ tenant: '', taskId: TASK, id: 'c1' }),
    ],
    [
      'listTaskPushNotificationConfig',
      () => client.listTaskPushNotificationConfig({ tenant: '', taskId: TASK, pageSize: 0, pageToken: '' }),
    ],
    [
      'deleteTaskPushNotificationConfig',
      () => client.deleteTaskPushNotificationConfig({ tenant: '', taskId: TASK, id: 'c1' }),
    ],
  ];
}

describe.each(['apiKey', 'bearer'] as const)('auth %s', (auth) => {
  let server: InteropServer;

  beforeAll(async () => {
    server = await startInterop({ auth });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(RPC_CALLS)('C3: JSON-RPC %s without credentials: 401 with a challenge', async (method, params) => {
    const response = await rawRpc(server, method, params, { id: 7 });
    expect401(response, method);
    // The HTTP layer's refusal, as a google.rpc.Status body: no JSON-RPC envelope hides the 401.
    const body = response.json as { jsonrpc?: string; error?: { code?: number; status?: string } };
    expect(body.jsonrpc).toBeUndefined();
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    // Nothing ran: the agent saw no task.
    expect(server.agent.calls).toEqual([]);
  });

  it.each(RPC_CALLS)(
    'C3: JSON-RPC %s with wrong credentials: 401 with a challenge',
    async (method, params) => {
      expect401(await rawRpc(server, method, params, { headers: WRONG[auth] }), method);
      expect(server.agent.calls).toEqual([]);
    },
  );

  it.each(REST_CALLS)(
    'C3: REST %s %s without credentials: 401 with a challenge',
    async (method, path, body) => {
      for (const prefix of ['', '/t1']) {
        const response = await rawRest(
          server,
          method,
          `${prefix}${path}`,
          body === undefined ? {} : { body },
        );
        expect401(response, `${method} ${prefix}${path}`);
        const error = (response.json as { error?: { code?: number; status?: string } }).error;
        expect(error?.code).toBe(401);
        expect(error?.status).toBe('UNAUTHENTICATED');
        const wrong = await rawRest(server, method, `${prefix}${path}`, {
          headers: WRONG[auth],
          ...(body === undefined ? {} : { body }),
        });
        expect401(wrong, `${method} ${prefix}${path} (wrong credentials)`);
      }
      expect(server.agent.calls).toEqual([]);
    },
  );

  it.each(['JSONRPC', 'HTTP+JSON'] as const)(
    'C3: every SDK method over %s without credentials throws an error carrying 401',
    async (binding) => {
      const client = await sdkClient(server, 'alice', { anonymous: true, binding });
      const failures: string[] = [];
      for (const [name, run] of sdkCalls(client)) {
        const error = await failureOf(run);
        if (!carries401(error)) {
          failures.push(
            `${name}: ${error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)}`,
          );
        }
      }
      expect(failures).toEqual([]);
    },
  );

  it('C4: credentials through a call interceptor (serviceParameters) get through', async () => {
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await sdkClient(server, 'alice', { binding });
      const task = asTask(await client.sendMessage(userMessage('echo carried')));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it('C4: credentials through createAuthenticatingFetchWithRetry get through', async () => {
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await sdkClient(server, 'alice', { binding, carrier: 'fetch' });
      const task = asTask(await client.sendMessage(userMessage('echo fetched')));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it('C4: the SDK retries a 401 with fresh credentials and then succeeds', async () => {
    let retried = 0;
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({}),
      shouldRetryWithHeaders: async (_req, res) => {
        if (res.status !== 401) return undefined;
        retried += 1;
        return server.headers('alice');
      },
    });
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      }),
    );
    const client = await factory.createFromUrl(server.url);
    const task = asTask(await client.sendMessage(userMessage('echo retried')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(retried).toBe(1);
  });

  if (auth === 'apiKey') {
    it('C4: the API key also travels as Authorization: ApiKey <key>', async () => {
      const key = server.headers('alice')['X-API-Key']!;
      const response = await rawRpc(server, 'ListTasks', {}, { headers: { Authorization: `ApiKey ${key}` } });
      expect(response.status).toBe(200);
      expect((response.json as { result?: { tasks?: unknown } }).result?.tasks).toEqual(expect.any(Array));
    });
  } else {
    it('C4: an expired bearer token is refused with 401', async () => {
      const { mintJwt } = await import('@agent/auth/testing');
      const expired = mintJwt({
        secret: 'interop-secret-0123456789abcdef0123456789',
        claims: { sub: 'alice', exp: Math.floor(Date.now() / 1000) - 60 },
      });
      expect401(
        await rawRpc(server, 'ListTasks', {}, { headers: { Authorization: `Bearer ${expired}` } }),
        'expired',
      );
      const fresh = await rawRpc(
        server,
        'ListTasks',
        {},
        { headers: { Authorization: `Bearer ${bearerToken('alice')}` } },
      );
      expect(fresh.status).toBe(200);
    });
  }
});

describe('auth off', () => {
  it('C3/C4: every method is served without credentials', async () => {
    const server = await startInterop({ auth: 'none' });
    try {
      const client = await sdkClient(server, 'alice');
      const task = asTask(await client.sendMessage(userMessage('echo open')));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const list = await rawRpc(server, 'ListTasks', {});
      expect(list.status).toBe(200);
      expect(list.headers['www-authenticate']).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
