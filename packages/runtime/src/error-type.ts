import { AgentError } from '@agent/core';

/**
 * The `error.type` of a span or metric for a failure: an AgentError's code, else the error's class
 * name (`_OTHER` for a thrown non-error). Never its message, which may carry data a trace must not.
 */
export function errorTypeOf(error: unknown): string {
  if (error instanceof AgentError) return error.code;
  return error instanceof Error ? error.name : '_OTHER';
}

/** Runs `fn` inside a span and ends the span with its outcome. */
export async function traced<T>(
  span: { run<R>(fn: () => R): R; end(errorType?: string): void },
  fn: () => Promise<T>,
): Promise<T> {
  try {
    const result = await span.run(fn);
    span.end();
    return result;
  } catch (error) {
    span.end(errorTypeOf(error));
    throw error;
  }
}
