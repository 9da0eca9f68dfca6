/**
 * An A2A stream (SendStreamingMessage, SubscribeToTask) as native TaskEvents, ending with exactly
 * one final `task.status`: the decoder produces it at a terminal or interrupted state; a stream that
 * closes before one, or breaks after its first event, is finished here as `failed` (a `task.error`
 * first, as the server pipeline does for a handler that stops early). A failure before the first
 * event rejects instead, so the caller sees the agent's refusal as an error.
 */
import { AgentError, InternalError, type Task, type TaskEvent } from '@agent/core';
import { failedEnding } from '@agent/server';
import { A2AStreamDecoder } from '../stream-codec.js';

export interface TaskStreamOptions {
  /** Where the stream comes from, for messages. */
  url: string;
  /** The task the events name until the agent names its own (a reply without a task keeps this id). */
  fallback: Task;
  /** Events at or before this position (1-based, in this stream) are skipped. Default 0. */
  after?: number;
  /** Called with the server's id of the task once a frame named it. */
  onRemoteId?(id: string): void;
}

export async function* taskEvents(
  responses: AsyncGenerator<unknown>,
  options: TaskStreamOptions,
): AsyncGenerator<TaskEvent> {
  const decoder = new A2AStreamDecoder();
  const after = options.after ?? 0;
  let position = 0;
  const numbered = (event: TaskEvent): TaskEvent => {
    position++;
    return { ...event, sequence: position, task_id: event.task_id || options.fallback.id };
  };
  let ending: AgentError;
  try {
    for await (const response of responses) {
      for (const event of decoder.decode(response)) {
        const sent = withTaskId(numbered(event), options.fallback.id);
        if (position > after) yield sent;
      }
      if (decoder.remoteTaskId !== undefined) options.onRemoteId?.(decoder.remoteTaskId);
      if (decoder.done) return;
    }
    ending = new InternalError(`The A2A stream from ${options.url} ended before a final state`);
  } catch (error) {
    const failure = AgentError.from(error);
    // Nothing arrived, or the caller went away: an error, not a task outcome.
    if (position === 0 || failure.code === 'TASK_CANCELED') throw failure;
    ending = failure;
  }
  const task = decoder.task ?? options.fallback;
  for (const event of failedEnding(withId(task, options.fallback.id), ending)) {
    yield numbered(event);
  }
}

/** A final status carries the whole task: it keeps the id the events name. */
function withTaskId(event: TaskEvent, fallbackId: string): TaskEvent {
  if (event.type !== 'task.status' || !event.task) return event;
  return { ...event, task: withId(event.task, fallbackId) };
}

function withId(task: Task, fallbackId: string): Task {
  return task.id === '' ? { ...task, id: fallbackId } : task;
}
