import type { JsonObject } from '@agent/core';

export type LLMRole = 'system' | 'user' | 'assistant' | 'tool';

export interface LLMToolCall {
  /** Provider call id; tool results answer it. */
  id: string;
  name: string;
  arguments: JsonObject;
  /** Set when the provider's argument text was not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string;
}

export interface LLMMessage {
  role: LLMRole;
  content: string;
  /** On assistant messages: the calls the model made. */
  toolCalls?: LLMToolCall[];
  /** On tool messages: the call this result answers. */
  toolCallId?: string;
  /** On tool messages: the tool's name. */
  name?: string;
}

export interface LLMToolDeclaration {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonObject;
}

export interface LLMRequest {
  messages: LLMMessage[];
  tools: LLMToolDeclaration[];
}

export interface LLMUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface LLMResponse {
  content: string;
  toolCalls: LLMToolCall[];
  /** Provider-reported usage; when absent the runtime estimates it with the tokenizer. */
  usage?: LLMUsage;
  finishReason?: string;
}

/** One streamed piece. `toolCalls` arrive complete (a provider's partial deltas are assembled first). */
export interface LLMChunk {
  delta?: string;
  toolCalls?: LLMToolCall[];
  usage?: LLMUsage;
  finishReason?: string;
}

export interface LLMCallOptions {
  /** Aborts the call (task cancel). */
  signal: AbortSignal;
}

/** A chat model. `stream` is optional; the loop falls back to `generate`. */
export interface LLM {
  readonly provider: string;
  readonly model: string;
  /** Context window in tokens, when known; reported in the ContextManifest. */
  readonly contextWindow?: number | null;
  generate(request: LLMRequest, options: LLMCallOptions): Promise<LLMResponse>;
  stream?(request: LLMRequest, options: LLMCallOptions): AsyncIterable<LLMChunk>;
}
