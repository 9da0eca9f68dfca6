import { AgentError, InternalError, UnavailableError, ValueError, type JsonObject } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import { readSseData } from './sse.js';
import type {
  LLM,
  LLMCallOptions,
  LLMChunk,
  LLMMessage,
  LLMRequest,
  LLMResponse,
  LLMToolCall,
  LLMUsage,
} from './types.js';

export interface OpenAICompatibleLLMOptions {
  /** API root that has `/chat/completions`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  /** Name reported in manifests and events. Default `openai-compatible`. */
  provider?: string;
  /** Context window in tokens, when known. Default null. */
  contextWindow?: number | null;
  /** Per-call timeout in milliseconds (the whole response, streaming included). Default 60000. */
  timeoutMs?: number;
  temperature?: number;
  /** `max_tokens` of each call. Default: the provider's. */
  maxTokens?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** fetch implementation. Default: the global one. */
  fetch?: typeof fetch;
}

const OPTION_NAMES = optionNames<OpenAICompatibleLLMOptions>({
  baseUrl: true,
  model: true,
  apiKey: true,
  provider: true,
  contextWindow: true,
  timeoutMs: true,
  temperature: true,
  maxTokens: true,
  headers: true,
  fetch: true,
});

/**
 * Chat completions over fetch for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp, LM Studio, ...). Tools are sent as `function` tools; streaming reads SSE chunks and
 * asks for usage with `stream_options.include_usage`.
 */
export class OpenAICompatibleLLM implements LLM {
  readonly provider: string;
  readonly model: string;
  readonly contextWindow: number | null;
  private readonly url: string;
  private readonly options: OpenAICompatibleLLMOptions;
  private readonly fetchImpl: typeof fetch;

  constructor(options: OpenAICompatibleLLMOptions) {
    if (!isRecord(options) || typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new ValueError('OpenAICompatibleLLM needs baseUrl (http:// or https://)');
    }
    checkOptionNames('OpenAICompatibleLLM', options, OPTION_NAMES);
    if (typeof options.model !== 'string' || options.model === '')
      throw new ValueError('OpenAICompatibleLLM needs a model name');
    if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) {
      throw new ValueError('timeoutMs must be a positive number of milliseconds');
    }
    this.options = options;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.provider = options.provider ?? 'openai-compatible';
    this.model = options.model;
    this.contextWindow = options.contextWindow ?? null;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async generate(request: LLMRequest, options: LLMCallOptions): Promise<LLMResponse> {
    const response = await this.post(this.body(request, false), options.signal);
    const json = await readJson(response);
    const choice = Array.isArray(json.choices) && isRecord(json.choices[0]) ? json.choices[0] : null;
    if (!choice || !isRecord(choice.message)) throw this.malformed('no choices[0].message');
    const message = choice.message;
    const result: LLMResponse = {
      content: typeof message.content === 'string' ? message.content : '',
      toolCalls: Array.isArray(message.tool_calls)
        ? message.tool_calls.filter(isRecord).map((call, index) => toToolCall(call, index))
        : [],
    };
    const usage = toUsage(json.usage);
    if (usage) result.usage = usage;
    if (typeof choice.finish_reason === 'string') result.finishReason = choice.finish_reason;
    return result;
  }

  async *stream(request: LLMRequest, options: LLMCallOptions): AsyncIterable<LLMChunk> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 60_000);
    const signal = AbortSignal.any([options.signal, timeout]);
    const response = await this.post(this.body(request, true), signal, signal);
    if (!response.body) throw this.malformed('streaming response has no body');
    const partial = new Map<number, { id: string; name: string; args: string }>();
    let finishReason: string | undefined;
    let usage: LLMUsage | undefined;
    try {
      for await (const data of readSseData(response.body, signal)) {
        if (data === '[DONE]') break;
        let chunk: unknown;
        try {
          chunk = JSON.parse(data);
        } catch {
          throw this.malformed('a stream chunk is not JSON');
        }
        if (!isRecord(chunk)) continue;
        usage = toUsage(chunk.usage) ?? usage;
        const choice = Array.isArray(chunk.choices) && isRecord(chunk.choices[0]) ? chunk.choices[0] : null;
        if (!choice) continue;
        if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
        const delta = isRecord(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content.length > 0) yield { delta: delta.content };
        for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isRecord) : []) {
          const index = typeof piece.index === 'number' ? piece.index : partial.size;
          const entry = partial.get(index) ?? { id: '', name: '', args: '' };
          if (typeof piece.id === 'string') entry.id = piece.id;
          const fn = isRecord(piece.function) ? piece.function : {};
          if (typeof fn.name === 'string') entry.name += fn.name;
          if (typeof fn.arguments === 'string') entry.args += fn.arguments;
          partial.set(index, entry);
        }
      }
    } catch (error) {
      throw this.failure(error, signal, options.signal);
    }
    const last: LLMChunk = {};
    if (partial.size > 0) {
      last.toolCalls = [...partial.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, entry]) =>
          toToolCall({ id: entry.id, function: { name: entry.name, arguments: entry.args } }, index),
        );
    }
    if (usage) last.usage = usage;
    if (finishReason) last.finishReason = finishReason;
    yield last;
  }

  private body(request: LLMRequest, stream: boolean): JsonObject {
    const body: JsonObject = { model: this.model, messages: request.messages.map(toWireMessage) };
    if (request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }));
    }
    if (this.options.temperature !== undefined) body.temperature = this.options.temperature;
    if (this.options.maxTokens !== undefined) body.max_tokens = this.options.maxTokens;
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  /** POSTs; `bodySignal` set means the caller reads the body under that signal itself. */
  private async post(
    body: JsonObject,
    callerSignal: AbortSignal,
    bodySignal?: AbortSignal,
  ): Promise<Response> {
    const signal =
      bodySignal ?? AbortSignal.any([callerSignal, AbortSignal.timeout(this.options.timeoutMs ?? 60_000)]);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: body.stream ? 'text/event-stream' : 'application/json',
      ...this.options.headers,
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await this.fetchImpl(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw this.failure(error, signal, callerSignal);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      const data = { provider: this.provider, status: response.status, body: text.slice(0, 2000) };
      const message = `${this.provider} answered HTTP ${response.status}${providerMessage(text)}`;
      if (response.status === 429 || response.status >= 500) throw new UnavailableError(message, { data });
      throw new InternalError(message, { data });
    }
    return response;
  }

  private failure(error: unknown, signal: AbortSignal, callerSignal: AbortSignal): Error {
    if (error instanceof AgentError) return error;
    // The caller's abort is a cancel and propagates as such; only our own timeout is a failure here.
    if (callerSignal.aborted)
      return callerSignal.reason instanceof Error ? callerSignal.reason : AgentError.from(error);
    if (signal.aborted) {
      return new UnavailableError(
        `${this.provider} did not answer within ${this.options.timeoutMs ?? 60_000} ms`,
        { data: { provider: this.provider }, cause: error },
      );
    }
    return new UnavailableError(
      `${this.provider} request failed: ${(error as Error)?.message ?? String(error)}`,
      { data: { provider: this.provider }, cause: error },
    );
  }

  private malformed(what: string): InternalError {
    return new InternalError(`${this.provider} sent a malformed response: ${what}`, {
      data: { provider: this.provider },
    });
  }
}

async function readJson(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  try {
    const value = JSON.parse(text) as unknown;
    if (isRecord(value)) return value;
  } catch {
    // fall through to the error below
  }
  throw new InternalError('The model provider sent a response that is not a JSON object', {
    data: { body: text.slice(0, 2000) },
  });
}

function providerMessage(text: string): string {
  try {
    const value = JSON.parse(text) as unknown;
    if (isRecord(value) && isRecord(value.error) && typeof value.error.message === 'string')
      return `: ${value.error.message}`;
  } catch {
    // not JSON: no detail
  }
  return '';
}

function toWireMessage(message: LLMMessage): JsonObject {
  if (message.role === 'tool')
    return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
  const wire: JsonObject = { role: message.role, content: message.content };
  if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
    wire.tool_calls = message.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    if (message.content === '') wire.content = null;
  }
  return wire;
}

function toToolCall(call: Record<string, unknown>, index: number): LLMToolCall {
  const fn = isRecord(call.function) ? call.function : {};
  const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`;
  const name = typeof fn.name === 'string' ? fn.name : '';
  const raw =
    typeof fn.arguments === 'string'
      ? fn.arguments
      : isRecord(fn.arguments)
        ? JSON.stringify(fn.arguments)
        : '';
  if (raw.trim() === '') return { id, name, arguments: {} };
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (isRecord(parsed)) return { id, name, arguments: parsed as JsonObject };
    return { id, name, arguments: {}, argumentsError: 'not a JSON object' };
  } catch (error) {
    return { id, name, arguments: {}, argumentsError: (error as Error).message };
  }
}

function toUsage(value: unknown): LLMUsage | undefined {
  if (!isRecord(value)) return undefined;
  const input = value.prompt_tokens ?? value.input_tokens;
  const output = value.completion_tokens ?? value.output_tokens;
  if (typeof input !== 'number' || typeof output !== 'number') return undefined;
  return { inputTokens: input, outputTokens: output };
}
