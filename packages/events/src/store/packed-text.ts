/**
 * Cold JSON text held compressed. A finished task's long event log or a big run report is mostly
 * repeated keys, ids and timestamps: Brotli keeps a tenth to a hundredth of it, so a memory store
 * bounded in bytes holds that many more finished tasks in the same memory. Compressing runs on
 * libuv's thread pool, never on the event loop, one record at a time.
 */
import { once } from 'node:events';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotliDecompress = promisify(zlib.brotliDecompress);
/**
 * Quality 4 of 11: on a 10,000-event log it keeps a quarter of what deflate's fastest level keeps,
 * in about the same time; higher qualities cost more time for a few percent.
 */
const QUALITY = 4;
const WINDOW_BITS = 18;

/** Text as stored: as is, or compressed. */
export type HeldText = string | Buffer;

/** Bytes the held text occupies: UTF-8 length of the text, or the compressed length. */
export function heldBytes(held: HeldText): number {
  return typeof held === 'string' ? Buffer.byteLength(held, 'utf8') : held.length;
}

/** Text goes to the encoder in slices of this many UTF-16 units: no full-size copy of a big record. */
const SLICE = 32 * 1024;

/**
 * Compresses in slices with a 256 KiB window: the transient memory of one job stays near a megabyte
 * whatever the record's size. (A full-size input copy and Brotli's default 4 MiB window, handed to
 * the thread pool, left tens of MB in malloc's arenas after a burst of big records.)
 */
export async function compressText(text: string): Promise<Buffer> {
  const encoder = zlib.createBrotliCompress({
    params: {
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [zlib.constants.BROTLI_PARAM_LGWIN]: WINDOW_BITS,
    },
  });
  const parts: Buffer[] = [];
  let length = 0;
  encoder.on('data', (part: Buffer) => {
    parts.push(part);
    length += part.length;
  });
  const ended = once(encoder, 'end');
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + SLICE);
    // Never split a surrogate pair: each slice is encoded to UTF-8 on its own.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    if (!encoder.write(text.slice(at, end))) await once(encoder, 'drain');
    at = end;
  }
  encoder.end();
  await ended;
  // The encoder's parts are views of its 16 KiB output chunks: held for hours, each would keep its
  // whole chunk. One exact copy of its own instead.
  const exact = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const part of parts) offset += part.copy(exact, offset);
  return exact;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
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
