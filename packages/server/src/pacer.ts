/** How many events one stream handles back to back before it lets the event loop take a turn. */
export const FRAMES_PER_TURN = 64;

/**
 * How many events every stream of the process together handles in one turn of the event loop: a
 * hundred streams each within its own share would still hold the loop for a hundred shares, while
 * `/healthz`, a cancel or a new connection waits behind them.
 */
export const FRAMES_PER_LOOP_TURN = 256;

/** Frames handled since the loop last passed its check phase, all streams together. */
let framesThisTurn = 0;
let resetScheduled = false;

function resetTurn(): void {
  framesThisTurn = 0;
  resetScheduled = false;
}

/** Counts one frame against this turn's budget; true once the budget is spent. */
function spendFrame(): boolean {
  if (!resetScheduled) {
    resetScheduled = true;
    // Queued before any stream's pause of this turn, so it runs first when they resume.
    setImmediate(resetTurn);
  }
  return ++framesThisTurn > FRAMES_PER_LOOP_TURN;
}

/**
 * Keeps one stream (its writer, or the run that records it) from holding the event loop. A stream with a backlog of recorded events
 * and a fast reader never waits for anything: each `next()` and each accepted `write` settles as a
 * microtask, and without a pause its whole backlog would go out before node polls a socket again,
 * while control requests (a cancel, `/healthz`) wait. After {@link FRAMES_PER_TURN} frames of its
 * own, or once every stream together has handled {@link FRAMES_PER_LOOP_TURN} in this turn,
 * `pause()` gives a promise that settles on the next turn (`setImmediate`, after the poll phase),
 * so new connections and other requests are served between the bursts of every busy stream.
 */
export class StreamPacer {
  private written = 0;

  /** Call after each frame written: undefined while the burst goes on, else a promise to await. */
  pause(): Promise<void> | undefined {
    const spent = spendFrame();
    if (++this.written < FRAMES_PER_TURN && !spent) return undefined;
    this.written = 0;
    return new Promise((resolve) => setImmediate(resolve));
  }
}
