import assert from 'node:assert/strict';
import { AgentError, isFinalEvent, messageText, type Task, type TaskEvent } from '@agent/core';

export { assert };

/**
 * The JSON form of a value: what a wire transport would deliver. In-process transports hand over
 * objects that may come from another realm (structuredClone), which strict deepEqual tells apart.
 */
export function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Runs `fn` and returns the error it rejects with; fails when it resolves. */
export async function rejection(fn: () => Promise<unknown>, what: string): Promise<AgentError> {
  try {
    await fn();
  } catch (error) {
    return AgentError.from(error);
  }
  assert.fail(`${what}: expected an error, got a result`);
}

export async function expectCode(
  fn: () => Promise<unknown>,
  code: string,
  what: string,
): Promise<AgentError> {
  const error = await rejection(fn, what);
  assert.equal(
    error.code,
    code,
    `${what}: expected error code ${code}, got ${error.code} (${error.message})`,
  );
  return error;
}

export function lastAgentText(task: Task): string {
  return messageText([...task.messages].reverse().find((m) => m.role === 'agent'));
}

export async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const out: TaskEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** A stream ends with exactly one final `task.status`, and it is the last event. */
export function assertOneFinalStatus(events: TaskEvent[], state: string, what: string): void {
  const finals = events.filter(isFinalEvent);
  assert.equal(finals.length, 1, `${what}: expected exactly one final task.status, got ${finals.length}`);
  assert.equal(events[events.length - 1], finals[0], `${what}: the final task.status must be the last event`);
  assert.equal(finals[0]!.state, state, `${what}: expected final state ${state}, got ${finals[0]!.state}`);
  const statuses = events.filter(
    (e) => e.type === 'task.status' && e.state === state && e.state === 'canceled',
  );
  if (state === 'canceled') assert.equal(statuses.length, 1, `${what}: exactly one canceled status expected`);
}

export function errorBody(json: unknown): { code?: unknown; message?: unknown; data?: unknown } {
  assert.ok(
    json && typeof json === 'object' && 'error' in json,
    `expected a JSON error body, got ${JSON.stringify(json)}`,
  );
  const error = (json as { error: unknown }).error;
  assert.ok(error && typeof error === 'object', 'error must be an object');
  return error as { code?: unknown; message?: unknown; data?: unknown };
}

/** Polls until `fn` stops throwing TASK_NOT_FOUND (the task is registered), then returns its result. */
export async function untilRegistered<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (AgentError.from(error).code !== 'TASK_NOT_FOUND' || signal.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
