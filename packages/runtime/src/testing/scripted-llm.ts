import { InternalError, type AgentErrorOptions } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import type { LLM, LLMCallOptions, LLMChunk, LLMRequest, LLMResponse } from '../llm/types.js';

/** A scripted step: a response, or a function computing one (it may wait on `signal`). */
export type ScriptStep =
  LLMResponse | ((request: LLMRequest, options: LLMCallOptions) => LLMResponse | Promise<LLMResponse>);

export interface ScriptedLLMOptions {
  provider?: string;
  model?: string;
  contextWindow?: number | null;
}

const OPTION_NAMES = optionNames<ScriptedLLMOptions>({ provider: true, model: true, contextWindow: true });

/** A call past the end of the script. */
export class ScriptExhaustedError extends InternalError {
  constructor(message?: string, options?: AgentErrorOptions) {
    super(message ?? 'ScriptedLLM has no more scripted responses', options);
  }
}

/**
 * A deterministic model for tests and demos: answers each call with the next scripted step and
 * records every request in `calls`. `stream` splits the content into word chunks.
 */
export class ScriptedLLM implements LLM {
  readonly provider: string;
  readonly model: string;
  readonly contextWindow: number | null;
  /** Every request received, in order (deep copies). */
  readonly calls: LLMRequest[] = [];
  private readonly script: ScriptStep[];

  constructor(responses: readonly ScriptStep[], options: ScriptedLLMOptions = {}) {
    checkOptionNames('ScriptedLLM', options, OPTION_NAMES);
    this.script = [...responses];
    this.provider = options.provider ?? 'scripted';
    this.model = options.model ?? 'scripted-1';
    this.contextWindow = options.contextWindow ?? null;
  }

  /** Steps not consumed yet. */
  get remaining(): number {
    return this.script.length - this.calls.length;
  }

  async generate(request: LLMRequest, options: LLMCallOptions): Promise<LLMResponse> {
    options.signal.throwIfAborted();
    const index = this.calls.length;
    this.calls.push(structuredClone(request));
    const step = this.script[index];
    if (step === undefined)
      throw new ScriptExhaustedError(
        `ScriptedLLM has no response for call ${index + 1} (script has ${this.script.length})`,
      );
    const response = typeof step === 'function' ? await step(request, options) : step;
    return { ...response, toolCalls: response.toolCalls ?? [] };
  }

  async *stream(request: LLMRequest, options: LLMCallOptions): AsyncIterable<LLMChunk> {
    const response = await this.generate(request, options);
    const words = response.content.match(/\S+\s*|\s+/g) ?? [];
    for (const delta of words) {
      options.signal.throwIfAborted();
      yield { delta };
    }
    const last: LLMChunk = { toolCalls: response.toolCalls };
    if (response.usage) last.usage = response.usage;
    if (response.finishReason) last.finishReason = response.finishReason;
    yield last;
  }
}
