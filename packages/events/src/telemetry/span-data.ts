/**
 * The span records LocalTraceTelemetry keeps and exports. Names and attribute keys follow the
 * OpenTelemetry GenAI semantic conventions (opentelemetry.io/docs/specs/semconv/gen-ai), pinned here because
 * those conventions are still marked Development and move between releases.
 */

/** OpenTelemetry attribute values: primitives or homogeneous arrays of them. */
export type SpanAttributeValue = string | number | boolean | string[] | number[] | boolean[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

export type SpanKindName = 'internal' | 'client';
/** `unset` is success for instrumentation (the OTel rule); `error` carries `status_message`. */
export type SpanStatusName = 'unset' | 'ok' | 'error';

export interface SpanEventData {
  name: string;
  time: string;
  attributes: SpanAttributes;
}

export interface SpanData {
  /** The run's trace id (RunContext.trace_id), else a generated 32-hex id per run. */
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: SpanKindName;
  start_time: string;
  /** `null` while the span is open. */
  end_time: string | null;
  status: SpanStatusName;
  status_message: string | null;
  attributes: SpanAttributes;
  events: SpanEventData[];
  /** Correlation shared with RunEvents. */
  run_id: string | null;
  task_id: string;
  session_id: string | null;
  agent_name: string | null;
}

/** Receives spans as they start and end (exporters, the OpenTelemetry bridge). */
export interface SpanListener {
  onStart?(span: SpanData): void;
  onEnd?(span: SpanData): void;
}

/** Attribute keys (GenAI semantic conventions plus this library's namespace). */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The older name of `gen_ai.provider.name`, still read by many backends. */
  system: 'gen_ai.system',
  tokenType: 'gen_ai.token.type',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  errorType: 'error.type',
  runId: 'agent_tasks.run_id',
  taskId: 'agent_tasks.task_id',
  traceId: 'agent_tasks.trace_id',
  step: 'agent_tasks.step',
  taskState: 'agent_tasks.task.state',
  actionKind: 'agent_tasks.action.kind',
  actionCapabilities: 'agent_tasks.action.capabilities',
  actionId: 'agent_tasks.action_id',
  latencyMs: 'agent_tasks.llm.latency_ms',
  unfinished: 'agent_tasks.unfinished',
  usageEstimated: 'agent_tasks.usage.estimated',
  delegationTarget: 'agent_tasks.delegation.target',
  delegationTaskId: 'agent_tasks.delegation.task_id',
} as const;

/** `gen_ai.operation.name` values used. */
export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;
