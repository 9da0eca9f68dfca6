import type { ServerResponse } from 'node:http';
import type { RequestScope } from '../request-scope.js';

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
 * Holds what is written to `res` until the current turn's writes are done, then sends it in one
 * socket write. For a head sent with `flushHeaders()` (which node writes at once, uncorked), so it
 * leaves with the frames written in the same turn instead of in a system call of its own.
 */
export function corkForTurn(res: ServerResponse): void {
  if (res.writableCorked) return;
  res.cork();
  process.nextTick(uncork, res);
}

function uncork(res: ServerResponse): void {
  res.uncork();
}

/**
 * Writes one frame of a stream. It leaves with the other frames of its turn in one socket write:
 * node's `res.write` corks the socket until its next tick by itself, so corking here again only cost
 * a cork, an uncork and a tick per frame.
 */
export function writeFrame(res: ServerResponse, text: string): boolean {
  return res.write(text);
}

/**
 * Resolves when a response that refused a write can take more (`drain`), or is gone (`close`), or
 * the request's `scope`, when given, is aborted: a stream writer awaits it so a slow reader holds
 * back the writer, not the server's memory.
 */
export function drained(res: ServerResponse, scope?: RequestScope): Promise<void> {
  if (scope?.isAborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      scope?.offAbort(done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    scope?.onAbort(done);
  });
}

export { FRAMES_PER_TURN, StreamPacer } from '../pacer.js';
