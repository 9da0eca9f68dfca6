import { UnavailableError } from '@agent/core';
import WebSocket from 'ws';

/**
 * Writes JSON frames to one socket and applies back-pressure: `send` resolves only once the socket's
 * `bufferedAmount` is at or below `maxBufferedBytes`, so a producer that awaits it pauses while a
 * slow peer drains and the buffer never grows without bound.
 */
export class BoundedSender {
  private waiters: Array<() => void> = [];

  constructor(
    private readonly socket: WebSocket,
    private readonly maxBufferedBytes: number,
  ) {
    socket.once('close', () => this.wakeAll());
  }

  /**
   * Rejects with UnavailableError when the socket is not open, and with the signal's reason when
   * `signal` aborts while waiting for the buffer to drain (the frame itself is already queued).
   */
  async send(frame: object, signal?: AbortSignal): Promise<void> {
    if (this.socket.readyState !== WebSocket.OPEN)
      throw new UnavailableError('WebSocket connection is closed');
    // The callback fires once ws handed the frame to the kernel: the moment buffered bytes shrink.
    this.socket.send(JSON.stringify(frame), () => this.wake());
    while (this.isOverLimit()) {
      if (signal?.aborted) throw signal.reason as Error;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.push(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  private isOverLimit(): boolean {
    return this.socket.readyState === WebSocket.OPEN && this.socket.bufferedAmount > this.maxBufferedBytes;
  }

  private wake(): void {
    if (!this.isOverLimit()) this.wakeAll();
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
