import { performance } from 'node:perf_hooks';
import type { GenAiCallAttributes, GenAiMetricsSink } from '@agent/core';
import type { ModelCallResult, ModelCallTrace } from '@agent/events/internal';

/** What the inference loop asks for per model call: a span and the GenAI metrics. */
export interface ModelCallTracer {
  modelCall(provider: string, model: string): ModelCallTrace;
}

const NOOP_CALL: ModelCallTrace = { run: (fn) => fn(), end: () => undefined };

/**
 * The run's tracer, with each model call also reported to `sink` (the `genAiMetrics` option): the
 * same values and attributes the OpenTelemetry instruments get (operation `chat`, the LLM's provider,
 * its model as request and response model, `errorType` for a failed call; provider-reported token
 * counts only, an estimate is not a measurement), whether or not OpenTelemetry is installed. A sink
 * that throws never changes the call's outcome: `onError` gets the error.
 */
export function withGenAiSink(
  tracer: ModelCallTracer | undefined,
  sink: GenAiMetricsSink | null,
  onError: (error: unknown) => void,
): ModelCallTracer | undefined {
  if (!sink) return tracer;
  return {
    modelCall(provider, model) {
      const trace = tracer?.modelCall(provider, model) ?? NOOP_CALL;
      const started = performance.now();
      let ended = false;
      return {
        run: (fn) => trace.run(fn),
        end: (result) => {
          if (!ended) {
            ended = true;
            report(sink, (performance.now() - started) / 1000, provider, model, result, onError);
          }
          trace.end(result);
        },
      };
    },
  };
}

function report(
  sink: GenAiMetricsSink,
  seconds: number,
  provider: string,
  model: string,
  result: ModelCallResult,
  onError: (error: unknown) => void,
): void {
  const call: GenAiCallAttributes = {
    operation: 'chat',
    provider,
    requestModel: model,
    responseModel: model,
  };
  if (result.errorType !== undefined) call.errorType = result.errorType;
  try {
    sink.recordOperationDuration(seconds, { ...call });
    if (result.errorType !== undefined || result.estimated) return;
    if (result.inputTokens !== undefined) sink.recordTokenUsage(result.inputTokens, 'input', { ...call });
    if (result.outputTokens !== undefined) sink.recordTokenUsage(result.outputTokens, 'output', { ...call });
  } catch (error) {
    onError(error);
  }
}
