/**
 * The abort side of one request (or of a run the pipeline drives). The AbortController is made only
 * when someone asks for the signal: most requests and runs finish without anyone listening, and the
 * fast path should not pay for one (with its listener map, some 400 bytes each).
 */
export class RequestScope {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get isAborted(): boolean {
    return this.aborted;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
