/**
 * The server side of an in-process call: the agent's pipeline, called exactly as a network wire
 * adapter calls it (open first, which refuses while stopping and authenticates, then the operation),
 * only without decoding or encoding: objects pass as they are.
 */
import type { AgentCard, Task, TaskList } from '@agent/core';
import type { EventFeed, RequestInfo, ServerCall, ServerPipeline } from '@agent/server';

/**
 * A unary operation by name (`send_task`, `cancel_task`, `get_card`, `get_task`, `list_tasks`);
 * rejects only with a safe AgentError.
 */
export async function serveUnary(
  pipeline: ServerPipeline,
  request: RequestInfo,
  operation: string,
  payload: unknown,
): Promise<Task | AgentCard | TaskList> {
  const call = await pipeline.open(request);
  return pipeline.unary(call, operation, payload);
}

/** A feed of task events (a new task's stream, or a subscription), once the call is authenticated. */
export async function serveFeed(
  pipeline: ServerPipeline,
  request: RequestInfo,
  open: (call: ServerCall) => EventFeed,
): Promise<EventFeed> {
  const call = await pipeline.open(request);
  return open(call);
}
