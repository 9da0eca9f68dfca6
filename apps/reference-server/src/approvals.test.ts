/**
 * Durable approvals in the real server process (AGENT_APPROVALS=store): the demo agent's
 * `delete_record` parks its task until a reviewer decides over `/approvals` on the HTTP port, or,
 * with a SQLite run store, from another process opening the same file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTask, messageText, type Task } from '@agent/core';
import { SqliteApprovalStore, type ApprovalRecord } from '@agent/events';
import { startServerProcess, type ServerProcess } from './test-support/server-process.js';

jest.setTimeout(60_000);

// Two principals: a key is named by its first 8 characters, so these differ there.
const ALICE_KEY = 'sk-alice-0123456789';
const BOB_KEY = 'sk-bobby-0123456789';
/** Bound of every poll: far above how long a parked run takes to file its request. */
const POLL_BOUND_MS = 20_000;

interface Answer {
  status: number;
  json: unknown;
}

async function call(base: string, route: string, key: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

/** Reads the caller's pending requests until one is there, at most POLL_BOUND_MS. */
async function pendingRequest(base: string, key: string): Promise<ApprovalRecord> {
  const deadline = Date.now() + POLL_BOUND_MS;
  for (;;) {
    const { json } = await call(base, '/approvals?state=pending', key);
    const [first] = (json as { approvals: ApprovalRecord[] }).approvals;
    if (first) return first;
    if (Date.now() > deadline) throw new Error('no approval request was filed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function reply(task: Task): string {
  return messageText([...task.messages].reverse().find((m) => m.role === 'agent'));
}

describe('AGENT_APPROVALS=store', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'reference-approvals-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    AGENT_AUTH: 'apikey',
    AGENT_API_KEYS: `${ALICE_KEY},${BOB_KEY}`,
    AGENT_APPROVALS: 'store',
    ...extra,
  });

  it('parks delete_record until its owner approves it over HTTP, once', async () => {
    const server: ServerProcess = await startServerProcess(env());
    const base = server.urls.http;
    try {
      const task = createTask('tool delete_record {"id":"r1"}');
      const sent = call(base, '/tasks/', ALICE_KEY, task);
      const pending = await pendingRequest(base, ALICE_KEY);
      expect(pending).toMatchObject({
        task_id: task.id,
        state: 'pending',
        action: { kind: 'tool.call', name: 'delete_record', payload: { arguments: { id: 'r1' } } },
      });
      const running = await call(base, `/tasks/${task.id}`, ALICE_KEY);
      expect((running.json as Task).state).toBe('working');

      // Bob is another owner: the request is not there for him.
      expect((await call(base, '/approvals', BOB_KEY)).json).toEqual({ approvals: [] });
      const stranger = await call(base, `/approvals/${pending.request_id}`, BOB_KEY, {
        approved: true,
        action_hash: pending.action_hash,
      });
      expect([stranger.status, (stranger.json as { error: { code: string } }).error.code]).toEqual([
        404,
        'APPROVAL_NOT_FOUND',
      ]);

      const decided = await call(base, `/approvals/${pending.request_id}`, ALICE_KEY, {
        approved: true,
        action_hash: pending.action_hash,
        reason: 'r1 is obsolete',
      });
      expect(decided.status).toBe(200);
      expect(decided.json).toMatchObject({ state: 'approved', reason: 'r1 is obsolete' });

      const finished = await sent;
      expect(finished.status).toBe(200);
      expect((finished.json as Task).state).toBe('completed');
      expect(JSON.parse(reply(finished.json as Task))).toEqual({ id: 'r1', deleted: true });

      const again = await call(base, `/approvals/${pending.request_id}`, ALICE_KEY, {
        approved: false,
        action_hash: pending.action_hash,
      });
      expect([again.status, (again.json as { error: { code: string } }).error.code]).toEqual([
        409,
        'APPROVAL_ALREADY_DECIDED',
      ]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('keeps the requests in the SQLite file, where another process decides them', async () => {
    const file = path.join(dir, 'tasks.db');
    const server = await startServerProcess(env({ AGENT_RUN_STORE: `sqlite:${file}` }));
    const base = server.urls.http;
    // This test process is the other process: its own connection to the server's file.
    const reviewer = new SqliteApprovalStore({ path: file });
    try {
      const task = createTask('tool delete_record {"id":"r2"}');
      const sent = call(base, '/tasks/', ALICE_KEY, task);
      const pending = await pendingRequest(base, ALICE_KEY);
      const owner = { tenant: pending.tenant, principal_id: pending.principal_id };
      expect(await reviewer.getApproval(owner, pending.request_id)).toEqual(pending);
      await reviewer.decideApproval(owner, pending.request_id, {
        approved: false,
        action_hash: pending.action_hash,
        decided_by: 'auditor',
      });
      const finished = (await sent).json as Task;
      expect(finished.state).toBe('failed');
      expect((finished.metadata.error as { code: string }).code).toBe('ACTION_DENIED');
      expect((await call(base, `/approvals/${pending.request_id}`, ALICE_KEY)).json).toMatchObject({
        state: 'denied',
        decided_by: 'auditor',
      });
    } finally {
      reviewer.close();
      expect(await server.stop()).toBe(0);
    }
  });

  it('withdraws the requests of the runs a stop cancels; the file keeps them', async () => {
    const file = path.join(dir, 'stop.db');
    const server = await startServerProcess(
      env({ AGENT_RUN_STORE: `sqlite:${file}`, AGENT_STOP_GRACE_MS: '0' }),
    );
    const base = server.urls.http;
    const sent = call(base, '/tasks/', ALICE_KEY, createTask('tool delete_record {"id":"r1"}'));
    const pending = await pendingRequest(base, ALICE_KEY);
    expect(await server.stop()).toBe(0);
    expect(((await sent).json as Task).state).toBe('canceled');
    const reader = new SqliteApprovalStore({ path: file });
    try {
      const owner = { tenant: pending.tenant, principal_id: pending.principal_id };
      expect(await reader.getApproval(owner, pending.request_id)).toMatchObject({
        state: 'withdrawn',
        reason: 'server shutting down',
      });
    } finally {
      reader.close();
    }
  });

  it('withdraws a request whose task is canceled while it waits', async () => {
    const server = await startServerProcess(env());
    const base = server.urls.http;
    try {
      const task = createTask('tool delete_record {"id":"r1"}');
      const sent = call(base, '/tasks/', ALICE_KEY, task);
      const pending = await pendingRequest(base, ALICE_KEY);
      const canceled = await call(base, '/tasks/cancel', ALICE_KEY, {
        task_id: task.id,
        reason: 'never mind',
      });
      expect((canceled.json as Task).state).toBe('canceled');
      expect(((await sent).json as Task).state).toBe('canceled');
      expect((await call(base, `/approvals/${pending.request_id}`, ALICE_KEY)).json).toMatchObject({
        state: 'withdrawn',
        reason: 'never mind',
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
