import { UnavailableError } from '@agent/core';
import WebSocket from 'ws';

interface Pending {
  frame: object;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Writes JSON frames to one socket with a hard bound: a frame is handed to ws only while the socket's
 * `bufferedAmount` is at or below `maxBufferedBytes`, so the buffer never exceeds the limit by more
 * than one frame. Frames that must wait are held in FIFO order and written one at a time as the peer
 * drains; `send` resolves once its frame is written, so a producer that awaits it pauses meanwhile.
 * `onCongestion` reports when frames start and stop waiting, so the reader can stop taking requests
 * whose replies would only pile up.
 */
export class BoundedSender {
  private readonly pending: Pending[] = [];
  private congested = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly maxBufferedBytes: number,
    private readonly onCongestion: (congested: boolean) => void = () => undefined,
  ) {
    socket.once('close', () => this.rejectAll());
  }

  /** True while frames wait for the peer to drain the buffer. */
  get isCongested(): boolean {
    return this.congested;
  }

  /** True while the peer is not taking what was written: frames wait, or the buffer is over its bound. */
  get isBackedUp(): boolean {
    return this.congested || this.isOverLimit();
  }

  /**
   * Rejects with UnavailableError when the socket is not open (or closes before the frame is
   * written), and with the signal's reason when `signal` aborts before the frame is written (the
   * frame is then dropped).
   */
  send(frame: object, signal?: AbortSignal): Promise<void> {
    if (this.socket.readyState !== WebSocket.OPEN)
      return Promise.reject(new UnavailableError('WebSocket connection is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.pending.length === 0 && !this.isOverLimit()) {
      this.write(frame);
      if (this.isOverLimit()) this.setCongested(true);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = {
        frame,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = (): void => {
        const index = this.pending.indexOf(entry);
        if (index >= 0) this.pending.splice(index, 1);
        entry.reject(signal?.reason);
        this.pump();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.push(entry);
      this.setCongested(true);
    });
  }

  private write(frame: object): void {
    // The callback fires once ws handed the frame to the kernel: the moment buffered bytes shrink.
    this.socket.send(JSON.stringify(frame), () => this.pump());
  }

  /** Writes waiting frames while the buffer has room; the write happens here, synchronously. */
  private pump(): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    while (this.pending.length > 0 && !this.isOverLimit()) {
      const next = this.pending.shift() as Pending;
      this.write(next.frame);
      next.resolve();
    }
    this.setCongested(this.pending.length > 0 || this.isOverLimit());
  }

  private isOverLimit(): boolean {
    return this.socket.bufferedAmount > this.maxBufferedBytes;
  }

  private setCongested(congested: boolean): void {
    if (congested === this.congested) return;
    this.congested = congested;
    this.onCongestion(congested);
  }

  private rejectAll(): void {
    const error = new UnavailableError('WebSocket connection closed');
    for (const entry of this.pending.splice(0)) entry.reject(error);
  }
}
