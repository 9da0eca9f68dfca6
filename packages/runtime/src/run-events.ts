import type { TaskEventType } from '@agent/core';

/**
 * An event as runtime code writes it: the type plus its payload. The run fills `task_id`,
 * `timestamp`, `run_id` and `agent_name` (and `step` when an inference step is active).
 */
export interface RuntimeEventInput {
  type: TaskEventType;
  [key: string]: unknown;
}

/** Writes one event into the run's stream and sink; resolves when a bounded stream accepted it. */
export type EmitFunction = (event: RuntimeEventInput) => Promise<void>;
