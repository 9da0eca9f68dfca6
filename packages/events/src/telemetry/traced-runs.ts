/**
 * Runs whose OpenTelemetry spans an Agent in this process emits itself (TaskTracing), so that an
 * OpenTelemetryBridge fed the same runs' events does not export every span twice.
 */
const traced = new Set<string>();

export function markTracedRun(runId: string): void {
  traced.add(runId);
}

export function unmarkTracedRun(runId: string): void {
  traced.delete(runId);
}

export function isTracedRun(runId: string | null): boolean {
  return runId !== null && traced.size > 0 && traced.has(runId);
}
