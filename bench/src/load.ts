/** A closed-loop load generator for transports autocannon cannot drive (gRPC, streams). */
export interface LoopResult {
  name: string;
  /** Completed operations (calls, or streamed events) per second. */
  perSecond: number;
  operations: number;
  seconds: number;
}

/**
 * Runs `concurrency` loops of `once()` for `seconds`; each call resolves with how many operations it
 * completed (1 for a unary call, n for a stream of n events).
 */
export async function closedLoop(
  name: string,
  once: () => Promise<number>,
  options: { concurrency: number; seconds: number },
): Promise<LoopResult> {
  const deadline = performance.now() + options.seconds * 1000;
  let operations = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) {
        // Not `operations += await once()`: that reads `operations` before the await and loses
        // the other loops' increments.
        const done = await once();
        operations += done;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { name, perSecond: Math.round(operations / seconds), operations, seconds };
}

export interface Comparison {
  baseline: LoopResult;
  subject: LoopResult;
  ratio: number;
}

export function compare(baseline: LoopResult, subject: LoopResult): Comparison {
  return { baseline, subject, ratio: subject.perSecond / baseline.perSecond };
}
