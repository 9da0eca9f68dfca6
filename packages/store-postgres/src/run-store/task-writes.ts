/**
 * The writes of a task's record and event log, inside a transaction the caller holds. The public
 * run store and the ending of a lost task (by another replica) go through these same functions, so
 * the text stored and the notifications sent are the same whoever writes.
 */
import { TaskNotCancelableError, TERMINAL_TASK_STATES } from '@agent/core';
import type { TaskOwner } from '@agent/events';
import type { PoolClient } from 'pg';
import { isTerminal, taskNotFound, type TaskRow } from '@agent/events/internal';
import type { PostgresDatabase } from '../database.js';

/** The channel a task's writers notify at commit: `{"tenant","principal_id","task_id","sequence"}`. */
export const TASK_EVENTS_CHANNEL = 'agent_task_events';

/** The terminal states as an SQL list (constants, so no parameter is needed). */
export const TERMINAL_SQL = TERMINAL_TASK_STATES.map((state) => `'${state}'`).join(', ');

const KEY = 'tenant = $1 AND principal_id = $2 AND task_id = $3';

/**
 * Deletes finished records (with their events, by the foreign key) saved before `cutoff`. Rows
 * another transaction holds are skipped, not waited for: a sweep never blocks a writer, and two
 * sweeps never deadlock; what one skips a later sweep deletes. Bounded per call. Reads hide such
 * records at once, so deleting them is only a matter of space: a store sweeps now and then, not on
 * every write.
 */
export async function sweepExpired(database: PostgresDatabase, cutoff: string): Promise<void> {
  await database.query(
    `DELETE FROM agent_tasks WHERE (tenant, principal_id, task_id) IN (
       SELECT tenant, principal_id, task_id FROM agent_tasks
       WHERE state IN (${TERMINAL_SQL}) AND updated_at < $1
       LIMIT 1000 FOR UPDATE SKIP LOCKED)`,
    [cutoff],
  );
}

/**
 * The notification on {@link TASK_EVENTS_CHANNEL} of the record a statement returns, for its
 * `RETURNING` list: `{"tenant","principal_id","task_id","sequence"}`, the sequence being the log's
 * last. It wakes the task's watchers (delivered when the transaction commits, dropped if it rolls
 * back), and the statement that wrote the record sends it, with no round trip of its own.
 */
const NOTIFY_RETURNED = `pg_notify('${TASK_EVENTS_CHANNEL}', json_build_object(
  'tenant', tenant, 'principal_id', principal_id, 'task_id', task_id, 'sequence', event_count)::text)`;

/** The columns a snapshot writes, in the order of {@link snapshotParams}. */
const SNAPSHOT_COLUMNS = `tenant, principal_id, task_id, state, run_id, session_id, trace_id, agent_name,
  created_at, updated_at, task`;

/** What a snapshot of a live record replaces (`t` the record, `EXCLUDED` the snapshot). */
const SNAPSHOT_SET = `state = EXCLUDED.state, run_id = EXCLUDED.run_id, session_id = EXCLUDED.session_id,
  trace_id = EXCLUDED.trace_id, agent_name = EXCLUDED.agent_name, created_at = EXCLUDED.created_at,
  updated_at = EXCLUDED.updated_at, task = EXCLUDED.task`;

function snapshotParams(row: TaskRow): unknown[] {
  const c = row.columns;
  return [
    c.tenant,
    c.principal_id,
    c.task_id,
    c.state,
    c.run_id,
    c.session_id,
    c.trace_id,
    c.agent_name,
    c.created_at,
    c.updated_at,
    row.task,
  ];
}

/** True for an `agent_task_events` row `e` holding a final `task.status`: the log it ends is closed. */
const FINAL_STATUS = `(e.event::jsonb ->> 'type') = 'task.status' AND (e.event::jsonb -> 'final') = 'true'::jsonb`;

/**
 * The rows of event texts `$texts` after the last sequence of the record a CTE named `written`
 * returned (its `event_count` already counts them), for the log.
 */
const appendWritten = (texts: string) => `appended AS (
  INSERT INTO agent_task_events (tenant, principal_id, task_id, sequence, event)
  SELECT w.tenant, w.principal_id, w.task_id, w.event_count - cardinality(${texts}::text[]) + e.ordinality::integer, e.event
  FROM written w, unnest(${texts}::text[]) WITH ORDINALITY AS e(event, ordinality))`;

/**
 * A snapshot and the events after it (none, or some) as one statement outside any transaction: the
 * upsert counts the events into the record's `event_count`, the rows follow, and the notification
 * carries the new last sequence. It writes only where the transaction of {@link saveSnapshotIn} and
 * {@link appendEventsIn} would write the same without a check of its own: a new record, or a live
 * one whose log, when the snapshot ends the task, is seen to end with an event that is not a final
 * status. The log is read with the statement's snapshot, which a concurrent append may postdate
 * (the row lock is waited for after it was taken), so an open log must be seen, not only a closed
 * one missed: an unseen last event also refuses.
 * @returns false when nothing was written: the caller then takes the transaction, which decides.
 */
export async function saveWithEventsAtOnce(
  database: PostgresDatabase,
  row: TaskRow,
  texts: readonly string[],
): Promise<boolean> {
  const count = texts.length;
  const { rows } = await database.query(
    `WITH written AS (
       INSERT INTO agent_tasks AS t (${SNAPSHOT_COLUMNS}, event_count)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, cardinality($12::text[]))
       ON CONFLICT (tenant, principal_id, task_id) DO UPDATE SET ${SNAPSHOT_SET},
         event_count = t.event_count + EXCLUDED.event_count
         WHERE t.state NOT IN (${TERMINAL_SQL}) AND CASE
           WHEN EXCLUDED.event_count > 0 AND EXCLUDED.state IN (${TERMINAL_SQL}) THEN
             t.event_count = 0 OR EXISTS (SELECT 1 FROM agent_task_events e
               WHERE e.tenant = t.tenant AND e.principal_id = t.principal_id AND e.task_id = t.task_id
                 AND e.sequence = t.event_count AND (${FINAL_STATUS}) IS NOT TRUE)
           ELSE true END
       RETURNING tenant, principal_id, task_id, event_count)${count > 0 ? `, ${appendWritten('$12')}` : ''}
     SELECT ${NOTIFY_RETURNED} FROM written`,
    [...snapshotParams(row), texts],
  );
  return rows.length > 0;
}

/**
 * Event texts appended to the log of a live (not terminal) record as one statement outside any
 * transaction: numbered under the row lock of the update that counts them, with the notification.
 * A terminal record is left to {@link appendToTaskIn}, whose check of the log reads it after the lock,
 * and so are no texts at all (an empty append still answers whether the task exists and is open).
 * @returns the sequences, or undefined when nothing was written (no texts, no live record): the
 * caller then takes the transaction, which decides.
 */
export async function appendToLiveTaskAtOnce(
  database: PostgresDatabase,
  owner: TaskOwner,
  taskId: string,
  texts: readonly string[],
): Promise<number[] | undefined> {
  if (texts.length === 0) return undefined;
  const { rows } = await database.query<{ event_count: number }>(
    `WITH written AS (
       UPDATE agent_tasks SET event_count = event_count + cardinality($4::text[])
       WHERE ${KEY} AND state NOT IN (${TERMINAL_SQL})
       RETURNING tenant, principal_id, task_id, event_count), ${appendWritten('$4')}
     SELECT event_count, ${NOTIFY_RETURNED} FROM written`,
    [owner.tenant, owner.principal_id, taskId, texts],
  );
  const last = rows[0]?.event_count;
  return last === undefined ? undefined : texts.map((_, index) => last - texts.length + 1 + index);
}

/**
 * Upserts a snapshot. A record whose state is terminal keeps its state, ids and task (an ending is
 * final: a replica that lost the task cannot overwrite the ending another one wrote); only its
 * `updated_at` moves, since retention counts from the last save. An expired record is replaced by a
 * new one, with an empty log. Notifies with the log's last sequence unless `notify` is false (a
 * caller that appends to the log next, in the same transaction, notifies then).
 *
 * Returns the record as {@link lockTask} would: the statement that saved it locked it for the rest
 * of the transaction.
 */
export async function saveSnapshotIn(
  client: PoolClient,
  row: TaskRow,
  cutoff: string | null,
  notify = true,
): Promise<LockedTask | undefined> {
  const c = row.columns;
  const key = [c.tenant, c.principal_id, c.task_id];
  if (cutoff !== null)
    await client.query(
      `DELETE FROM agent_tasks WHERE ${KEY} AND state IN (${TERMINAL_SQL}) AND updated_at < $4`,
      [...key, cutoff],
    );
  const returning = `RETURNING state, event_count${notify ? `, ${NOTIFY_RETURNED}` : ''}`;
  // ON CONFLICT locks the existing row even when its WHERE refuses the update, so the follow-up
  // below touches the row this statement saw.
  const saved = await client.query<LockedTask>(
    `INSERT INTO agent_tasks AS t (${SNAPSHOT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (tenant, principal_id, task_id) DO UPDATE SET ${SNAPSHOT_SET}
       WHERE t.state NOT IN (${TERMINAL_SQL})
     ${returning}`,
    snapshotParams(row),
  );
  const record =
    saved.rows[0] ??
    (
      await client.query<LockedTask>(`UPDATE agent_tasks SET updated_at = $4 WHERE ${KEY} ${returning}`, [
        ...key,
        c.updated_at,
      ])
    ).rows[0];
  return record && { state: record.state, event_count: record.event_count };
}

/** The locked record of a task: its state and the last sequence of its log. */
export interface LockedTask {
  state: string;
  event_count: number;
}

/**
 * Locks the owner's record of the task for the rest of the transaction (concurrent appends and
 * endings queue behind it); `undefined` when there is none, or it expired before `cutoff`.
 */
export async function lockTask(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  cutoff: string | null,
): Promise<LockedTask | undefined> {
  const { rows } = await client.query<LockedTask & { expired: boolean }>(
    `SELECT state, event_count,
            (state IN (${TERMINAL_SQL}) AND updated_at < $4) IS TRUE AS expired
     FROM agent_tasks WHERE ${KEY} FOR UPDATE`,
    [owner.tenant, owner.principal_id, taskId, cutoff],
  );
  const row = rows[0];
  return row && !row.expired ? { state: row.state, event_count: row.event_count } : undefined;
}

/**
 * True when the log already ends with a final `task.status`. A record can turn terminal just before
 * its final status is appended (a writer may save the final snapshot first); the log is closed only
 * once that status is in it.
 */
async function logIsClosed(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  last: number,
): Promise<boolean> {
  if (last === 0) return false;
  const { rows } = await client.query<{ closed: boolean }>(
    `SELECT ${FINAL_STATUS} AS closed FROM agent_task_events e WHERE ${KEY} AND sequence = $4`,
    [owner.tenant, owner.principal_id, taskId, last],
  );
  return rows[0]?.closed === true;
}

/**
 * Appends event texts to the log of a task locked by {@link lockTask}, numbered after its last
 * sequence, and notifies with the new last one.
 * @throws TaskNotCancelableError when the record is terminal and its log ends with a final status:
 * the task is over, and its log takes no more events.
 */
export async function appendEventsIn(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  locked: LockedTask,
  texts: readonly string[],
): Promise<number[]> {
  if (isTerminal(locked.state) && (await logIsClosed(client, owner, taskId, locked.event_count)))
    throw new TaskNotCancelableError(`Task ${taskId} has ended (${locked.state}): its event log is closed`, {
      data: { task_id: taskId, state: locked.state },
    });
  if (texts.length === 0) return [];
  const first = locked.event_count + 1;
  const last = locked.event_count + texts.length;
  // The rows, the record's last sequence and the notification in one statement: one round trip.
  await client.query(
    `WITH appended AS (
       INSERT INTO agent_task_events (tenant, principal_id, task_id, sequence, event)
       SELECT $1, $2, $3, $4 + (ordinality::integer) - 1, event FROM unnest($5::text[]) WITH ORDINALITY AS e(event, ordinality))
     UPDATE agent_tasks SET event_count = $6 WHERE ${KEY} RETURNING ${NOTIFY_RETURNED}`,
    [owner.tenant, owner.principal_id, taskId, first, texts, last],
  );
  locked.event_count = last;
  return texts.map((_, index) => first + index);
}

/**
 * {@link lockTask} for a write that needs the record.
 * @throws TaskNotFoundError when the owner has no (live) record of the task.
 */
export async function lockExistingTask(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  cutoff: string | null,
): Promise<LockedTask> {
  const locked = await lockTask(client, owner, taskId, cutoff);
  if (!locked) throw taskNotFound(taskId);
  return locked;
}

/**
 * Appends event texts to the log of the owner's task, locking its record first.
 * @throws TaskNotFoundError when the owner has no (live) record of the task.
 * @throws TaskNotCancelableError as {@link appendEventsIn}.
 */
export async function appendToTaskIn(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  cutoff: string | null,
  texts: readonly string[],
): Promise<number[]> {
  return appendEventsIn(client, owner, taskId, await lockExistingTask(client, owner, taskId, cutoff), texts);
}
