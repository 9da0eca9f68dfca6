import type { Task, TaskEvent } from '@agent/core';

/** Collects a whole stream. */
export async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const out: TaskEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** A promise plus its resolver, for tests that wait on something happening inside a run. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves when the signal aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export const types = (events: readonly { type: string }[]): string[] => events.map((event) => event.type);

export function finalStatuses(events: readonly TaskEvent[]): TaskEvent[] {
  return events.filter((event) => event.type === 'task.status' && event.final === true);
}

export function errorOf(task: Task): { code: string; message: string; data?: unknown } {
  return task.metadata.error as { code: string; message: string; data?: unknown };
}
