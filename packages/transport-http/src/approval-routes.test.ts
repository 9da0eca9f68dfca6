/** The reviewer routes of durable approvals over a real HTTPTransport, with API keys and without. */
import { gzipSync } from 'node:zlib';
import { APIKeyAuth } from '@agent/auth';
import { ValueError, type ApprovalRequestData } from '@agent/core';
import { InMemoryApprovalStore, type ApprovalRecord, type TaskOwner } from '@agent/events';
import { createTestAgent, rawRequest, type RawResponse } from '@agent/test-support';
import { approvalRoutes, ApprovalRoutes } from './approval-routes.js';
import { HTTPTransport } from './http-transport.js';
import type { BackendName, HTTPTransportOptions } from './options.js';

const ALICE_KEY = 'sk-alice-0123456789';
const BOB_KEY = 'sk-bobby-0123456789';
const ALICE: TaskOwner = { tenant: '', principal_id: 'alice' };
const ALICE_RED: TaskOwner = { tenant: 'red', principal_id: 'alice' };
const ANONYMOUS: TaskOwner = { tenant: '', principal_id: 'anonymous' };

interface WireError {
  code: string;
  message: string;
  data?: Record<string, unknown>;
}

function errorOf(response: RawResponse): WireError {
  return (response.json as { error: WireError }).error;
}

function approvalRequest(requestId: string, id = 'r1'): ApprovalRequestData {
  return {
    request_id: requestId,
    action: {
      action_id: `act-${requestId}`,
      kind: 'tool.call',
      name: 'delete_record',
      payload: { arguments: { id } },
      capabilities: ['records.delete'],
      artifacts: [],
    },
    created_at: '2026-03-01T00:00:00.000Z',
  };
}

const as = (key: string, extra: Record<string, string> = {}) => ({ headers: { 'x-api-key': key, ...extra } });

describe.each<BackendName>(['node', 'express'])('approval routes on the %s backend', (backend) => {
  let server: HTTPTransport;
  let store: InMemoryApprovalStore;
  let base: string;

  async function serve(options: Partial<HTTPTransportOptions> = {}): Promise<void> {
    store = new InMemoryApprovalStore();
    server = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      backend,
      routes: [approvalRoutes(store)],
      ...options,
    });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    base = server.url;
  }

  afterEach(async () => {
    await server?.stop();
    store?.close();
  });

  describe('with API keys', () => {
    let pending: ApprovalRecord;

    beforeEach(async () => {
      await serve({
        maxBodyBytes: 8192,
        authenticator: new APIKeyAuth({
          validKeys: { [ALICE_KEY]: [], [BOB_KEY]: [] },
          principals: { [ALICE_KEY]: 'alice', [BOB_KEY]: 'bob' },
        }),
      });
      pending = await store.createApproval(ALICE, approvalRequest('req-1'), { taskId: 'task-1' });
    });

    it('lists the caller’s requests, reads one, and decides it once', async () => {
      await store.createApproval(ALICE, approvalRequest('req-2', 'r2'), { taskId: 'task-2' });
      const listed = await rawRequest(`${base}/approvals?state=pending`, as(ALICE_KEY));
      expect(listed.status).toBe(200);
      expect(listed.json).toEqual({ approvals: [pending, await store.getApproval(ALICE, 'req-2')] });
      const byTask = await rawRequest(`${base}/approvals?task_id=task-2&limit=5`, as(ALICE_KEY));
      expect((byTask.json as { approvals: ApprovalRecord[] }).approvals.map((r) => r.request_id)).toEqual([
        'req-2',
      ]);
      const limited = await rawRequest(`${base}/approvals?limit=1`, as(ALICE_KEY));
      expect((limited.json as { approvals: unknown[] }).approvals).toHaveLength(1);

      const read = await rawRequest(`${base}/approvals/req-1`, as(ALICE_KEY));
      expect([read.status, read.json]).toEqual([200, pending]);

      const decided = await rawRequest(`${base}/approvals/req-1`, {
        ...as(ALICE_KEY),
        body: { approved: true, action_hash: pending.action_hash },
      });
      expect(decided.status).toBe(200);
      expect(decided.json).toMatchObject({
        request_id: 'req-1',
        state: 'approved',
        // Without `decided_by` the decision is the caller's.
        decided_by: 'alice',
        reason: null,
      });
      expect(decided.json).toEqual(await store.getApproval(ALICE, 'req-1'));

      const again = await rawRequest(`${base}/approvals/req-1`, {
        ...as(ALICE_KEY),
        body: { approved: false, action_hash: pending.action_hash },
      });
      expect([again.status, errorOf(again).code]).toEqual([409, 'APPROVAL_ALREADY_DECIDED']);
      expect((await store.getApproval(ALICE, 'req-1'))!.state).toBe('approved');

      const approved = await rawRequest(`${base}/approvals?state=approved`, as(ALICE_KEY));
      expect((approved.json as { approvals: ApprovalRecord[] }).approvals.map((r) => r.request_id)).toEqual([
        'req-1',
      ]);
    });

    it('keeps decided_by and reason when the body names them', async () => {
      const decided = await rawRequest(`${base}/approvals/req-1`, {
        ...as(ALICE_KEY),
        body: {
          approved: false,
          action_hash: pending.action_hash,
          decided_by: 'on-call',
          reason: 'not today',
        },
      });
      expect([decided.status, decided.json]).toMatchObject([
        200,
        { state: 'denied', decided_by: 'on-call', reason: 'not today' },
      ]);
    });

    it('refuses a decision for another action with 409 APPROVAL_ACTION_MISMATCH; the request stays pending', async () => {
      const wrong = await rawRequest(`${base}/approvals/req-1`, {
        ...as(ALICE_KEY),
        body: { approved: true, action_hash: '0'.repeat(64) },
      });
      expect([wrong.status, errorOf(wrong).code]).toEqual([409, 'APPROVAL_ACTION_MISMATCH']);
      expect(await store.getApproval(ALICE, 'req-1')).toEqual(pending);
    });

    it('answers 404 APPROVAL_NOT_FOUND for an unknown request', async () => {
      const read = await rawRequest(`${base}/approvals/req-unknown`, as(ALICE_KEY));
      expect([read.status, errorOf(read)]).toEqual([
        404,
        {
          code: 'APPROVAL_NOT_FOUND',
          message: 'Approval request req-unknown not found',
          data: { request_id: 'req-unknown' },
        },
      ]);
      const decided = await rawRequest(`${base}/approvals/req-unknown`, {
        ...as(ALICE_KEY),
        body: { approved: true, action_hash: pending.action_hash },
      });
      expect([decided.status, errorOf(decided).code]).toEqual([404, 'APPROVAL_NOT_FOUND']);
    });

    it('keeps each owner’s requests from every other: Bob can neither see nor decide Alice’s', async () => {
      const listed = await rawRequest(`${base}/approvals`, as(BOB_KEY));
      expect([listed.status, listed.json]).toEqual([200, { approvals: [] }]);
      const read = await rawRequest(`${base}/approvals/req-1`, as(BOB_KEY));
      const unknown = await rawRequest(`${base}/approvals/req-1x`, as(BOB_KEY));
      expect(read.status).toBe(404);
      // Exactly the answer an unknown id gets, but for the id it names.
      expect(JSON.stringify(errorOf(read))).toBe(
        JSON.stringify(errorOf(unknown)).replace(/req-1x/g, 'req-1'),
      );
      const decided = await rawRequest(`${base}/approvals/req-1`, {
        ...as(BOB_KEY),
        body: { approved: true, action_hash: pending.action_hash },
      });
      expect([decided.status, errorOf(decided).code]).toEqual([404, 'APPROVAL_NOT_FOUND']);
      // Alice in another tenant is another owner too.
      const elsewhere = await rawRequest(`${base}/approvals/req-1`, as(ALICE_KEY, { 'x-tenant': 'red' }));
      expect(elsewhere.status).toBe(404);
      await store.createApproval(ALICE_RED, approvalRequest('req-red'), { taskId: 'task-red' });
      const red = await rawRequest(`${base}/approvals`, as(ALICE_KEY, { 'x-tenant': 'red' }));
      expect((red.json as { approvals: ApprovalRecord[] }).approvals.map((r) => r.request_id)).toEqual([
        'req-red',
      ]);
      expect(await store.getApproval(ALICE, 'req-1')).toEqual(pending);
    });

    it('answers 401 without a credential, before reading anything', async () => {
      const listed = await rawRequest(`${base}/approvals`);
      expect([listed.status, errorOf(listed).code]).toEqual([401, 'UNAUTHENTICATED']);
      const decided = await rawRequest(`${base}/approvals/req-1`, {
        body: { approved: true, action_hash: pending.action_hash },
      });
      expect([decided.status, errorOf(decided).code]).toEqual([401, 'UNAUTHENTICATED']);
      expect(await store.getApproval(ALICE, 'req-1')).toEqual(pending);
    });

    it('answers 422 VALIDATION_FAILED with a pointer per problem for a malformed decision', async () => {
      const cases: [unknown, string[]][] = [
        [{ approved: 'yes', action_hash: pending.action_hash }, ['/approved']],
        [{ approved: true }, ['/action_hash']],
        [{ approved: true, action_hash: '' }, ['/action_hash']],
        [{ approved: true, action_hash: pending.action_hash, reason: 7 }, ['/reason']],
        [{ approved: true, action_hash: pending.action_hash, decided_by: 'x'.repeat(4097) }, ['/decided_by']],
        [{ approved: true, action_hash: pending.action_hash, aproved: true }, ['/aproved']],
        [{}, ['/approved', '/action_hash']],
        [[true], ['/']],
        ['yes', ['/']],
      ];
      for (const [index, [body, pointers]] of cases.entries()) {
        const response = await rawRequest(`${base}/approvals/req-1`, {
          ...as(ALICE_KEY),
          body: JSON.stringify(body),
        });
        const error = errorOf(response);
        expect([index, response.status, error.code]).toEqual([index, 422, 'VALIDATION_FAILED']);
        expect((error.data!.errors as { pointer: string }[]).map((issue) => issue.pointer)).toEqual(pointers);
      }
      expect(await store.getApproval(ALICE, 'req-1')).toEqual(pending);
    });

    it('reads the body as every route does: malformed JSON, no body, too large, compressed', async () => {
      const post = (options: Parameters<typeof rawRequest>[1]) =>
        rawRequest(`${base}/approvals/req-1`, { ...as(ALICE_KEY), method: 'POST', ...options });
      const malformed = await post({ body: '{"approved": tru' });
      expect([malformed.status, errorOf(malformed).code]).toEqual([400, 'INVALID_REQUEST']);
      const empty = await post({});
      expect([empty.status, errorOf(empty).code]).toEqual([400, 'INVALID_REQUEST']);
      const large = await post({
        body: { approved: true, action_hash: pending.action_hash, reason: 'x'.repeat(9000) },
      });
      expect([large.status, errorOf(large).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      const gzipped = await post({
        headers: { 'x-api-key': ALICE_KEY, 'content-encoding': 'gzip' },
        body: gzipSync(JSON.stringify({ approved: true, action_hash: pending.action_hash })),
      });
      expect([gzipped.status, errorOf(gzipped).code]).toEqual([400, 'INVALID_REQUEST']);
      expect(await store.getApproval(ALICE, 'req-1')).toEqual(pending);
    });

    it('answers 422 naming the parameter for a bad list query', async () => {
      const cases: [string, string[]][] = [
        ['state=open', ['/state']],
        ['limit=0', ['/limit']],
        ['limit=1001', ['/limit']],
        ['limit=two', ['/limit']],
        ['state=pending&state=denied', ['/state']],
        ['state=open&limit=0', ['/state', '/limit']],
      ];
      for (const [query, pointers] of cases) {
        const response = await rawRequest(`${base}/approvals?${query}`, as(ALICE_KEY));
        expect([query, response.status, errorOf(response).code]).toEqual([query, 422, 'VALIDATION_FAILED']);
        expect((errorOf(response).data!.errors as { pointer: string }[]).map((i) => i.pointer)).toEqual(
          pointers,
        );
      }
      // Empty parameters are absent, as on the task list.
      const empty = await rawRequest(`${base}/approvals?state=&limit=`, as(ALICE_KEY));
      expect([empty.status, empty.json]).toEqual([200, { approvals: [pending] }]);
    });
  });

  it('acts for the anonymous principal and the default tenant without an authenticator', async () => {
    await serve();
    const record = await store.createApproval(ANONYMOUS, approvalRequest('req-1'), { taskId: 'task-1' });
    const listed = await rawRequest(`${base}/approvals?state=pending`);
    expect([listed.status, listed.json]).toEqual([200, { approvals: [record] }]);
    const decided = await rawRequest(`${base}/approvals/req-1`, {
      body: { approved: true, action_hash: record.action_hash },
    });
    expect([decided.status, (decided.json as ApprovalRecord).decided_by]).toEqual([200, 'anonymous']);
  });

  it('serves the routes below the transport URL’s path, at the path the option names', async () => {
    store = new InMemoryApprovalStore();
    server = new HTTPTransport({
      url: 'http://127.0.0.1:0/agent',
      backend,
      routes: [approvalRoutes(store, { path: '/reviews' })],
    });
    server.bind(createTestAgent({ announceWorking: false }));
    await server.start();
    const record = await store.createApproval(ANONYMOUS, approvalRequest('req-1'), { taskId: 'task-1' });
    const read = await rawRequest(`${server.url}/reviews/req-1`);
    expect([read.status, read.json]).toEqual([200, record]);
  });
});

describe('approvalRoutes()', () => {
  it('checks its store and options', () => {
    const store = new InMemoryApprovalStore();
    expect(approvalRoutes(store)).toBeInstanceOf(ApprovalRoutes);
    expect(approvalRoutes(store).path).toBe('/approvals');
    expect(() => approvalRoutes({} as never)).toThrow(ValueError);
    expect(() => approvalRoutes(store, { path: 'approvals' })).toThrow(/path/);
    expect(() => approvalRoutes(store, { path: '/a/{id}' })).toThrow(/path/);
    expect(() => approvalRoutes(store, { prefix: '/x' } as never)).toThrow(/accepted: path/);
    store.close();
  });
});

describe('the README example', () => {
  it('lists and decides a pending request over HTTP', async () => {
    const agent = createTestAgent({ announceWorking: false });
    const lines: unknown[][] = [];
    const console = { log: (...args: unknown[]) => lines.push(args) };

    const KEY = 'sk-alice-0123456789';
    // An InMemoryApprovalStore serves one process; a SqliteApprovalStore on a shared file serves several.
    const store = new InMemoryApprovalStore();
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      authenticator: new APIKeyAuth({ validKeys: { [KEY]: [] }, principals: { [KEY]: 'alice' } }),
      routes: [approvalRoutes(store)],
    });
    transport.bind(agent); // an Agent created with { approvalStore: store }
    await transport.start();
    // What a parked run of that agent would have filed.
    await store.createApproval(ALICE, approvalRequest('req-1'), { taskId: 'task-1' });

    // A reviewer: Alice's pending requests, then a decision bound to the action she saw.
    const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
    const listed = await fetch(`${transport.url}/approvals?state=pending`, { headers });
    const [request] = ((await listed.json()) as { approvals: { request_id: string; action_hash: string }[] })
      .approvals;
    const decided = await fetch(`${transport.url}/approvals/${request!.request_id}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ approved: true, action_hash: request!.action_hash }),
    });
    console.log(decided.status, ((await decided.json()) as { state: string }).state); // 200 approved
    await transport.stop();

    expect(lines).toEqual([[200, 'approved']]);
    store.close();
  });
});
