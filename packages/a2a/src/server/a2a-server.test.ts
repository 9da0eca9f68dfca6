/** A2AServer over real sockets: the card, both bindings, auth, owners, versions, streams. */
import { BearerTokenAuth } from '@agent/auth';
import { mintJwt } from '@agent/auth/testing';
import { ValueError } from '@agent/core';
import { A2AServer } from './a2a-server.js';
import {
  ALICE,
  BOB,
  CAROL,
  type Served,
  eventually,
  serveA2A,
  sseData,
  userMessage,
} from './test-support/serve.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function result(response: { json: unknown }): Json {
  return (response.json as Json).result as Json;
}
function rpcError(response: { json: unknown }): Json {
  return (response.json as Json).error as Json;
}

describe('A2AServer options', () => {
  it('refuses unknown names and bad values', () => {
    expect(() => new A2AServer({ nope: 1 } as never)).toThrow(ValueError);
    expect(() => new A2AServer({ jsonRpcPath: 'a2a' })).toThrow(/jsonRpcPath/);
    expect(() => new A2AServer({ cardMaxAgeSeconds: -1 })).toThrow(/cardMaxAgeSeconds/);
    expect(() => new A2AServer({ tenant: '' })).toThrow(/tenant/);
  });
});

describe('A2AServer with API keys', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveA2A({ extendedCard: () => ({ description: 'extended' }) });
  });
  afterAll(() => s.stop());

  describe('agent card', () => {
    it('is public, canonical, cached with an ETag and 304', async () => {
      const response = await s.raw('/.well-known/agent-card.json', { version: null });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json');
      expect(response.headers['cache-control']).toBe('public, max-age=300');
      expect(response.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
      const card = response.json as Json;
      expect(card).toMatchObject({
        name: 'a2a-test',
        version: '1.0.0',
        capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
        defaultInputModes: ['text/plain', 'application/json'],
        skills: [{ id: 'echo', name: 'Echo', description: 'Echo', tags: [] }],
        supportedInterfaces: [
          { url: `${s.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: `${s.url}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        ],
        securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } },
        securityRequirements: [{ schemes: { apiKey: { list: [] } } }],
      });
      for (const scheme of Object.values(card.securitySchemes as Json))
        expect(Object.keys(scheme as Json)).toHaveLength(1);
      const again = await s.raw('/.well-known/agent-card.json', {
        headers: { 'if-none-match': response.headers.etag! },
      });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(response.headers.etag);
    });
  });

  describe('authentication', () => {
    it('answers 401 with a challenge and a google.rpc.Status body before reading the body', async () => {
      const response = await s.rpc('GetTask', { id: 'x' });
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toBe('ApiKey');
      expect(response.json).toEqual({
        error: expect.objectContaining({ code: 401, status: 'UNAUTHENTICATED' }) as unknown,
      });
      const rest = await s.raw('/a2a/rest/tasks');
      expect(rest.status).toBe(401);
      expect(rest.headers['www-authenticate']).toBe('ApiKey');
      expect(rest.json).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
      const wrong = await s.rpc('SendMessage', { message: userMessage('echo hi') }, { key: 'nope' });
      expect(wrong.status).toBe(401);
    });
  });

  describe('JSON-RPC', () => {
    it('SendMessage runs a new task to its end with a server id and context', async () => {
      const response = await s.rpc(
        'SendMessage',
        { message: userMessage('echo hello') },
        { key: ALICE, id: 'req-1' },
      );
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json');
      const body = response.json as Json;
      expect(body.id).toBe('req-1');
      const task = body.result.task as Json;
      // UUID v7: the time first, so ids minted later sort later.
      const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      expect(task.id).toMatch(v7);
      expect(task.contextId).toMatch(v7);
      expect(task.contextId).not.toBe(task.id);
      const minted = Number.parseInt(task.id.slice(0, 8) + task.id.slice(9, 13), 16);
      expect(Math.abs(minted - Date.now())).toBeLessThan(60_000);
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.status.timestamp).toMatch(/Z$/);
      expect(task.history.map((m: Json) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
      expect(task).not.toHaveProperty('kind');
    });

    it('keeps a given contextId and applies historyLength', async () => {
      const response = await s.rpc(
        'SendMessage',
        { message: userMessage('echo x', { contextId: 'ctx-1' }), configuration: { historyLength: 0 } },
        { key: ALICE, id: 7 },
      );
      expect((response.json as Json).id).toBe(7);
      expect(result(response).task.contextId).toBe('ctx-1');
      expect(result(response).task).not.toHaveProperty('history');
    });

    it('returnImmediately answers at once; the task runs on', async () => {
      const response = await s.rpc(
        'SendMessage',
        { message: userMessage('wait 150'), configuration: { returnImmediately: true } },
        { key: ALICE },
      );
      const task = result(response).task;
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
      await eventually(async () => {
        const got = await s.rpc('GetTask', { id: task.id }, { key: ALICE });
        return result(got).status.state === 'TASK_STATE_COMPLETED';
      }, 'the task completes');
    });

    it('GetTask honours historyLength unset / 0 / 1', async () => {
      const sent = result(
        await s.rpc('SendMessage', { message: userMessage('echo h') }, { key: ALICE }),
      ).task;
      const all = result(await s.rpc('GetTask', { id: sent.id }, { key: ALICE }));
      expect(all.history).toHaveLength(2);
      expect(
        result(await s.rpc('GetTask', { id: sent.id, historyLength: 0 }, { key: ALICE })),
      ).not.toHaveProperty('history');
      const one = result(await s.rpc('GetTask', { id: sent.id, history_length: 1 }, { key: ALICE }));
      expect(one.history.map((m: Json) => m.role)).toEqual(['ROLE_AGENT']);
    });

    it('ListTasks pages the caller’s tasks, filters by context and state', async () => {
      const contextId = `list-${Date.now()}`;
      for (let i = 0; i < 3; i++) {
        await s.rpc('SendMessage', { message: userMessage(`art ${i}`, { contextId }) }, { key: ALICE });
      }
      const first = result(await s.rpc('ListTasks', { contextId, pageSize: 2 }, { key: ALICE }));
      expect(first.tasks).toHaveLength(2);
      expect(first.pageSize).toBe(2);
      expect(first.totalSize).toBe(2);
      expect(first.nextPageToken).not.toBe('');
      expect(first.tasks[0]).not.toHaveProperty('artifacts');
      const second = result(
        await s.rpc('ListTasks', { contextId, pageSize: 2, pageToken: first.nextPageToken }, { key: ALICE }),
      );
      expect(second.tasks).toHaveLength(1);
      expect(second.nextPageToken).toBe('');
      const withArtifacts = result(
        await s.rpc(
          'ListTasks',
          { context_id: contextId, includeArtifacts: true, status: 3 },
          { key: ALICE },
        ),
      );
      expect(withArtifacts.tasks).toHaveLength(3);
      expect(withArtifacts.tasks[0].artifacts).toHaveLength(1);
      const none = result(
        await s.rpc('ListTasks', { contextId, status: 'TASK_STATE_FAILED' }, { key: ALICE }),
      );
      expect(none).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
      const bob = result(await s.rpc('ListTasks', { contextId }, { key: BOB }));
      expect(bob.tasks).toEqual([]);
      const future = result(
        await s.rpc('ListTasks', { contextId, statusTimestampAfter: '2999-01-01T00:00:00Z' }, { key: ALICE }),
      );
      expect(future.tasks).toEqual([]);
      const bad = rpcError(await s.rpc('ListTasks', { pageSize: 101 }, { key: ALICE }));
      expect(bad.code).toBe(-32602);
    });

    it('CancelTask cancels a running task, is idempotent, and refuses a finished one', async () => {
      const sent = result(
        await s.rpc(
          'SendMessage',
          { message: userMessage('hold'), configuration: { returnImmediately: true } },
          { key: ALICE },
        ),
      ).task;
      await s.handler.contract.whenRunning(sent.id);
      const canceled = result(
        await s.rpc('CancelTask', { id: sent.id, metadata: { reason: 'enough' } }, { key: ALICE }),
      );
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
      expect(canceled.metadata).toEqual({ cancel_reason: 'enough' });
      await eventually(
        async () =>
          result(await s.rpc('CancelTask', { id: sent.id }, { key: ALICE }))?.status?.state ===
          'TASK_STATE_CANCELED',
        'idempotent cancel',
      );
      const done = result(
        await s.rpc('SendMessage', { message: userMessage('echo d') }, { key: ALICE }),
      ).task;
      const refused = rpcError(await s.rpc('CancelTask', { id: done.id }, { key: ALICE }));
      expect(refused.code).toBe(-32002);
      expect(refused.data[0]).toMatchObject({ reason: 'TASK_NOT_CANCELABLE', domain: 'a2a-protocol.org' });
    });

    it("closes a stream answer's connection when the request asked to", async () => {
      const response = await s.raw('/a2a', {
        key: ALICE,
        method: 'POST',
        headers: { connection: 'close' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: userMessage('echo x') },
        },
      });
      expect(response.headers['content-type']).toBe('text/event-stream');
      expect(response.headers.connection).toBe('close');
    });

    it('SendStreamingMessage: task first, ordered updates, ends after the terminal state', async () => {
      const response = await s.rpc(
        'SendStreamingMessage',
        { message: userMessage('ticks 3') },
        { key: ALICE, id: 42 },
      );
      expect(response.headers['content-type']).toBe('text/event-stream');
      const frames = sseData(response.text) as Json[];
      expect(frames.every((f) => f.jsonrpc === '2.0' && f.id === 42)).toBe(true);
      const results = frames.map((f) => f.result as Json);
      expect(Object.keys(results[0]!)).toEqual(['task']);
      const last = results[results.length - 1]!;
      expect(last.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      expect(results.filter((r) => r.artifactUpdate)).toHaveLength(3);
      expect(JSON.stringify(results)).not.toMatch(/"kind"|"final"/);
    });

    it('a failure before the first frame is a plain JSON-RPC error', async () => {
      const response = await s.rpc('SendStreamingMessage', { message: userMessage('throw') }, { key: ALICE });
      expect(response.headers['content-type']).toBe('application/json');
      expect(rpcError(response)).toMatchObject({ code: -32603, message: 'Internal error' });
      expect(response.text).not.toContain('10.0.0.5');
    });

    it('SubscribeToTask: the current task first, then live events; a finished task -32004', async () => {
      const sent = result(
        await s.rpc(
          'SendMessage',
          { message: userMessage('wait 300'), configuration: { returnImmediately: true } },
          { key: ALICE },
        ),
      ).task;
      const response = await s.rpc('SubscribeToTask', { id: sent.id }, { key: ALICE });
      const frames = (sseData(response.text) as Json[]).map((f) => f.result as Json);
      expect(frames[0]!.task.id).toBe(sent.id);
      expect(frames[frames.length - 1]!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      const finished = await s.rpc('SubscribeToTask', { id: sent.id }, { key: ALICE });
      expect(finished.headers['content-type']).toBe('application/json');
      expect(rpcError(finished).code).toBe(-32004);
    });

    it('multi-turn: input-required, continue by taskId, context checks, terminal refusal', async () => {
      const first = result(
        await s.rpc('SendMessage', { message: userMessage('ask me') }, { key: ALICE }),
      ).task;
      expect(first.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(first.status.message.parts).toEqual([{ text: 'what?' }]);
      const mismatch = rpcError(
        await s.rpc(
          'SendMessage',
          { message: userMessage('x', { taskId: first.id, contextId: 'other' }) },
          { key: ALICE },
        ),
      );
      expect(mismatch.code).toBe(-32602);
      const second = result(
        await s.rpc(
          'SendMessage',
          { message: userMessage('blue', { taskId: first.id, contextId: first.contextId }) },
          { key: ALICE },
        ),
      ).task;
      expect(second.id).toBe(first.id);
      expect(second.status.state).toBe('TASK_STATE_COMPLETED');
      expect(second.status.message.parts).toEqual([{ text: 'got blue' }]);
      const terminal = rpcError(
        await s.rpc('SendMessage', { message: userMessage('again', { taskId: first.id }) }, { key: ALICE }),
      );
      expect(terminal.code).toBe(-32004);
      const unknown = rpcError(
        await s.rpc('SendMessage', { message: userMessage('x', { taskId: 'nope' }) }, { key: ALICE }),
      );
      expect(unknown.code).toBe(-32001);
    });

    it('streams a continuation too', async () => {
      const first = result(
        await s.rpc('SendMessage', { message: userMessage('ask s') }, { key: ALICE }),
      ).task;
      const response = await s.rpc(
        'SendStreamingMessage',
        { message: userMessage('red', { taskId: first.id }) },
        { key: ALICE },
      );
      const frames = (sseData(response.text) as Json[]).map((f) => f.result as Json);
      expect(frames[0]!.task.id).toBe(first.id);
      expect(frames[frames.length - 1]!.statusUpdate.status).toMatchObject({
        state: 'TASK_STATE_COMPLETED',
        message: { parts: [{ text: 'got red' }] },
      });
    });

    it('isolates owners: another principal’s id answers byte-identically to a random id', async () => {
      const task = result(
        await s.rpc('SendMessage', { message: userMessage('echo mine') }, { key: ALICE }),
      ).task;
      for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask']) {
        const theirs = await s.rpc(method, { id: task.id }, { key: BOB });
        const random = await s.rpc(method, { id: task.id.replace(/^.{8}/, '00000000') }, { key: BOB });
        expect(rpcError(theirs).code).toBe(-32001);
        expect(theirs.status).toBe(random.status);
        expect(theirs.text.replaceAll(task.id, 'ID')).toBe(
          random.text.replaceAll(task.id.replace(/^.{8}/, '00000000'), 'ID'),
        );
      }
      const send = await s.rpc(
        'SendMessage',
        { message: userMessage('x', { taskId: task.id }) },
        { key: BOB },
      );
      expect(rpcError(send).code).toBe(-32001);
      const otherTenant = await s.rpc('GetTask', { id: task.id, tenant: 't2' }, { key: ALICE });
      expect(rpcError(otherTenant).code).toBe(-32001);
      const sameTenant = await s.rpc('GetTask', { id: task.id }, { key: ALICE });
      expect(result(sameTenant).id).toBe(task.id);
    });

    it('keeps tenants apart and refuses a tenant the key may not use', async () => {
      const inT1 = result(
        await s.rpc('SendMessage', { message: userMessage('echo t1'), tenant: 't1' }, { key: CAROL }),
      ).task;
      expect(result(await s.rpc('GetTask', { id: inT1.id, tenant: 't1' }, { key: CAROL })).id).toBe(inT1.id);
      const denied = await s.rpc('GetTask', { id: inT1.id, tenant: 't2' }, { key: CAROL });
      expect(rpcError(denied).code).toBe(-32011);
      const rest = await s.raw(`/a2a/rest/t1/tasks/${inT1.id}`, { key: CAROL });
      expect(rest.status).toBe(200);
      expect((rest.json as Json).id).toBe(inT1.id);
    });

    it('answers envelope errors as JSON-RPC 2.0 with HTTP 200', async () => {
      const parse = await s.raw('/a2a', { method: 'POST', body: '{nope', key: ALICE });
      expect(parse.status).toBe(200);
      expect(parse.json).toMatchObject({ id: null, error: { code: -32700 } });
      const invalid = await s.raw('/a2a', {
        method: 'POST',
        body: { jsonrpc: '1.0', id: 3, method: 'GetTask' },
        key: ALICE,
      });
      expect(invalid.json).toMatchObject({ id: 3, error: { code: -32600 } });
      const unknown = await s.rpc('Nope', {}, { key: ALICE, id: 4 });
      expect(unknown.json).toMatchObject({ id: 4, error: { code: -32601 } });
      const params = await s.rpc(
        'SendMessage',
        { message: { role: 'ROLE_USER', parts: [{ text: 1 }] } },
        { key: ALICE },
      );
      const error = rpcError(params);
      expect(error.code).toBe(-32602);
      expect(error.data[1]).toEqual({
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [
          { field: 'message.messageId', description: 'is required' },
          { field: 'message.parts[0].text', description: 'must be a string' },
        ],
      });
      const type = await s.raw('/a2a', { method: 'POST', body: 'x', contentType: 'text/plain', key: ALICE });
      expect(type.json).toMatchObject({ error: { code: -32005 } });
    });

    it('reads snake_case and numeric enums', async () => {
      const response = await s.rpc(
        'SendMessage',
        {
          message: {
            message_id: 'snake-1',
            role: 1,
            parts: [{ text: 'echo snake' }],
            context_id: 'snake-ctx',
          },
        },
        { key: ALICE },
      );
      expect(result(response).task).toMatchObject({
        contextId: 'snake-ctx',
        status: { state: 'TASK_STATE_COMPLETED' },
      });
    });

    it('negotiates versions', async () => {
      expect((await s.rpc('ListTasks', {}, { key: ALICE, version: null })).json).toHaveProperty('result');
      expect(
        (
          await s.raw('/a2a?A2A-Version=1.0', {
            method: 'POST',
            version: null,
            key: ALICE,
            body: { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} },
          })
        ).json,
      ).toHaveProperty('result');
      const future = await s.rpc('ListTasks', {}, { key: ALICE, version: '99.0' });
      expect(future.status).toBe(200);
      expect(rpcError(future)).toMatchObject({ code: -32009, data: [{ reason: 'VERSION_NOT_SUPPORTED' }] });
      const legacy = await s.rpc('message/send', {}, { key: ALICE, version: null });
      expect(rpcError(legacy)).toMatchObject({ code: -32009 });
      expect(rpcError(legacy).message).toMatch(/0\.3 is not served/);
      const rest = await s.raw('/a2a/rest/tasks', { key: ALICE, version: '0.3' });
      expect(rest.status).toBe(400);
      expect(rest.json).toMatchObject({
        error: { status: 'FAILED_PRECONDITION', details: [{ reason: 'VERSION_NOT_SUPPORTED' }] },
      });
    });

    it('GetExtendedAgentCard serves the configured card to authenticated callers', async () => {
      const card = result(await s.rpc('GetExtendedAgentCard', {}, { key: ALICE }));
      expect(card).toMatchObject({ name: 'a2a-test', description: 'extended' });
      expect((await s.rpc('GetExtendedAgentCard', {})).status).toBe(401);
    });
  });

  describe('HTTP+JSON', () => {
    it('serves every route', async () => {
      const sent = await s.raw('/a2a/rest/message:send', {
        key: ALICE,
        body: { message: userMessage('art rest') },
        contentType: 'application/a2a+json',
      });
      expect(sent.status).toBe(200);
      expect(sent.headers['content-type']).toBe('application/json');
      const task = (sent.json as Json).task as Json;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      const got = await s.raw(`/a2a/rest/tasks/${task.id}?historyLength=1`, { key: ALICE });
      expect((got.json as Json).history).toHaveLength(1);
      const list = await s.raw(`/a2a/rest/tasks?contextId=${task.contextId}&includeArtifacts=true`, {
        key: ALICE,
      });
      expect((list.json as Json).tasks[0].artifacts).toHaveLength(1);
      const cancel = await s.raw(`/a2a/rest/tasks/${task.id}:cancel`, { key: ALICE, method: 'POST' });
      expect(cancel.status).toBe(409);
      expect(cancel.json).toMatchObject({
        error: { code: 409, status: 'FAILED_PRECONDITION', details: [{ reason: 'TASK_NOT_CANCELABLE' }] },
      });
      const missing = await s.raw('/a2a/rest/tasks/nope', { key: ALICE });
      expect(missing.status).toBe(404);
      expect(missing.json).toMatchObject({
        error: { code: 404, status: 'NOT_FOUND', details: [{ reason: 'TASK_NOT_FOUND' }] },
      });
      const stream = await s.raw('/a2a/rest/message:stream', {
        key: ALICE,
        body: { message: userMessage('ticks 2') },
      });
      const frames = sseData(stream.text) as Json[];
      expect(Object.keys(frames[0]!)).toEqual(['task']);
      expect(frames[frames.length - 1]!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      const held = (
        await s.raw('/a2a/rest/message:send', {
          key: ALICE,
          body: { message: userMessage('wait 200'), configuration: { returnImmediately: true } },
        })
      ).json as Json;
      const subs = await Promise.all(
        ['GET', 'POST'].map((method) =>
          s.raw(`/a2a/rest/tasks/${held.task.id}:subscribe`, { key: ALICE, method }),
        ),
      );
      for (const sub of subs) {
        expect(sub.headers['content-type']).toBe('text/event-stream');
        const frames = sseData(sub.text) as Json[];
        expect(frames[0]!.task.id).toBe(held.task.id);
        expect(frames[frames.length - 1]!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      }
      const finished = await s.raw(`/a2a/rest/tasks/${held.task.id}:subscribe`, { key: ALICE });
      expect(finished.status).toBe(400);
      const unsupported = await s.raw('/a2a/rest/message:send', {
        key: ALICE,
        body: 'x',
        contentType: 'text/plain',
      });
      expect(unsupported.status).toBe(415);
      const extended = await s.raw('/a2a/rest/extendedAgentCard', { key: ALICE });
      expect((extended.json as Json).description).toBe('extended');
      const badAction = await s.raw(`/a2a/rest/tasks/${task.id}:explode`, { key: ALICE, method: 'POST' });
      expect(badAction.status).toBe(404);
    });

    it('push configs: create, get, list, delete; owner-scoped', async () => {
      const held = (
        await s.raw('/a2a/rest/message:send', {
          key: ALICE,
          body: { message: userMessage('wait 200'), configuration: { returnImmediately: true } },
        })
      ).json as Json;
      const id = held.task.id as string;
      const refused = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs`, {
        key: ALICE,
        body: { url: 'http://127.0.0.1:9/hook' },
      });
      expect(refused.status).toBe(400);
      const created = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs`, {
        key: ALICE,
        body: { url: 'https://93.184.215.14/a2a', token: 'tok' },
      });
      expect(created.text).toContain(id);
      expect(created.status).toBe(200);
      const config = created.json as Json;
      expect(config).toMatchObject({ taskId: id, url: 'https://93.184.215.14/a2a', token: 'tok' });
      const got = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs/${config.id}`, { key: ALICE });
      expect(got.json).toEqual(config);
      const list = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs`, { key: ALICE });
      expect((list.json as Json).configs).toEqual([config]);
      const bob = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs`, { key: BOB });
      expect(bob.status).toBe(404);
      const viaRpc = result(await s.rpc('ListTaskPushNotificationConfigs', { taskId: id }, { key: ALICE }));
      expect(viaRpc.configs).toHaveLength(1);
      const deleted = await s.raw(`/a2a/rest/tasks/${id}/pushNotificationConfigs/${config.id}`, {
        key: ALICE,
        method: 'DELETE',
      });
      expect(deleted.status).toBe(200);
      const gone = rpcError(
        await s.rpc('GetTaskPushNotificationConfig', { taskId: id, id: config.id }, { key: ALICE }),
      );
      expect(gone.code).toBe(-32001);
    });
  });
});

describe('A2AServer without push, extended card or authentication', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveA2A(
      { push: false, tenant: 'team', cardMaxAgeSeconds: 60, card: { version: '2.1.0' } },
      null,
    );
  });
  afterAll(() => s.stop());

  it('gates push and the extended card, and advertises what it serves', async () => {
    const card = (await s.raw('/.well-known/agent-card.json')).json as Json;
    expect(card.capabilities).toEqual({ streaming: true });
    expect(card.version).toBe('2.1.0');
    expect(card).not.toHaveProperty('securitySchemes');
    expect(card.supportedInterfaces.map((i: Json) => i.tenant)).toEqual(['team', 'team']);
    const task = result(
      await s.rpc('SendMessage', { message: userMessage('echo anon'), tenant: 'team' }),
    ).task;
    expect(
      rpcError(
        await s.rpc(
          'CreateTaskPushNotificationConfig',
          { taskId: task.id, url: 'https://x.example.com' },
          {},
        ),
      ).code,
    ).toBe(-32003);
    expect(rpcError(await s.rpc('GetExtendedAgentCard', {})).code).toBe(-32004);
    expect((await s.raw('/a2a/rest/team/tasks/' + task.id)).status).toBe(200);
    expect((await s.raw('/a2a/rest/tasks/' + task.id)).status).toBe(404);
  });
});

describe('A2AServer with bearer tokens', () => {
  const secret = 'a2a-test-secret-0123456789abcdef';
  let s: Served;
  beforeAll(async () => {
    s = await serveA2A({}, new BearerTokenAuth({ secret }));
  });
  afterAll(() => s.stop());

  it('advertises Bearer and answers 401 with a Bearer challenge', async () => {
    const card = (await s.raw('/.well-known/agent-card.json')).json as Json;
    expect(Object.values(card.securitySchemes as Json)).toEqual([
      { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    ]);
    const refused = await s.rpc('ListTasks', {});
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    const token = mintJwt({ secret, claims: { sub: 'user-1', exp: Math.floor(Date.now() / 1000) + 600 } });
    const ok = await s.raw('/a2a', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('echo jwt') } },
    });
    expect(result(ok).task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('A2AServer with message-only replies', () => {
  let s: Served;
  beforeAll(async () => {
    const replyAsMessage = (task: { messages: { id: string }[] }): boolean =>
      task.messages[0]?.id.startsWith('direct-') === true;
    s = await serveA2A({ replyAsMessage }, null);
  });
  afterAll(() => s.stop());

  it('answers a picked task with its agent message, blocking and streamed; others with the Task', async () => {
    const direct = { ...userMessage('echo hi there'), messageId: 'direct-1', contextId: 'ctx-1' };
    const answer = result(await s.rpc('SendMessage', { message: direct }));
    expect(Object.keys(answer)).toEqual(['message']);
    expect(answer.message).toMatchObject({ role: 'ROLE_AGENT', contextId: 'ctx-1' });
    expect(answer.message).not.toHaveProperty('taskId');
    expect(answer.message.parts[0].text).toContain('hi there');

    const streamed = await s.rpc('SendStreamingMessage', { message: { ...direct, messageId: 'direct-2' } });
    const frames = (sseData(streamed.text) as Json[]).map((f) => f.result as Json);
    expect(frames).toHaveLength(1);
    expect(Object.keys(frames[0]!)).toEqual(['message']);

    const plain = result(await s.rpc('SendMessage', { message: userMessage('echo plain') }));
    expect(Object.keys(plain)).toEqual(['task']);
  });

  it('refuses a replyAsMessage that is not a function', () => {
    expect(() => new A2AServer({ replyAsMessage: true as never })).toThrow(/replyAsMessage/);
  });
});
