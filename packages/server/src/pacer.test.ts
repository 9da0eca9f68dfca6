import { FRAMES_PER_LOOP_TURN, FRAMES_PER_TURN, StreamPacer } from './pacer.js';

/** A fresh turn of the event loop, so the shared budget starts unspent. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Frames each pacer handles in this turn before `pause()` first asks it to wait, going round-robin. */
function framesBeforePause(pacers: StreamPacer[]): number[] {
  const frames = pacers.map(() => 0);
  const waiting = pacers.map(() => false);
  while (waiting.includes(false)) {
    pacers.forEach((pacer, i) => {
      if (waiting[i]) return;
      frames[i]!++;
      if (pacer.pause()) waiting[i] = true;
    });
  }
  return frames;
}

describe('StreamPacer', () => {
  it('lets one stream handle FRAMES_PER_TURN frames back to back, then asks it to wait a turn', async () => {
    await nextTurn();
    expect(framesBeforePause([new StreamPacer()])).toEqual([FRAMES_PER_TURN]);
  });

  it('bounds what every stream together handles in one turn', async () => {
    await nextTurn();
    const frames = framesBeforePause(Array.from({ length: 40 }, () => new StreamPacer()));
    // Each within its own share, 40 streams would go 2,560 frames before node polls a socket again.
    const total = frames.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(FRAMES_PER_LOOP_TURN + 40);
    // Round-robin, so the turn is shared: nobody is starved of it.
    expect(Math.min(...frames)).toBeGreaterThan(0);
  });

  it('starts each turn with the whole budget again', async () => {
    await nextTurn();
    const first = framesBeforePause(Array.from({ length: 40 }, () => new StreamPacer()));
    await nextTurn();
    await nextTurn();
    const second = framesBeforePause(Array.from({ length: 40 }, () => new StreamPacer()));
    expect(second.reduce((a, b) => a + b, 0)).toBe(first.reduce((a, b) => a + b, 0));
  });
});
