import type { ServerResponse } from 'node:http';

/** The media type of a server-sent-events stream. */
export const SSE_CONTENT_TYPE = 'text/event-stream';

/**
 * One `text/event-stream` frame: `id:`, `event:`, one `data:` line, the blank line that dispatches it.
 * `JSON.stringify` never emits a raw line break, so `data` is always one line; the event name comes
 * from a handler, so a line break in it is replaced rather than allowed to start a forged field.
 */
export function encodeSseFrame(id: number, event: string, data: unknown): string {
  const name = event.includes('\n') || event.includes('\r') ? event.replace(/[\r\n]/g, ' ') : event;
  return `id: ${id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Resolves when a response that refused a write can take more (`drain`), or is gone (`close`): a
 * stream writer awaits it so a slow reader holds back the writer, not the server's memory.
 */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** How many frames one stream writes back to back before it lets the event loop take a turn. */
export const FRAMES_PER_TURN = 64;

/**
 * Keeps one stream's writer from holding the event loop. A stream with a backlog of recorded events
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
