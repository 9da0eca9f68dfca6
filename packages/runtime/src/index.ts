// Public API of @agent/runtime: anything exported here is public.
export {
  Agent,
  DEFAULT_OUTBOUND_LIMIT,
  OUTBOUND_LIMIT_NAME,
  type AgentOptions,
  type ExecuteFunction,
  type CallToolOptions,
} from './agent.js';
export type { TransportName } from './load-transport.js';
export type { AgentRegistryOptions } from './join-registry.js';
export type { RunHandle, InferOptions } from './task-run.js';
export {
  RunContext,
  newTraceId,
  type RunContextInit,
  type EnsureTaskContextOptions,
  type PermissionValue,
} from './run-context.js';
export { RunBudget, BUDGET_LIMITS, type BudgetLimit, type RunBudgetInit } from './run-budget.js';
export { BudgetTracker, type BudgetTrackerOptions, type BudgetUsage } from './budget-tracker.js';
export {
  CapabilityPolicy,
  evaluatePolicy,
  strongerRule,
  toPermissionRule,
  type CapabilityPolicyOptions,
  type Policy,
  type PolicyDecision,
} from './capability-policy.js';
export { RunAction, previewArtifact, type RunActionInit } from './run-action.js';
// Core's error, re-exported because runtime users meet it first here.
export { ApprovalRequiredError, TaskAlreadyRunningError } from '@agent/core';
export {
  approve,
  deny,
  createApprovalRequest,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalHandlerOptions,
  type ApprovalRequest,
} from './approvals.js';
export { CancellationToken } from './cancellation.js';
export type { ToolContext, ToolDeclaration, ToolDefinition, RegisteredTool } from './tools.js';
export type { RuntimeEventInput } from './run-events.js';
export type {
  LLM,
  LLMCallOptions,
  LLMChunk,
  LLMMessage,
  LLMRequest,
  LLMResponse,
  LLMRole,
  LLMToolCall,
  LLMToolDeclaration,
  LLMUsage,
} from './llm/types.js';
export type { InferenceResult } from './llm/inference-loop.js';
export { buildManifest, type BuildManifestOptions } from './llm/manifest.js';
export { estimateTokens, estimateMessageTokens, estimateToolTokens } from './llm/tokens.js';
export { OpenAICompatibleLLM, type OpenAICompatibleLLMOptions } from './llm/openai-compatible.js';
// Re-exported so users build manifests and errors from one import (the runtime depends on events anyway).
export { ContextManifest, type ContextManifestData } from '@agent/events';
export {
  ActionDeniedError,
  BudgetExceededError,
  TaskCanceledError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@agent/core';
