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
 * Holds what is written to `res` until the current turn's writes are done, then sends it in one
 * socket write: a stream's frames produced in the same turn (and its head, when it is written with
 * the first of them) would otherwise cost a system call each, the largest part of a short stream.
 */
export function corkForTurn(res: ServerResponse): void {
  if (res.writableCorked) return;
  res.cork();
  process.nextTick(uncork, res);
}

function uncork(res: ServerResponse): void {
  res.uncork();
}

/** Writes one frame of a stream, sent with the other frames of its turn ({@link corkForTurn}). */
export function writeFrame(res: ServerResponse, text: string): boolean {
  corkForTurn(res);
  return res.write(text);
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

export { FRAMES_PER_TURN, StreamPacer } from '../pacer.js';
