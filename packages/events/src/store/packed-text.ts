/**
 * Cold JSON text held compressed. A finished task's long event log or a big run report is mostly
 * repeated keys, ids and timestamps: Brotli keeps a tenth to a fiftieth of it, so a memory store
 * bounded in bytes holds that many more finished tasks in the same memory.
 *
 * Text is compressed in slices of 64K characters, each on its own, on the event loop with a turn
 * between slices (a slice takes under a millisecond). Not on the thread pool: there Brotli
 * allocates its working memory in each pool thread's own malloc arena, which kept ~16 MB after a
 * burst of big records; on the main thread the same memory is freed and reused in one arena.
 */
import zlib from 'node:zlib';

/**
 * Quality 3 of 11: on a run report, 1.4 µs of CPU per KB for a 68th of its size; quality 4 gives
 * the same size for 4.8 µs, deflate's fastest level half of it for 0.9 µs.
 */
const PARAMS = {
  params: {
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    [zlib.constants.BROTLI_PARAM_QUALITY]: 3,
    // A window as large as a slice: nothing further back to refer to.
    [zlib.constants.BROTLI_PARAM_LGWIN]: 18,
  },
};

/** UTF-16 units per slice. */
const SLICE = 64 * 1024;

/**
 * Compressed text: one compressed slice per 64K characters, each held as a one-byte (latin1)
 * string, in V8's compacting heap. (A Buffer's backing store is malloc'd: long-lived small ones
 * scattered among a burst's transient allocations kept malloc's heap from shrinking back.)
 */
export class PackedText {
  readonly bytes: number;

  constructor(readonly slices: readonly string[]) {
    this.bytes = slices.reduce((sum, slice) => sum + slice.length, 0);
  }
}

/** Text as stored: as is, or compressed. */
export type HeldText = string | PackedText;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export async function compressText(text: string): Promise<PackedText> {
  const slices: string[] = [];
  for (let at = 0; at < text.length || slices.length === 0;) {
    if (slices.length > 0) await nextTurn();
    let end = Math.min(text.length, at + SLICE);
    // Never split a surrogate pair: each slice is encoded to UTF-8 on its own.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    const compressed = zlib.brotliCompressSync(Buffer.from(text.slice(at, end), 'utf8'), PARAMS);
    slices.push(compressed.toString('latin1'));
    at = end;
  }
  return new PackedText(slices);
}

function decompressSlice(slice: string): string {
  return zlib.brotliDecompressSync(Buffer.from(slice, 'latin1')).toString('utf8');
}

/** The text back, a slice per event-loop turn: for records of any size. */
export async function decompressText(held: HeldText): Promise<string> {
  if (typeof held === 'string') return held;
  const parts: string[] = [];
  for (const slice of held.slices) {
    if (parts.length > 0) await nextTurn();
    parts.push(decompressSlice(slice));
  }
  return parts.join('');
}

/** The text back, on the caller's turn: only for pieces of a slice or two (a log's chunks). */
export function decompressTextSync(held: HeldText): string {
  return typeof held === 'string' ? held : held.slices.map(decompressSlice).join('');
}

/**
 * Runs compression jobs one after another, so that however many records finish at once, one is
 * being compressed and the event loop gets a turn between its slices.
 */
export class PackQueue {
  readonly #jobs: (() => Promise<void>)[] = [];
  #running: Promise<void> | null = null;

  add(job: () => Promise<void>): void {
    this.#jobs.push(job);
    this.#running ??= this.#drain();
  }

  /** Resolves once every job added so far has run. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Forgets the jobs not started yet. */
  clear(): void {
    this.#jobs.length = 0;
  }

  async #drain(): Promise<void> {
    try {
      // The save that queued the job answers first.
      await nextTurn();
      for (let job = this.#jobs.shift(); job; job = this.#jobs.shift()) {
        // A job that fails leaves its record as text: compressing is an economy, never a condition.
        await job().catch(() => undefined);
      }
    } finally {
      this.#running = null;
    }
  }
}
