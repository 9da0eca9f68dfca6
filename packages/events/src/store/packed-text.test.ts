import { compressText, decompressText, decompressTextSync, PackQueue } from './packed-text.js';

describe('compressText', () => {
  it('round-trips text, held as a one-byte string of exactly the compressed bytes', async () => {
    const text = JSON.stringify(
      Array.from({ length: 500 }, (_, i) => ({
        type: 'task.progress',
        sequence: i,
        summary: `step ${i} ☃ 😀`,
      })),
    );
    const packed = await compressText(text);
    expect(packed.bytes).toBeLessThan(Buffer.byteLength(text) / 5);
    expect(packed.slices.reduce((sum, slice) => sum + Buffer.byteLength(slice, 'latin1'), 0)).toBe(
      packed.bytes,
    );
    expect(await decompressText(packed)).toBe(text);
    expect(decompressTextSync(packed)).toBe(text);
    expect(await decompressText(text)).toBe(text);
  });

  it('keeps a surrogate pair whole where the text is cut into slices, for text of any length', async () => {
    for (const before of [64 * 1024 - 1, 64 * 1024, 128 * 1024 - 1]) {
      const text = `${'a'.repeat(before)}😀${'b'.repeat(80 * 1024)}😀☃`;
      const packed = await compressText(text);
      expect(packed.slices.length).toBeGreaterThan(1);
      expect(await decompressText(packed)).toBe(text);
      expect(decompressTextSync(packed)).toBe(text);
    }
    expect(await decompressText(await compressText(''))).toBe('');
  });
});

describe('PackQueue', () => {
  it('runs jobs one at a time, in order, past a failing one; settled waits for all of them', async () => {
    const queue = new PackQueue();
    const log: string[] = [];
    let running = 0;
    const job =
      (name: string, fail = false) =>
      async () => {
        running += 1;
        expect(running).toBe(1);
        await new Promise((resolve) => setImmediate(resolve));
        log.push(name);
        running -= 1;
        if (fail) throw new Error(name);
      };
    queue.add(job('a'));
    queue.add(job('b', true));
    queue.add(job('c'));
    expect(log).toEqual([]);
    await queue.settled();
    expect(log).toEqual(['a', 'b', 'c']);
    queue.add(job('d'));
    queue.clear();
    await queue.settled();
    expect(log).toEqual(['a', 'b', 'c']);
  });
});
