import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createTask, nowIso, type Task, type TaskEvent } from '@agent/core';
import type { TaskOwner } from '@agent/events';
import { PostgresRunStore } from '../run-store/postgres-run-store.js';
import { startTestPostgres, type TestPostgres } from '../testing/test-postgres.js';
import type { LostReplica } from './options.js';
import { eventually } from './test-support/eventually.js';
import { PostgresDatabase } from '../database.js';
import { sweepLostReplicas } from './lost-replicas.js';
import { FAST, openReplica, sql, type Replica } from './test-support/replicas.js';

const owner: TaskOwner = { tenant: 'acme', principal_id: 'alice' };
const other: TaskOwner = { tenant: '', principal_id: 'anonymous' };

let server: TestPostgres;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** Replica A in a child process: claims `tasks`, then renews its lease until killed. */
async function startReplicaProcess(
  url: string,
  tasks: { owner: TaskOwner; task_id: string }[],
): Promise<{ child: ChildProcess; replicaId: string }> {
  const script = join(__dirname, 'test-support', 'replica-process.cjs');
  const child = spawn(process.execPath, [script, url, JSON.stringify(FAST), JSON.stringify(tasks)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<string>((resolve) =>
    lines.once('line', (line) => resolve((JSON.parse(line) as { replica_id: string }).replica_id)),
  );
  const exited = once(child, 'exit').then(() => {
    throw new Error(`the replica process exited before it was ready: ${stderr}`);
  });
  const replicaId = await Promise.race([ready, exited]);
  exited.catch(() => undefined);
  return { child, replicaId };
}

function status(task: Task, final: boolean): TaskEvent {
  return final
    ? { type: 'task.status', task_id: task.id, state: task.state, final: true, timestamp: nowIso(), task }
    : { type: 'task.status', task_id: task.id, state: task.state, final: false, timestamp: nowIso() };
}

it('finishes each unfinished task of a killed replica exactly once while two replicas sweep', async () => {
  const url = await server.createDatabase();
  const replicas: Replica[] = [];
  const lost: LostReplica[] = [];
  const onLost = (report: LostReplica): void => void lost.push(report);
  const b = await openReplica(url, { ...FAST, onLost });
  replicas.push(b);
  const store = new PostgresRunStore({ database: b.db });
  let child: ChildProcess | undefined;
  try {
    // A's work when it dies: twelve tasks running (two owners), one finished but not yet released,
    // and one claimed before its first snapshot was saved.
    const running = Array.from({ length: 12 }, (_, index) => ({
      owner: index % 3 === 0 ? other : owner,
      task: { ...createTask(`job ${index}`, { id: `run-${index}` }), state: 'working' as const },
    }));
    for (const { owner: who, task } of running) {
      await store.saveTaskSnapshot(task, { owner: who });
      await store.appendTaskEvents(who, task.id, [status(task, false)]);
    }
    const done = { ...createTask('done', { id: 'done' }), state: 'completed' as const };
    await store.saveTaskSnapshot({ ...done, state: 'working' }, { owner });
    await store.appendTaskEvents(owner, 'done', [
      status({ ...done, state: 'working' }, false),
      status(done, true),
    ]);
    await store.saveTaskSnapshot(done, { owner });
    const doneBefore = {
      record: await store.getTaskRecord('done', owner),
      events: await store.listTaskEvents(owner, 'done'),
    };
    const claims = [
      ...running.map(({ owner: who, task }) => ({ owner: who, task_id: task.id })),
      { owner, task_id: 'done' },
      { owner, task_id: 'never-saved' },
    ];

    const a = await startReplicaProcess(url, claims);
    child = a.child;
    expect(await b.coordination.placement(owner, 'run-1')).toBe('elsewhere');
    const c = await openReplica(url, { ...FAST, onLost });
    replicas.push(c);

    child.kill('SIGKILL');
    await once(child, 'exit');
    await eventually(
      "A's lease row to be swept away",
      async () =>
        (await sql(url, 'SELECT 1 FROM agent_replicas WHERE replica_id = $1', [a.replicaId])).length === 0,
    );

    for (const { owner: who, task } of running) {
      const record = await store.getTaskRecord(task.id, who);
      expect(record?.state).toBe('failed');
      expect(record?.task.metadata.error).toEqual(expect.objectContaining({ code: 'REPLICA_LOST' }));
      const events = (await store.listTaskEvents(who, task.id)).map(({ event }) => event);
      expect(events.map((event) => event.type)).toEqual(['task.status', 'task.error', 'task.status']);
      expect(events.filter((event) => event.type === 'task.status' && event.final)).toHaveLength(1);
      expect(events[1]).toEqual(
        expect.objectContaining({ error: expect.objectContaining({ code: 'REPLICA_LOST' }) }),
      );
      expect(events[2]).toEqual(expect.objectContaining({ state: 'failed', final: true }));
      expect(await b.coordination.placement(who, task.id)).toBe('nowhere');
    }
    expect({
      record: await store.getTaskRecord('done', owner),
      events: await store.listTaskEvents(owner, 'done'),
    }).toEqual(doneBefore);
    expect(await store.getTaskRecord('never-saved', owner)).toBeNull();
    expect(await sql(url, 'SELECT 1 FROM agent_task_claims')).toEqual([]);

    // Between them, B and C reported every finished task once, and nothing else of A's.
    const reported = lost
      .filter((report) => report.replica_id === a.replicaId)
      .flatMap((report) => report.tasks.map((task) => `${task.owner.principal_id}/${task.task_id}`));
    expect(reported.sort()).toEqual(
      running.map(({ owner: who, task }) => `${who.principal_id}/${task.id}`).sort(),
    );
    expect(lost.every((report) => report.replica_id === a.replicaId)).toBe(true);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const replica of replicas) await replica.close();
  }
});

it('finishes a task once when six sweeps over three pools run at the same moment', async () => {
  const url = await server.createDatabase();
  const databases = Array.from({ length: 3 }, () => new PostgresDatabase({ connectionString: url }));
  try {
    const store = new PostgresRunStore({ database: databases[0]! });
    const ids = Array.from({ length: 30 }, (_, index) => `t-${index}`);
    for (const id of ids) {
      await store.saveTaskSnapshot({ ...createTask('job', { id }), state: 'working' }, { owner });
    }
    // A replica whose lease is over, as a stalled or killed process leaves it.
    await sql(
      url,
      "INSERT INTO agent_replicas (replica_id, expires_at) VALUES ('gone', now() - interval '1 second')",
    );
    for (const id of ids) {
      await sql(
        url,
        "INSERT INTO agent_task_claims (tenant, principal_id, task_id, replica_id) VALUES ($1, $2, $3, 'gone')",
        [owner.tenant, owner.principal_id, id],
      );
    }
    const stop = new AbortController();
    const reports = await Promise.all(
      Array.from({ length: 6 }, (_, index) => sweepLostReplicas(databases[index % 3]!, null, stop.signal)),
    );
    const finished = reports.flat().flatMap((report) => report.tasks.map((task) => task.task_id));
    expect(finished.sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const events = await store.listTaskEvents(owner, id);
      expect(events.map(({ event }) => event.type)).toEqual(['task.error', 'task.status']);
      expect((await store.getTaskRecord(id, owner))?.state).toBe('failed');
    }
    expect(await sql(url, "SELECT 1 FROM agent_replicas WHERE replica_id = 'gone'")).toEqual([]);
  } finally {
    for (const database of databases) await database.close();
  }
});
