// Public API of @agent/client: anything exported here is public.
export {
  AgentClient,
  type AgentClientOptions,
  type CallOptions,
  type GetTaskOptions,
  type ListTasksOptions,
  type SendMessageOptions,
  type SubscribeOptions,
} from './agent-client.js';
export {
  DEFAULT_RETRY_POLICY,
  type RetryOption,
  type RetryOptions,
  type RetryPolicy,
} from './retry-options.js';
export {
  SyncAgentClient,
  DEFAULT_SYNC_TIMEOUT_MS,
  type SyncCallOptions,
  type SyncGetTaskOptions,
  type SyncListTasksOptions,
  type SyncSendMessageOptions,
} from './sync-client.js';
export { agentReply } from './reply.js';
export { reviveComponent, resolveDescriptorModules } from './component-descriptor.js';
