/**
 * The worker thread behind `client.sync`: rebuilds the transport from its descriptor, runs each
 * request with the async AgentClient, and bumps the shared counter after posting the answer.
 */
import { workerData as rawWorkerData } from 'node:worker_threads';
import type { Transport } from '@agent/core';
import { AgentClient, type CallOptions, type GetTaskOptions, type ListTasksOptions } from './agent-client.js';
import { reviveComponent } from './component-descriptor.js';
import { withRetryDeadline } from './retry-runtime.js';
import { errorBody, type SyncRequest, type SyncResponse, type SyncWorkerData } from './sync-protocol.js';

const data = rawWorkerData as SyncWorkerData;

let client: AgentClient | undefined;
let setupError: unknown;
try {
  client = new AgentClient({
    transport: reviveComponent(data.transport) as Transport,
    baseUrl: data.baseUrl,
  });
} catch (error) {
  // Reported on every request: nothing else could tell the blocked caller.
  setupError = error;
}

/** Requests not answered yet. */
const pending = new Set<number>();

async function run(request: SyncRequest): Promise<unknown> {
  if (!client) throw setupError;
  const [first, second] = request.args;
  // The call's own options with its retry setting and the caller's deadline.
  const call = <T extends object>(options: T): T & CallOptions =>
    withRetryDeadline({ ...options, retry: request.retry }, request.deadline);
  switch (request.op) {
    case 'sendTask':
      return client.sendTask(first as Parameters<AgentClient['sendTask']>[0], call({}));
    case 'sendMessage':
      return client.sendMessage(
        first as Parameters<AgentClient['sendMessage']>[0],
        call(second as { taskId?: string }),
      );
    case 'cancelTask':
      return client.cancelTask(first as string, second as string | undefined, call({}));
    case 'getAgentCard':
      return client.getAgentCard(call({}));
    case 'getTask':
      return client.getTask(first as string, call(second as GetTaskOptions));
    case 'listTasks':
      return client.listTasks(call(first as ListTasksOptions));
    case 'streamTask': {
      const events = [];
      for await (const event of client.streamTask(
        first as Parameters<AgentClient['streamTask']>[0],
        call({}),
      ))
        events.push(event);
      return events;
    }
    default:
      throw new Error(`Unknown sync operation: ${String(request.op)}`);
  }
}

function reply(response: SyncResponse): void {
  if (!pending.delete(response.id)) return;
  try {
    data.port.postMessage(response);
  } catch (error) {
    // A value that cannot be cloned still answers, so the caller never waits for nothing.
    data.port.postMessage({ id: response.id, ok: false, error: errorBody(error) } satisfies SyncResponse);
  }
  Atomics.add(data.signal, 0, 1);
  Atomics.notify(data.signal, 0);
}

data.port.on('message', (request: SyncRequest) => {
  pending.add(request.id);
  run(request).then(
    (value) => reply({ id: request.id, ok: true, value }),
    (error: unknown) => reply({ id: request.id, ok: false, error: errorBody(error) }),
  );
});

// A stray error in transport code would end this thread and leave the caller blocked until its
// timeout: answer every open request with it instead.
process.on('uncaughtException', (error) => {
  for (const id of pending) reply({ id, ok: false, error: errorBody(error) });
});
