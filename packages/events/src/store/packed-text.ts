/**
 * Cold JSON text held compressed. A finished task's long event log or a big run report is mostly
 * repeated keys, ids and timestamps: Brotli keeps a tenth to a hundredth of it, so a memory store
 * bounded in bytes holds that many more finished tasks in the same memory. Compressing runs on
 * libuv's thread pool, never on the event loop, one record at a time.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotliCompress = promisify(zlib.brotliCompress);
const brotliDecompress = promisify(zlib.brotliDecompress);
/**
 * Quality 4 of 11: on a 10,000-event log it keeps a quarter of what deflate's fastest level keeps,
 * in about the same time; higher qualities cost more time for a few percent.
 */
const QUALITY = 4;

/** Text as stored: as is, or compressed. */
export type HeldText = string | Buffer;

/** Bytes the held text occupies: UTF-8 length of the text, or the compressed length. */
export function heldBytes(held: HeldText): number {
  return typeof held === 'string' ? Buffer.byteLength(held, 'utf8') : held.length;
}

export async function compressText(text: string): Promise<Buffer> {
  const data = Buffer.from(text, 'utf8');
  const compressed = await brotliCompress(data, {
    params: {
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  // zlib hands back a view of its 16 KiB output chunk (or a concatenation in the shared pool): held
  // for hours, that would keep the whole chunk for a 2 KB result. An exact copy of its own instead.
  const exact = Buffer.allocUnsafeSlow(compressed.length);
  compressed.copy(exact);
  return exact;
}

/** The text back; off the event loop, for records of any size. */
export async function decompressText(held: HeldText): Promise<string> {
  return typeof held === 'string' ? held : (await brotliDecompress(held)).toString('utf8');
}

/** The text back, on the caller's turn: only for pieces bounded by the packer (event chunks). */
export function decompressTextSync(held: HeldText): string {
  return typeof held === 'string' ? held : zlib.brotliDecompressSync(held).toString('utf8');
}

/**
 * Runs compression jobs one after another. One at a time keeps the transient copy (a record's text as a
 * Buffer, handed to the thread pool) to one record, however many finish at once.
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
      await new Promise((resolve) => setImmediate(resolve));
      for (let job = this.#jobs.shift(); job; job = this.#jobs.shift()) {
        // A job that fails leaves its record as text: compressing is an economy, never a condition.
        await job().catch(() => undefined);
      }
    } finally {
      this.#running = null;
    }
  }
}
