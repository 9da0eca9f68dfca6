/**
 * The server side of an in-process call: the agent's pipeline, called exactly as a network wire
 * adapter calls it (open first, which refuses while stopping and authenticates, then the operation),
 * only without decoding or encoding: objects pass as they are.
 */
import type { AgentCard, Task } from '@agent/core';
import type { RequestInfo, ServerPipeline, TaskEventStream } from '@agent/server';

/** A unary operation by name (`send_task`, `cancel_task`, `get_card`); rejects only with a safe AgentError. */
export async function serveUnary(
  pipeline: ServerPipeline,
  request: RequestInfo,
  operation: string,
  payload: unknown,
): Promise<Task | AgentCard> {
  const call = await pipeline.open(request);
  return pipeline.unary(call, operation, payload);
}

/** A task's events under the stream rule, once the call is authenticated. */
export async function serveStream(
  pipeline: ServerPipeline,
  request: RequestInfo,
  task: Task,
): Promise<TaskEventStream> {
  const call = await pipeline.open(request);
  return pipeline.stream(call, task);
}
