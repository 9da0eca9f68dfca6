// Public API of @agent/client: anything exported here is public.
export {
  AgentClient,
  type AgentClientOptions,
  type CallOptions,
  type GetTaskOptions,
  type ListTasksOptions,
  type SendMessageOptions,
} from './agent-client.js';
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
