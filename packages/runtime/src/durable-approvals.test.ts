/**
 * Durable approvals: an agent without an approval handler files the request in its approval store
 * and parks; a reviewer decides it through another store instance over the same SQLite file (as
 * another process would); the run then re-validates, re-checks its cancel token and acts once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APIKeyAuth } from '@agent/auth';
import {
  ApprovalActionMismatchError,
  ApprovalAlreadyDecidedError,
  ApprovalNotFoundError,
  createTask,
  ValueError,
  type CallContext,
  type Task,
  type TaskEvent,
} from '@agent/core';
import {
  actionHash,
  InMemoryApprovalStore,
  InMemoryEventSink,
  SqliteApprovalStore,
  type ApprovalStore,
  type FromTaskEventOptions,
  type RunEvent,
  type TaskOwner,
} from '@agent/events';
import { approvalRoutes, HTTPTransport } from '@agent/transport-http';
import { Agent } from './agent.js';
import { deferred, errorOf, types } from './test-support/helpers.js';

const ALICE: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal_id: 'bob' };

function ctxOf(owner: TaskOwner): CallContext {
  return {
    tenant: owner.tenant,
    signal: new AbortController().signal,
    headers: {},
    transport: 'memory',
    security: { principalId: owner.principal_id, token: 'opaque', metadata: {} },
  };
}

/** A sink that keeps every event and tells when the first `approval.required` arrives. */
class WatchingSink extends InMemoryEventSink {
  private readonly parked = deferred<TaskEvent>();
  readonly taskEvents: TaskEvent[] = [];

  /** Resolves with the `approval.required` event of the run (the run is waiting from then on). */
  get approvalRequired(): Promise<TaskEvent> {
    return this.parked.promise;
  }

  override emitTaskEvent(taskEvent: TaskEvent, options?: FromTaskEventOptions): RunEvent {
    this.taskEvents.push(structuredClone(taskEvent));
    if (taskEvent.type === 'approval.required') this.parked.resolve(structuredClone(taskEvent));
    return super.emitTaskEvent(taskEvent, options);
  }
}

interface Harness {
  agent: Agent;
  sink: WatchingSink;
  /** The record ids the tool deleted, one entry per run of its handler. */
  deleted: string[];
}

function recordsAgent(options: {
  approvalStore: ApprovalStore;
  approvalHandler?: Agent['approvalHandler'];
  transport?: HTTPTransport;
  authenticator?: APIKeyAuth;
}): Harness {
  const sink = new WatchingSink();
  const deleted: string[] = [];
  const agent = new Agent({
    card: { name: 'records' },
    approvalStore: options.approvalStore,
    ...(options.approvalHandler ? { approvalHandler: options.approvalHandler } : {}),
    ...(options.transport ? { transport: options.transport, authenticator: options.authenticator } : {}),
    policy: { 'records.delete': 'require_approval' },
    eventSink: sink,
    tools: [
      {
        name: 'delete_record',
        description: 'Deletes a record.',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string', minLength: 1 } },
          required: ['id'],
          additionalProperties: false,
        },
        capabilities: ['records.delete'],
        handler: async (args: Record<string, unknown>) => {
          deleted.push(String(args.id));
          return { id: args.id, deleted: true };
        },
      },
    ],
    execute: async (_task, run) => {
      await run.callTool('delete_record', { id: 'r1' });
    },
  });
  return { agent, sink, deleted };
}

interface Announced {
  request_id: string;
  action_hash: string;
  action: Record<string, unknown>;
}

function requestOf(event: TaskEvent): Announced {
  return (event as unknown as { request: Announced }).request;
}

let dir: string;
let counter = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-approvals-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('durable approvals over one SQLite file, two store instances', () => {
  let parked: SqliteApprovalStore;
  let reviewer: SqliteApprovalStore;
  beforeEach(() => {
    const path = join(dir, `approvals-${(counter += 1)}.db`);
    // The run's store polls often: the reviewer's decisions reach it only through the file.
    parked = new SqliteApprovalStore({ path, pollIntervalMs: 10 });
    reviewer = new SqliteApprovalStore({ path });
  });
  afterEach(() => {
    parked.close();
    reviewer.close();
  });

  it('parks the run, announces the request with its action hash, and acts once after the approval', async () => {
    const { agent, sink, deleted } = recordsAgent({ approvalStore: parked });
    const task = createTask('delete r1');
    const done = agent.runTask(task, ctxOf(ALICE));
    const request = requestOf(await sink.approvalRequired);
    expect(request.action_hash).toBe(actionHash(request.action));
    expect(deleted).toEqual([]);
    expect((await agent.getTask(task.id, ctxOf(ALICE)))!.state).toBe('working');

    const [pending] = await reviewer.listApprovals(ALICE, { state: 'pending' });
    expect(pending).toMatchObject({
      request_id: request.request_id,
      task_id: task.id,
      tenant: 'acme',
      principal_id: 'alice',
      action_hash: request.action_hash,
      action: { name: 'delete_record', payload: { arguments: { id: 'r1' } } },
    });
    await reviewer.decideApproval(ALICE, request.request_id, {
      approved: true,
      action_hash: request.action_hash,
      decided_by: 'reviewer-1',
      reason: 'checked',
    });

    const finished = await done;
    expect(finished.state).toBe('completed');
    expect(deleted).toEqual(['r1']);
    const eventTypes = types(sink.taskEvents);
    expect(eventTypes.filter((type) => type.startsWith('approval.') || type.startsWith('action.'))).toEqual([
      'action.requested',
      'action.policy',
      'approval.required',
      'approval.decided',
      'action.started',
      'action.completed',
    ]);
    const decided = sink.taskEvents.find((event) => event.type === 'approval.decided') as unknown as {
      decision: unknown;
      request: Announced;
    };
    expect(decided.decision).toEqual({
      request_id: request.request_id,
      approved: true,
      decided_by: 'reviewer-1',
      reason: 'checked',
    });
    expect(decided.request.action_hash).toBe(request.action_hash);
    expect((await reviewer.getApproval(ALICE, request.request_id))!.state).toBe('approved');
  });

  it('fails the task with ACTION_DENIED after a denial, and runs nothing', async () => {
    const { agent, sink, deleted } = recordsAgent({ approvalStore: parked });
    const done = agent.runTask(createTask('delete r1'), ctxOf(ALICE));
    const request = requestOf(await sink.approvalRequired);
    await reviewer.decideApproval(ALICE, request.request_id, {
      approved: false,
      action_hash: request.action_hash,
      decided_by: 'reviewer-1',
      reason: 'not this one',
    });
    const finished = await done;
    expect(finished.state).toBe('failed');
    expect(errorOf(finished).code).toBe('ACTION_DENIED');
    expect(errorOf(finished).message).toContain('not this one');
    expect(deleted).toEqual([]);
    expect(types(sink.taskEvents)).toContain('action.denied');
    expect(types(sink.taskEvents)).not.toContain('action.started');
  });

  it('refuses a decision for another action hash, and the run keeps waiting for a right one', async () => {
    const { agent, sink, deleted } = recordsAgent({ approvalStore: parked });
    const task = createTask('delete r1');
    const done = agent.runTask(task, ctxOf(ALICE));
    const request = requestOf(await sink.approvalRequired);
    const otherAction = actionHash({ ...request.action, payload: { arguments: { id: 'r2' } } });
    await expect(
      reviewer.decideApproval(ALICE, request.request_id, { approved: true, action_hash: otherAction }),
    ).rejects.toBeInstanceOf(ApprovalActionMismatchError);
    expect((await reviewer.getApproval(ALICE, request.request_id))!.state).toBe('pending');
    expect((await agent.getTask(task.id, ctxOf(ALICE)))!.state).toBe('working');
    expect(deleted).toEqual([]);
    await reviewer.decideApproval(ALICE, request.request_id, {
      approved: true,
      action_hash: request.action_hash,
    });
    expect((await done).state).toBe('completed');
    expect(deleted).toEqual(['r1']);
  });

  it('withdraws the request when the task is canceled while it waits; the task ends canceled', async () => {
    const { agent, sink, deleted } = recordsAgent({ approvalStore: parked });
    const task = createTask('delete r1');
    const done = agent.runTask(task, ctxOf(ALICE));
    const request = requestOf(await sink.approvalRequired);
    const canceled = await agent.cancelTask(task.id, 'changed my mind', ctxOf(ALICE));
    expect(canceled.state).toBe('canceled');
    expect((await done).state).toBe('canceled');
    expect(canceled.metadata.cancel_reason).toBe('changed my mind');
    expect(await reviewer.getApproval(ALICE, request.request_id)).toMatchObject({
      state: 'withdrawn',
      reason: 'changed my mind',
    });
    await expect(
      reviewer.decideApproval(ALICE, request.request_id, {
        approved: true,
        action_hash: request.action_hash,
      }),
    ).rejects.toBeInstanceOf(ApprovalAlreadyDecidedError);
    expect(deleted).toEqual([]);
    expect(types(sink.taskEvents)).not.toContain('approval.decided');
  });

  it("files the request under the task's owner: another principal can neither see nor decide it", async () => {
    const { agent, sink, deleted } = recordsAgent({ approvalStore: parked });
    const done = agent.runTask(createTask('delete r1'), ctxOf(ALICE));
    const request = requestOf(await sink.approvalRequired);
    await expect(
      reviewer.decideApproval(BOB, request.request_id, { approved: true, action_hash: request.action_hash }),
    ).rejects.toBeInstanceOf(ApprovalNotFoundError);
    expect(await reviewer.getApproval(BOB, request.request_id)).toBeNull();
    expect(await reviewer.listApprovals(BOB)).toEqual([]);
    expect(await reviewer.listApprovals({ tenant: 'other', principal_id: 'alice' })).toEqual([]);
    expect(deleted).toEqual([]);
    await reviewer.decideApproval(ALICE, request.request_id, {
      approved: true,
      action_hash: request.action_hash,
    });
    expect((await done).state).toBe('completed');
    expect(deleted).toEqual(['r1']);
  });
});

describe('the approvalStore option', () => {
  it('is checked: it must look like an ApprovalStore', () => {
    expect(() => new Agent({ card: { name: 'a' }, approvalStore: {} as never })).toThrow(ValueError);
    expect(
      () => new Agent({ card: { name: 'a' }, approvalStore: { createApproval: () => null } as never }),
    ).toThrow(/approvalStore must be an ApprovalStore/);
    const store = new InMemoryApprovalStore();
    expect(new Agent({ card: { name: 'a' }, approvalStore: store }).approvalStore).toBe(store);
  });

  it('leaves the in-process approval handler in charge when both are set', async () => {
    const store = new InMemoryApprovalStore();
    const { agent, deleted } = recordsAgent({
      approvalStore: store,
      approvalHandler: (request) => ({
        request_id: request.request_id,
        approved: true,
        decided_by: 'handler',
      }),
    });
    const finished = await agent.runTask(createTask('delete r1'));
    expect(finished.state).toBe('completed');
    expect(deleted).toEqual(['r1']);
    expect(await store.listApprovals({ tenant: '', principal_id: 'anonymous' })).toEqual([]);
  });

  it('files a task without a caller under the default owner, and works with the in-memory store', async () => {
    const store = new InMemoryApprovalStore();
    const { agent, sink, deleted } = recordsAgent({ approvalStore: store });
    const done = agent.runTask(createTask('delete r1'));
    const request = requestOf(await sink.approvalRequired);
    const anonymous = { tenant: '', principal_id: 'anonymous' };
    await store.decideApproval(anonymous, request.request_id, {
      approved: true,
      action_hash: request.action_hash,
    });
    expect((await done).state).toBe('completed');
    expect(deleted).toEqual(['r1']);
  });

  it('fails the task with the store’s error when the request cannot be filed, and runs nothing', async () => {
    const store = new InMemoryApprovalStore();
    store.close();
    const { agent, deleted } = recordsAgent({ approvalStore: store });
    const finished = await agent.runTask(createTask('delete r1'));
    expect(finished.state).toBe('failed');
    expect(errorOf(finished).code).toBe('UNAVAILABLE');
    expect(deleted).toEqual([]);
  });
});

describe('durable approvals decided over HTTP', () => {
  const ALICE_KEY = 'sk-alice-0123456789';
  const BOB_KEY = 'sk-bobby-0123456789';

  it('parks a task sent over HTTP until a reviewer approves it with POST /approvals/{id}', async () => {
    const store = new SqliteApprovalStore({ path: join(dir, 'http.db') });
    const authenticator = new APIKeyAuth({
      validKeys: { [ALICE_KEY]: [], [BOB_KEY]: [] },
      principals: { [ALICE_KEY]: 'alice', [BOB_KEY]: 'bob' },
    });
    const transport = new HTTPTransport({
      url: 'http://127.0.0.1:0',
      authenticator,
      routes: [approvalRoutes(store)],
    });
    const { agent, sink, deleted } = recordsAgent({ approvalStore: store, transport, authenticator });
    await agent.start();
    const call = (path: string, key: string, body?: unknown) =>
      fetch(`${transport.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    try {
      const task = createTask('delete r1');
      const sent = call('/tasks/', ALICE_KEY, task).then(async (response) => (await response.json()) as Task);
      const request = requestOf(await sink.approvalRequired);

      const listed = (await (await call('/approvals?state=pending', ALICE_KEY)).json()) as {
        approvals: { request_id: string; task_id: string; action_hash: string }[];
      };
      expect(listed.approvals).toHaveLength(1);
      expect(listed.approvals[0]).toMatchObject({
        request_id: request.request_id,
        task_id: task.id,
        action_hash: request.action_hash,
      });
      // Bob is another owner: the request does not exist for him.
      expect(await (await call('/approvals', BOB_KEY)).json()).toEqual({ approvals: [] });
      const stranger = await call(`/approvals/${request.request_id}`, BOB_KEY, {
        approved: true,
        action_hash: request.action_hash,
      });
      expect(stranger.status).toBe(404);
      expect(deleted).toEqual([]);

      const decided = await call(`/approvals/${request.request_id}`, ALICE_KEY, {
        approved: true,
        action_hash: request.action_hash,
      });
      expect(decided.status).toBe(200);
      expect(await decided.json()).toMatchObject({ state: 'approved', decided_by: 'alice' });
      const finished = await sent;
      expect(finished.state).toBe('completed');
      expect(deleted).toEqual(['r1']);
      const again = await call(`/approvals/${request.request_id}`, ALICE_KEY, {
        approved: false,
        action_hash: request.action_hash,
      });
      expect(again.status).toBe(409);
      expect(((await again.json()) as { error: { code: string } }).error.code).toBe(
        'APPROVAL_ALREADY_DECIDED',
      );
    } finally {
      await agent.stop();
      store.close();
    }
  });
});
