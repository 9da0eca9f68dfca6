import { performance } from 'node:perf_hooks';
import {
  ActionDeniedError,
  AgentError,
  ApprovalRequiredError,
  BudgetExceededError,
  TaskCanceledError,
} from '@agent/core';
import { raceAbort } from '@agent/core/internal';
import type { ModelCallTrace } from '@agent/events/internal';
import type { BudgetTracker } from '../budget-tracker.js';
import { abortError, type CancellationToken } from '../cancellation.js';
import { errorTypeOf } from '../error-type.js';
import type { RunContext } from '../run-context.js';
import type { EmitFunction } from '../run-events.js';
import { buildManifest } from './manifest.js';
import { estimateTokens } from './tokens.js';
import type { LLM, LLMMessage, LLMResponse, LLMToolCall, LLMToolDeclaration, LLMUsage } from './types.js';

export interface InferenceLoopOptions {
  llm: LLM;
  /** The prompt: system messages, history and the current query. */
  messages: readonly LLMMessage[];
  tools: readonly LLMToolDeclaration[];
  context: RunContext;
  agentName: string;
  token: CancellationToken;
  tracker: BudgetTracker;
  emit: EmitFunction;
  /** Use the model's `stream` (emitting `llm.stream` chunks) when it has one. */
  stream: boolean;
  /** Runs a model-selected tool through the policy path. */
  invokeTool: (call: LLMToolCall, step: number) => Promise<unknown>;
  /** Step limit when the budget sets no `max_steps`, so a model that keeps calling tools ends. */
  defaultMaxSteps: number;
  /** A `chat` span and the GenAI metrics per model call (the run's trace). */
  trace?: { modelCall(provider: string, model: string): ModelCallTrace };
}

export interface InferenceResult {
  /** The model's final answer. */
  content: string;
  /** The whole conversation, tool calls and results included. */
  messages: LLMMessage[];
  usage: LLMUsage;
  steps: number;
  finishReason: string | null;
}

/**
 * The built-in loop: each step checks cancellation and the budget, prepares a ContextManifest
 * (`context.prepared`), calls the model (`llm.call.started` / `llm.stream` / `llm.call.completed`),
 * and runs the tools it selected; it ends when the model answers without tool calls.
 * Tool failures the model can repair (bad arguments, unknown tool, a tool that threw) go back to
 * it as the tool result; policy, approval, budget and cancellation stop the run.
 */
export async function runInferenceLoop(options: InferenceLoopOptions): Promise<InferenceResult> {
  const { llm, token, tracker } = options;
  const messages = [...options.messages];
  const usage: LLMUsage = { inputTokens: 0, outputTokens: 0 };
  for (let step = 1; ; step += 1) {
    token.raiseIfCancelled();
    const emit: EmitFunction = (event) => options.emit({ step, ...event });
    if (tracker.budget.maxSteps === null && step > options.defaultMaxSteps) {
      await emit({
        type: 'budget.exceeded',
        limit: 'max_steps',
        used: step,
        max: options.defaultMaxSteps,
        summary: 'default step limit reached',
      });
      throw new BudgetExceededError(
        `Run budget exceeded: max_steps observed ${step} > limit ${options.defaultMaxSteps} (default)`,
        {
          data: { limit: 'max_steps', used: step, max: options.defaultMaxSteps },
        },
      );
    }
    await tracker.reserveStep();
    const manifest = buildManifest({
      context: options.context,
      agentName: options.agentName,
      llm,
      messages,
      tools: options.tools,
    });
    await emit({
      type: 'context.prepared',
      manifest: manifest.toDict(),
      summary: `${manifest.totalEstimatedTokens} estimated input tokens`,
    });
    await tracker.reserveLlmCall();
    await tracker.reserveInputTokens(manifest.totalEstimatedTokens);
    token.raiseIfCancelled();
    await emit({
      type: 'llm.call.started',
      provider: llm.provider,
      model: llm.model,
      summary: `calling ${llm.model}`,
    });
    token.raiseIfCancelled();
    const started = performance.now();
    const request = { messages: structuredClone(messages), tools: structuredClone([...options.tools]) };
    const call = options.trace?.modelCall(llm.provider, llm.model);
    let response: LLMResponse;
    try {
      const generate = (): Promise<LLMResponse> =>
        options.stream && llm.stream
          ? streamCall(llm.stream.bind(llm), request, token, emit)
          : raceAbort(llm.generate(request, { signal: token.signal }), token.signal, abortError);
      response = await (call ? call.run(generate) : generate());
      token.raiseIfCancelled();
    } catch (error) {
      call?.end({ errorType: errorTypeOf(error) });
      throw error;
    }
    const latencyMs = Math.round((performance.now() - started) * 10) / 10;
    const toolCalls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
    const content = typeof response.content === 'string' ? response.content : '';
    const callUsage: LLMUsage = response.usage ?? {
      inputTokens: manifest.totalEstimatedTokens,
      outputTokens:
        estimateTokens(content) + (toolCalls.length > 0 ? estimateTokens(JSON.stringify(toolCalls)) : 0),
    };
    usage.inputTokens += callUsage.inputTokens;
    usage.outputTokens += callUsage.outputTokens;
    const finishReason = response.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    call?.end({
      inputTokens: callUsage.inputTokens,
      outputTokens: callUsage.outputTokens,
      estimated: response.usage === undefined,
      finishReason,
    });
    await emit({
      type: 'llm.call.completed',
      provider: llm.provider,
      model: llm.model,
      usage: {
        input_tokens: callUsage.inputTokens,
        output_tokens: callUsage.outputTokens,
        estimated: response.usage === undefined,
      },
      latency_ms: latencyMs,
      finish_reason: finishReason,
      tool_calls: toolCalls.map((call) => call.name),
      summary:
        toolCalls.length > 0
          ? `model selected ${toolCalls.map((call) => call.name).join(', ')}`
          : 'model answered',
    });
    tracker.reconcileInputTokens(manifest.totalEstimatedTokens, callUsage.inputTokens);
    await tracker.recordOutputTokens(callUsage.outputTokens);
    if (toolCalls.length === 0) {
      messages.push({ role: 'assistant', content });
      return { content, messages, usage, steps: step, finishReason: response.finishReason ?? 'stop' };
    }
    messages.push({ role: 'assistant', content, toolCalls });
    for (const call of toolCalls) {
      token.raiseIfCancelled();
      const result = await toolResult(call, step, options);
      token.raiseIfCancelled();
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: result });
    }
  }
}

async function toolResult(call: LLMToolCall, step: number, options: InferenceLoopOptions): Promise<string> {
  if (call.argumentsError) {
    return JSON.stringify({
      error: {
        code: 'VALIDATION_FAILED',
        message: `Arguments of ${call.name} are not a JSON object: ${call.argumentsError}`,
      },
    });
  }
  try {
    const result = await options.invokeTool(call, step);
    return typeof result === 'string' ? result : JSON.stringify(result ?? null);
  } catch (error) {
    if (stopsTheRun(error, options.token)) throw error;
    const failure = AgentError.from(error);
    return JSON.stringify({ error: failure.toJSON() });
  }
}

/** Errors a model cannot repair by trying again: they end the run. */
function stopsTheRun(error: unknown, token: CancellationToken): boolean {
  return (
    token.isCancelled ||
    error instanceof TaskCanceledError ||
    error instanceof ActionDeniedError ||
    error instanceof ApprovalRequiredError ||
    error instanceof BudgetExceededError
  );
}

async function streamCall(
  stream: NonNullable<LLM['stream']>,
  request: { messages: LLMMessage[]; tools: LLMToolDeclaration[] },
  token: CancellationToken,
  emit: EmitFunction,
): Promise<LLMResponse> {
  const iterator = stream(request, { signal: token.signal })[Symbol.asyncIterator]();
  let content = '';
  const toolCalls: LLMToolCall[] = [];
  let usage: LLMUsage | undefined;
  let finishReason: string | undefined;
  let finished = false;
  try {
    for (;;) {
      const next = await raceAbort(iterator.next(), token.signal, abortError);
      if (next.done) {
        finished = true;
        break;
      }
      const chunk = next.value;
      if (typeof chunk.delta === 'string' && chunk.delta.length > 0) {
        content += chunk.delta;
        await emit({ type: 'llm.stream', delta: chunk.delta });
      }
      if (chunk.toolCalls) toolCalls.push(...chunk.toolCalls);
      if (chunk.usage) usage = chunk.usage;
      if (chunk.finishReason) finishReason = chunk.finishReason;
    }
  } finally {
    if (!finished) iterator.return?.()?.catch(() => undefined);
  }
  const response: LLMResponse = { content, toolCalls };
  if (usage) response.usage = usage;
  if (finishReason) response.finishReason = finishReason;
  return response;
}
