/**
 * Transport-level stream objects: `task.status`, `task.artifact`, `llm.stream` and the runtime's other
 * event types (`{type, task_id, timestamp, ...payload}`; see "Wire decisions" in docs/architecture.md).
 * Every streaming transport yields these, and `@agent/events` normalizes them into RunEvents.
 */
import type { Artifact, JsonObject, Message, Task, TaskState } from './wire.js';

/**
 * Set by the server as it records the event: 1-based, per task, without gaps. A subscriber that saw
 * event `n` resubscribes with `after = n` and gets `n + 1…`.
 */
interface Sequenced {
  sequence?: number;
}

export interface TaskStatusEvent extends Sequenced {
  type: 'task.status';
  task_id: string;
  state: TaskState;
  /** True on the one status that ends a stream; it then carries the whole Task. */
  final: boolean;
  timestamp: string;
  message?: Message;
  task?: Task;
}

export interface TaskArtifactEvent extends Sequenced {
  type: 'task.artifact';
  task_id: string;
  artifact: Artifact;
  /** True when the artifact's parts extend an artifact with the same id sent before. */
  append: boolean;
  last_chunk: boolean;
  timestamp: string;
}

export interface LLMStreamEvent extends Sequenced {
  type: 'llm.stream';
  task_id: string;
  delta: string;
  timestamp: string;
}

/** Runtime event types carried as `{type, task_id, timestamp, ...payload}`. */
export const RUNTIME_EVENT_TYPES = [
  'task.progress',
  'task.error',
  'context.prepared',
  'llm.call.started',
  'llm.call.completed',
  'budget.warning',
  'budget.exceeded',
  'action.requested',
  'action.policy',
  'approval.required',
  'approval.decided',
  'action.started',
  'action.completed',
  'action.denied',
  'action.failed',
] as const;
export type RuntimeEventType = (typeof RUNTIME_EVENT_TYPES)[number];

export interface RuntimeTaskEvent extends JsonObject {
  type: RuntimeEventType;
  sequence?: number;
  task_id: string;
  timestamp: string;
}

export type TaskEvent = TaskStatusEvent | TaskArtifactEvent | LLMStreamEvent | RuntimeTaskEvent;
export type TaskEventType = TaskEvent['type'];

export const TASK_EVENT_TYPES: readonly TaskEventType[] = [
  'task.status',
  'task.artifact',
  'llm.stream',
  ...RUNTIME_EVENT_TYPES,
];

/** True for the status event that ends a stream. */
export function isFinalEvent(event: TaskEvent): event is TaskStatusEvent {
  return event.type === 'task.status' && event.final === true;
}
