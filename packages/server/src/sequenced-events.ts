import type { TaskEvent } from '@agent/core';
import { copyWith } from '@agent/core/internal';
import type { StoredTaskEvent } from '@agent/events';

/** Rows of a task's stored log as the events a caller gets: each a copy with the sequence the store gave it. */
export function sequencedEvents(rows: readonly StoredTaskEvent[]): TaskEvent[] {
  return rows.map(({ sequence, event }) => copyWith(event, 'sequence', sequence) as TaskEvent);
}
