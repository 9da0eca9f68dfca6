/**
 * The hook the runtime's LLM calls report through, so a server's metrics registry (or any other
 * sink) records the OpenTelemetry GenAI client metrics without the runtime depending on it.
 * Attribute names follow the OpenTelemetry GenAI semantic conventions.
 */

/** What identifies one LLM call in the GenAI metrics. */
export interface GenAiCallAttributes {
  /** `gen_ai.operation.name`: `chat`, `text_completion`, `embeddings`, … */
  operation: string;
  /** `gen_ai.provider.name`: `openai`, `anthropic`, … */
  provider?: string;
  /** `gen_ai.request.model` */
  requestModel?: string;
  /** `gen_ai.response.model` */
  responseModel?: string;
  /** `error.type`: set only when the call failed (an error code or class name, never a message). */
  errorType?: string;
}

export interface GenAiMetricsSink {
  /** `gen_ai.client.token.usage`: tokens one call used, once per token type. */
  recordTokenUsage(tokens: number, tokenType: 'input' | 'output', call: GenAiCallAttributes): void;
  /** `gen_ai.client.operation.duration`: how long one call took, in seconds. */
  recordOperationDuration(seconds: number, call: GenAiCallAttributes): void;
}
