/**
 * Ending a task whose run was lost (its replica went away), from inside the transaction of whoever
 * noticed. Internal to the package: the coordination calls it, with the store's redaction policy.
 */
import { ValueError, type Task, type TaskEvent } from '@agent/core';
import type { RedactionPolicy, TaskOwner } from '@agent/events';
import type { PoolClient } from 'pg';
import { eventTextsOf, isTerminal, normalizeTimestamp, ownerOf, taskRowOf } from '@agent/events/internal';
import { appendEventsIn, lockTask, saveSnapshotIn } from './task-writes.js';

/**
 * Appends `events` (numbered after the log's last sequence) and saves `finalTask` as the record,
 * stamped `nowIso`, exactly once however many callers race: the record is locked first, and a
 * record that is missing or terminal already is left alone. Writes the same text and sends the
 * same notifications as the run store's own appendTaskEvents and saveTaskSnapshot.
 * @returns true when this call ended the task.
 * @throws ValueError for an event or task the store would refuse (nothing is written).
 */
export async function finishTaskInTransaction(
  client: PoolClient,
  owner: TaskOwner,
  taskId: string,
  events: TaskEvent[],
  finalTask: Task,
  redaction: RedactionPolicy | null,
  nowIso: string,
): Promise<boolean> {
  const who = ownerOf(owner);
  const texts = eventTextsOf(taskId, events, redaction);
  const nowMs = Date.parse(normalizeTimestamp(nowIso, 'nowIso'));
  if (finalTask?.id !== taskId)
    throw new ValueError(`finalTask is task ${JSON.stringify(finalTask?.id)}, not ${taskId}`, {
      data: { field: 'finalTask' },
    });
  const row = taskRowOf(finalTask, { owner: who }, redaction, () => nowMs);
  const locked = await lockTask(client, who, taskId, null);
  if (!locked || isTerminal(locked.state)) return false;
  await appendEventsIn(client, who, taskId, locked, texts);
  await saveSnapshotIn(client, row, null);
  return true;
}
