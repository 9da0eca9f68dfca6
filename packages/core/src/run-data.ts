/**
 * Serialized runtime records that events, stores and transports carry without importing the runtime.
 * The runtime's classes produce and read exactly these shapes.
 */
import type { Artifact, JsonObject } from './wire.js';

export type PermissionRule = 'allow' | 'deny' | 'require_approval';

export interface RunBudgetData {
  max_steps?: number;
  max_llm_calls?: number;
  max_tool_calls?: number;
  max_runtime_seconds?: number;
  max_input_tokens?: number;
  max_output_tokens?: number;
}

/** `task.metadata.run_context`. */
export interface RunContextData {
  run_id: string;
  session_id: string | null;
  trace_id: string;
  workspace_uri: string | null;
  parent_run_id: string | null;
  agent_chain: string[];
  /** Capability name → rule, boolean (true allows, false denies), or policy metadata. */
  permissions: Record<string, PermissionRule | boolean | JsonObject>;
  budget: RunBudgetData | null;
  canceled: boolean;
  metadata: JsonObject;
}

export interface RunActionData {
  action_id: string;
  kind: string;
  name: string;
  payload: JsonObject;
  capabilities: string[];
  artifacts: Artifact[];
  description?: string | null;
  metadata?: JsonObject;
}

export interface ApprovalRequestData {
  request_id: string;
  action: RunActionData;
  created_at: string;
}

export interface ApprovalDecisionData {
  request_id: string;
  approved: boolean;
  decided_by: string | null;
  reason?: string | null;
}
