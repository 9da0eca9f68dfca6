/**
 * One task's event log in a memory store: the events as JSON text, in sequence order, the older ones
 * possibly compressed in chunks once the task has finished. A chunk holds consecutive events, so a
 * page of a long log decompresses only the chunks it overlaps.
 */
import { compressText, decompressTextSync, type PackedText } from './packed-text.js';

interface Chunk {
  /** Index (sequence − 1) of its first event. */
  first: number;
  count: number;
  /** The events' texts joined by `\n` (JSON text never holds a raw newline), compressed. */
  data: PackedText;
}

/** Events per chunk stop growing past this many characters: a page read decompresses little more than it reads. */
const CHUNK_CHARS = 64 * 1024;

/** The bytes one event's text counts for: as a listing reads it back, `{"sequence":N,"event":…}`. */
function eventBytes(text: string, sequence: number): number {
  return Buffer.byteLength(text, 'utf8') + 22 + String(sequence).length;
}

/** The bytes `texts` count for in a log once appended after its event number `after`. */
export function logBytesOf(texts: readonly string[], after: number): number {
  let added = 0;
  for (let i = 0; i < texts.length; i++) added += eventBytes(texts[i]!, after + i + 1);
  return added;
}

export class TaskEventLog {
  readonly #chunks: Chunk[] = [];
  /** Events held in chunks: the first `#packed` of the log. */
  #packed = 0;
  /** The rest, as text. */
  readonly #tail: string[] = [];
  #tailBytes = 0;
  #bytes = 0;
  #packing = false;

  /** Events logged: the last sequence number. */
  get count(): number {
    return this.#packed + this.#tail.length;
  }

  /** What the log occupies: its text, and the compressed size of its chunks. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Text not packed yet, in bytes. */
  get unpackedBytes(): number {
    return this.#tailBytes;
  }

  /** The bytes `texts` would add after the current last event. */
  measure(texts: readonly string[]): number {
    return logBytesOf(texts, this.count);
  }

  /** Appends texts measured by `measure`; returns their sequence numbers. */
  append(texts: readonly string[], added: number): number[] {
    const sequences: number[] = [];
    for (const text of texts) {
      this.#tail.push(text);
      sequences.push(this.count);
    }
    this.#tailBytes += added;
    this.#bytes += added;
    return sequences;
  }

  /** The texts of events with index `from` up to (not including) `to`. */
  read(from: number, to = this.count): string[] {
    const end = Math.min(to, this.count);
    const texts: string[] = [];
    if (from >= end) return texts;
    if (from < this.#packed) {
      for (const chunk of this.#chunks) {
        if (chunk.first + chunk.count <= from) continue;
        if (chunk.first >= end) break;
        const lines = decompressTextSync(chunk.data).split('\n');
        const start = Math.max(from, chunk.first) - chunk.first;
        const stop = Math.min(end, chunk.first + chunk.count) - chunk.first;
        for (let i = start; i < stop; i++) texts.push(lines[i]!);
      }
    }
    for (let i = Math.max(from, this.#packed); i < end; i++) texts.push(this.#tail[i - this.#packed]!);
    return texts;
  }

  /**
   * Compresses the events logged so far into chunks; events appended meanwhile stay text. `onPacked`
   * gets the change in `bytes` (negative) in the same turn as the swap, so that the owner's running
   * total never counts the log in one form and corrects it in the other.
   */
  async pack(onPacked: (delta: number) => void): Promise<void> {
    if (this.#packing || this.#tail.length === 0) return;
    this.#packing = true;
    try {
      // The whole tail, whose bytes were counted as it was appended.
      const taken = this.#tail.slice();
      const takenBytes = this.#tailBytes;
      const chunks: Chunk[] = [];
      let first = 0;
      while (first < taken.length) {
        let count = 0;
        let chars = 0;
        while (first + count < taken.length && (count === 0 || chars < CHUNK_CHARS)) {
          chars += taken[first + count]!.length;
          count += 1;
        }
        const data = await compressText(taken.slice(first, first + count).join('\n'));
        chunks.push({ first: this.#packed + first, count, data });
        first += count;
      }
      // Only appends happened meanwhile, so the taken events are still the head of the tail.
      const packedBytes = chunks.reduce((sum, chunk) => sum + chunk.data.bytes, 0);
      if (packedBytes >= takenBytes) return;
      this.#chunks.push(...chunks);
      this.#packed += taken.length;
      this.#tail.splice(0, taken.length);
      this.#tailBytes -= takenBytes;
      const delta = packedBytes - takenBytes;
      this.#bytes += delta;
      onPacked(delta);
    } finally {
      this.#packing = false;
    }
  }
}
