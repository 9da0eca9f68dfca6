/**
 * Interop C15/C16/C19 over raw HTTP, the way any A2A 1.0 client sees the wire: version negotiation
 * (A2A-Version 1.0, an unknown version, none, a 0.3 method name), error envelopes (ErrorInfo first,
 * -32700, -32600, -32601, -32602 with BadRequest, ids echoed with their JSON type) and ProtoJSON
 * tolerance (snake_case names and numeric enums in; camelCase, defaults omitted, `Z` timestamps out).
 */
import { rawRequest, type RawResponse } from '@agent/test-support';
import {
  AUTH_MODES,
  BAD_REQUEST_TYPE,
  ERROR_INFO_TYPE,
  asTask,
  rawRest,
  rawRpc,
  rpcError,
  sdkClient,
  startInterop,
  userMessage,
  type InteropServer,
} from './test-support/harness.js';

const MESSAGE = (text: string, id = `m-${Math.random().toString(36).slice(2)}`): Record<string, unknown> => ({
  messageId: id,
  role: 'ROLE_USER',
  parts: [{ text }],
});

function expectErrorInfo(details: unknown, reason: string): void {
  expect(Array.isArray(details)).toBe(true);
  const first = (details as unknown[])[0] as Record<string, unknown>;
  expect(first['@type']).toBe(ERROR_INFO_TYPE);
  expect(first.reason).toBe(reason);
  expect(first.domain).toBe('a2a-protocol.org');
  if (first.metadata !== undefined) {
    for (const value of Object.values(first.metadata as Record<string, unknown>))
      expect(typeof value).toBe('string');
  }
}

function resultOf(response: RawResponse): Record<string, unknown> {
  const body = response.json as { result?: Record<string, unknown>; error?: unknown };
  if (response.status !== 200 || !body?.result)
    throw new Error(`expected a result, got ${response.status} ${response.text}`);
  return body.result;
}

/** Every key anywhere in a JSON value, with the path, skipping free-form metadata maps. */
function keyPaths(value: unknown, path = '', out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((entry, index) => keyPaths(entry, `${path}[${index}]`, out));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, entry] of Object.entries(value)) {
      out.push(`${path}.${key}`);
      if (key !== 'metadata' && key !== 'data') keyPaths(entry, `${path}.${key}`, out);
    }
  }
  return out;
}

/** ProtoJSON output rules: camelCase names, no empty arrays (but `parts`, scope `list`), no `false`, no `{}` metadata, `Z` times. */
function expectProtoJsonOut(value: unknown, path = ''): void {
  if (Array.isArray(value)) {
    // `parts` is REQUIRED; `{"list": []}` is the canonical scope list of a non-OAuth requirement.
    if (value.length === 0 && !/\.(parts|list)$/.test(path)) throw new Error(`empty array at ${path}`);
    value.forEach((entry, index) => expectProtoJsonOut(entry, `${path}[${index}]`));
    return;
  }
  if (typeof value !== 'object' || value === null) {
    if (value === false) throw new Error(`default false at ${path}`);
    return;
  }
  for (const [key, entry] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (!/^[a-z][A-Za-z0-9]*$/.test(key)) throw new Error(`not lowerCamelCase: ${at}`);
    if (key === 'metadata' || key === 'data') {
      if (typeof entry === 'object' && entry !== null && Object.keys(entry).length === 0)
        throw new Error(`empty ${at}`);
      continue;
    }
    if (key === 'timestamp' && typeof entry === 'string')
      expect(entry).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    if (key === 'state') expect(entry).toMatch(/^TASK_STATE_[A-Z_]+$/);
    if (key === 'role') expect(entry).toMatch(/^ROLE_(USER|AGENT)$/);
    expectProtoJsonOut(entry, at);
  }
}

describe.each(AUTH_MODES)('auth %s', (auth) => {
  let server: InteropServer;
  let headers: Record<string, string>;

  beforeAll(async () => {
    server = await startInterop({ auth });
    headers = server.headers('alice');
  });
  afterAll(async () => {
    await server.close();
  });

  describe('C15 versions', () => {
    it('A2A-Version 1.0 (header or query) is served', async () => {
      expect(resultOf(await rawRpc(server, 'ListTasks', {}, { headers })).tasks).toEqual(expect.any(Array));
      const query = await rawRequest(`${server.jsonRpcUrl}?A2A-Version=1.0`, {
        headers,
        body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} },
      });
      expect(resultOf(query).tasks).toEqual(expect.any(Array));
    });

    it('an unsupported version is -32009 VERSION_NOT_SUPPORTED (HTTP 200), on both bindings', async () => {
      for (const version of ['99.0', '0.3', '1.1']) {
        const response = await rawRpc(
          server,
          'ListTasks',
          {},
          { id: 3, headers: { ...headers, 'A2A-Version': version } },
        );
        expect(response.status).toBe(200);
        const error = rpcError(response);
        expect([version, error.code]).toEqual([version, -32009]);
        expectErrorInfo(error.data, 'VERSION_NOT_SUPPORTED');
        expect((response.json as { id: unknown }).id).toBe(3);
      }
      const query = await rawRequest(`${server.jsonRpcUrl}?A2A-Version=99.0`, {
        headers,
        body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} },
      });
      expect(rpcError(query).code).toBe(-32009);
      const rest = await rawRest(server, 'GET', '/tasks', { headers: { ...headers, 'A2A-Version': '99.0' } });
      expect(rest.status).toBe(400);
      const body = rest.json as { error: { code: number; status: string; details: unknown[] } };
      expect(body.error.code).toBe(400);
      expect(body.error.status).toBe('FAILED_PRECONDITION');
      expectErrorInfo(body.error.details, 'VERSION_NOT_SUPPORTED');
    });

    it('no A2A-Version header: a 1.0 method name is served (the documented policy)', async () => {
      const response = await rawRpc(
        server,
        'SendMessage',
        { message: MESSAGE('echo no header') },
        { headers, noVersion: true },
      );
      expect((resultOf(response).task as { status: { state: string } }).status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
      const rest = await rawRest(server, 'GET', '/tasks', { headers, noVersion: true });
      expect(rest.status).toBe(200);
    });

    it('a 0.3 method name is refused with -32009, with or without a header', async () => {
      for (const method of ['message/send', 'tasks/get', 'tasks/resubscribe']) {
        for (const noVersion of [true, false]) {
          const response = await rawRpc(
            server,
            method,
            { id: 'x', message: MESSAGE('hi') },
            { headers, noVersion },
          );
          const error = rpcError(response);
          expect([method, noVersion, error.code]).toEqual([method, noVersion, -32009]);
          expectErrorInfo(error.data, 'VERSION_NOT_SUPPORTED');
        }
      }
      expect(server.agent.calls.map((call) => call.task.messages[0]?.parts)).not.toContainEqual([
        { type: 'text', content: 'hi' },
      ]);
    });

    it('the official client sends A2A-Version 1.0 on every call', async () => {
      const client = await sdkClient(server, 'alice');
      asTask(await client.sendMessage(userMessage('echo version')));
      expect(server.agent.contexts.at(-1)?.headers['a2a-version']).toBe('1.0');
    });
  });

  describe('C16 error envelopes', () => {
    it('A2A errors carry ErrorInfo first: not found, not cancelable, unsupported operation', async () => {
      const missing = rpcError(await rawRpc(server, 'GetTask', { id: 'no-such-task' }, { headers }));
      expect(missing.code).toBe(-32001);
      expectErrorInfo(missing.data, 'TASK_NOT_FOUND');
      const done = resultOf(await rawRpc(server, 'SendMessage', { message: MESSAGE('echo x') }, { headers }))
        .task as {
        id: string;
      };
      const notCancelable = rpcError(await rawRpc(server, 'CancelTask', { id: done.id }, { headers }));
      expect(notCancelable.code).toBe(-32002);
      expectErrorInfo(notCancelable.data, 'TASK_NOT_CANCELABLE');
      const terminal = rpcError(await rawRpc(server, 'SubscribeToTask', { id: done.id }, { headers }));
      expect(terminal.code).toBe(-32004);
      expectErrorInfo(terminal.data, 'UNSUPPORTED_OPERATION');
      // REST: google.rpc.Status with the same ErrorInfo.
      const rest = await rawRest(server, 'GET', '/tasks/no-such-task', { headers });
      expect(rest.status).toBe(404);
      const body = rest.json as {
        error: { code: number; status: string; message: string; details: unknown[] };
      };
      expect(body.error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: expect.any(String) });
      expectErrorInfo(body.error.details, 'TASK_NOT_FOUND');
    });

    it('REST: invalid params are 400 INVALID_ARGUMENT with BadRequest; a finished task is not cancelable (409)', async () => {
      const invalid = await rawRest(server, 'POST', '/message:send', { headers, body: {} });
      expect(invalid.status).toBe(400);
      const body = invalid.json as {
        error: { code: number; status: string; details: Array<Record<string, unknown>> };
      };
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expectErrorInfo(body.error.details, 'VALIDATION_FAILED');
      expect(body.error.details.some((entry) => entry['@type'] === BAD_REQUEST_TYPE)).toBe(true);
      const done = (
        await rawRest(server, 'POST', '/message:send', { headers, body: { message: MESSAGE('echo x') } })
      ).json as { task: { id: string } };
      const cancel = await rawRest(server, 'POST', `/tasks/${done.task.id}:cancel`, { headers, body: {} });
      expect(cancel.status).toBe(409);
      const refused = cancel.json as { error: { status: string; details: unknown[] } };
      expect(refused.error.status).toBe('FAILED_PRECONDITION');
      expectErrorInfo(refused.error.details, 'TASK_NOT_CANCELABLE');
    });

    it('a wrong Content-Type is -32005 CONTENT_TYPE_NOT_SUPPORTED', async () => {
      const response = await rawRequest(server.jsonRpcUrl, {
        headers: { ...headers, 'A2A-Version': '1.0' },
        contentType: 'text/plain',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      });
      const error = rpcError(response);
      expect(error.code).toBe(-32005);
      expectErrorInfo(error.data, 'CONTENT_TYPE_NOT_SUPPORTED');
    });

    it('malformed JSON is -32700 with id null', async () => {
      const response = await rawRequest(server.jsonRpcUrl, {
        headers: { ...headers, 'A2A-Version': '1.0' },
        body: '{"jsonrpc": "2.0", "id": 1, "method": ',
      });
      expect(response.status).toBe(200);
      expect((response.json as { id: unknown }).id).toBeNull();
      expect(rpcError(response).code).toBe(-32700);
    });

    it('a request that is not JSON-RPC 2.0 is -32600; an unknown method -32601', async () => {
      for (const body of [
        { jsonrpc: '1.0', id: 1, method: 'GetTask' },
        [1, 2],
        { jsonrpc: '2.0', id: 1 },
        'just a string',
      ]) {
        const response = await rawRequest(server.jsonRpcUrl, {
          headers: { ...headers, 'A2A-Version': '1.0' },
          body: JSON.stringify(body),
        });
        expect([JSON.stringify(body), rpcError(response).code]).toEqual([JSON.stringify(body), -32600]);
      }
      const unknown = await rawRpc(server, 'Frobnicate', {}, { id: 4, headers });
      expect(rpcError(unknown).code).toBe(-32601);
      expect((unknown.json as { id: unknown }).id).toBe(4);
    });

    it('invalid params are -32602 with a google.rpc.BadRequest naming the field', async () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['SendMessage', {}, 'message'],
        ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER' } }, 'message.parts'],
        [
          'SendMessage',
          { message: { messageId: 'm', role: 'ROLE_NOBODY', parts: [{ text: 'x' }] } },
          'message.role',
        ],
        ['GetTask', {}, 'id'],
        ['GetTask', { id: 'x', historyLength: -1 }, 'historyLength'],
        ['ListTasks', { pageSize: 1000 }, 'pageSize'],
        ['CancelTask', { id: 7 }, 'id'],
      ];
      for (const [method, params, field] of cases) {
        const error = rpcError(await rawRpc(server, method, params, { headers }));
        expect([method, params, error.code]).toEqual([method, params, -32602]);
        const details = error.data as Array<Record<string, unknown>>;
        expectErrorInfo(details, 'VALIDATION_FAILED');
        const badRequest = details.find((entry) => entry['@type'] === BAD_REQUEST_TYPE) as
          { fieldViolations: Array<{ field: string; description: string }> } | undefined;
        expect(badRequest?.fieldViolations.map((violation) => violation.field)).toContain(field);
      }
    });

    it('ids are echoed with their JSON type, on results, errors and stream frames', async () => {
      for (const id of [0, 5, 9007199254740991, 'five', '5', 1.5]) {
        const ok = await rawRpc(server, 'ListTasks', {}, { id, headers });
        expect((ok.json as { id: unknown }).id).toStrictEqual(id);
        const failed = await rawRpc(server, 'GetTask', { id: 'missing' }, { id, headers });
        expect((failed.json as { id: unknown }).id).toStrictEqual(id);
      }
      const nullId = await rawRpc(server, 'ListTasks', {}, { id: null, headers });
      expect((nullId.json as { id: unknown }).id).toBeNull();
    });

    it('errors never leak internals (no stack, no error class names)', async () => {
      const response = await rawRpc(server, 'SendMessage', { message: 'not an object' }, { headers });
      expect(response.text).not.toMatch(/at .*\.ts:\d+|TypeError|ReferenceError/);
    });
  });

  describe('C19 ProtoJSON tolerance', () => {
    it('snake_case names and numeric enums are accepted in requests', async () => {
      const contextId = `snake-${Date.now()}`;
      const sent = await rawRpc(
        server,
        'SendMessage',
        {
          message: {
            message_id: 'm-snake',
            role: 1,
            parts: [{ text: 'echo snake case' }],
            context_id: contextId,
          },
          configuration: { history_length: 1, accepted_output_modes: ['text/plain'] },
          unknown_field: 'ignored',
        },
        { headers },
      );
      const task = resultOf(sent).task as {
        id: string;
        contextId: string;
        history?: unknown[];
        status: { state: string };
      };
      expect(task.contextId).toBe(contextId);
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.history).toHaveLength(1);
      const got = resultOf(await rawRpc(server, 'GetTask', { id: task.id, history_length: 0 }, { headers }));
      expect(got).not.toHaveProperty('history');
      // status 3 = TASK_STATE_COMPLETED.
      const listed = resultOf(
        await rawRpc(
          server,
          'ListTasks',
          { context_id: contextId, status: 3, page_size: 10, include_artifacts: true },
          { headers },
        ),
      );
      expect((listed.tasks as Array<{ id: string }>).map((entry) => entry.id)).toEqual([task.id]);
      const working = resultOf(await rawRpc(server, 'ListTasks', { contextId, status: 2 }, { headers }));
      expect(working.tasks).toEqual([]);
      const byName = resultOf(
        await rawRpc(server, 'ListTasks', { contextId, status: 'TASK_STATE_COMPLETED' }, { headers }),
      );
      expect((byName.tasks as Array<{ id: string }>).map((entry) => entry.id)).toEqual([task.id]);
      // REST: snake_case query names.
      const rest = await rawRest(server, 'GET', `/tasks?context_id=${contextId}&page_size=5`, { headers });
      expect((rest.json as { tasks: Array<{ id: string }> }).tasks.map((entry) => entry.id)).toEqual([
        task.id,
      ]);
      // ROLE_USER as a number in a REST body too.
      const restSent = await rawRest(server, 'POST', '/message:send', {
        headers,
        body: { message: { message_id: 'm-rest-snake', role: 1, parts: [{ text: 'echo rest' }] } },
      });
      expect(restSent.status).toBe(200);
    });

    it('answers are ProtoJSON: lowerCamelCase, defaults omitted, enum names, Z timestamps', async () => {
      const sent = resultOf(
        await rawRpc(server, 'SendMessage', { message: MESSAGE('echo shape check') }, { headers }),
      );
      expect(Object.keys(sent)).toEqual(['task']);
      expectProtoJsonOut(sent);
      const id = (sent.task as { id: string }).id;
      expectProtoJsonOut(resultOf(await rawRpc(server, 'GetTask', { id }, { headers })));
      const list = resultOf(
        await rawRpc(server, 'ListTasks', { pageSize: 5, includeArtifacts: true }, { headers }),
      );
      // nextPageToken is always present, "" included (the one exception to omitting defaults).
      expect(typeof list.nextPageToken).toBe('string');
      expectProtoJsonOut((list.tasks as unknown[])[0]);
      expect(keyPaths(sent).filter((path) => path.includes('_'))).toEqual([]);
      // The card's REQUIRED repeated fields are written even when empty (this agent has no skills).
      const card = (await rawRequest(`${server.url}/.well-known/agent-card.json`)).json as Record<
        string,
        unknown
      >;
      const { skills, ...rest } = card;
      expect(skills).toEqual([]);
      expectProtoJsonOut(rest);
    });
  });
});
