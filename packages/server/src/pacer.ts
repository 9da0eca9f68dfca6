/** How many events one stream handles back to back before it lets the event loop take a turn. */
export const FRAMES_PER_TURN = 64;

/**
 * Keeps one stream (its writer, or the run that records it) from holding the event loop. A stream with a backlog of recorded events
 * and a fast reader never waits for anything: each `next()` and each accepted `write` settles as a
 * microtask, and without a pause its whole backlog would go out before node polls a socket again,
 * while control requests (a cancel, `/healthz`) wait. After {@link FRAMES_PER_TURN} frames `pause()`
 * gives a promise that settles on the next turn (`setImmediate`, after the poll phase), so new
 * connections and other requests are served between the bursts of every busy stream.
 */
export class StreamPacer {
  private written = 0;

  /** Call after each frame written: undefined while the burst goes on, else a promise to await. */
  pause(): Promise<void> | undefined {
    if (++this.written < FRAMES_PER_TURN) return undefined;
    this.written = 0;
    return new Promise((resolve) => setImmediate(resolve));
  }
}
