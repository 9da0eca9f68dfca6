/**
 * JsonlEventSink: appends each event, redacted, as one JSON line to a file; `readJsonlEvents`
 * reads such a file back for replay. The simplest durable event log: greppable, tail-able and
 * append-only.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { UnavailableError, ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { SequencedEventSink } from './event-sink.js';
import { RedactionPolicy } from './redaction.js';
import { RunEvent } from './run-event.js';

export interface JsonlEventSinkOptions {
  /** File to append to; created when missing. */
  path: string;
  /** Applied to each line. Default `RedactionPolicy.default()`; `null` writes raw events. */
  redactionPolicy?: RedactionPolicy | null;
}

const OPTION_NAMES = optionNames<JsonlEventSinkOptions>({ path: true, redactionPolicy: true });

/**
 * Writes synchronously (one `write` per event), so a line is in the file when `emit` returns and a
 * crash loses nothing already emitted. Numbering restarts at 1 per sink instance.
 */
export class JsonlEventSink extends SequencedEventSink {
  readonly path: string;
  readonly #policy: RedactionPolicy | null;
  #fd: number | null;

  /** @throws ValueError for a missing path; UnavailableError when the file cannot be opened. */
  constructor(options: JsonlEventSinkOptions) {
    super();
    if (!options || typeof options.path !== 'string' || options.path === '') {
      throw new ValueError('JsonlEventSink needs a `path`', { data: { field: 'path' } });
    }
    checkOptionNames('JsonlEventSink', options, OPTION_NAMES);
    this.path = options.path;
    this.#policy =
      options.redactionPolicy === undefined ? RedactionPolicy.default() : options.redactionPolicy;
    try {
      this.#fd = openSync(options.path, 'a');
    } catch (error) {
      throw new UnavailableError(`JsonlEventSink cannot open ${options.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  protected store(event: RunEvent): void {
    if (this.#fd === null) throw new UnavailableError('The JSONL event sink is closed');
    const line = JSON.stringify(this.#policy === null ? event : this.#policy.redact(event));
    try {
      writeSync(this.#fd, `${line}\n`);
    } catch (error) {
      throw new UnavailableError(`JsonlEventSink cannot write ${this.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** Closes the file; idempotent. */
  close(): void {
    if (this.#fd === null) return;
    closeSync(this.#fd);
    this.#fd = null;
  }
}

/**
 * The events of a JSONL file, validated. A torn last line (a crash mid-write) is ignored.
 * @throws ValueError naming the line of any other malformed entry.
 */
export function readJsonlEvents(path: string): RunEvent[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const events: RunEvent[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (index === lines.length - 1) return;
      throw new ValueError(`${path}:${index + 1} is not JSON: ${(error as Error).message}`, {
        data: { line: index + 1 },
      });
    }
    try {
      events.push(RunEvent.parse(value));
    } catch (error) {
      throw new ValueError(`${path}:${index + 1}: ${(error as Error).message}`, {
        data: { line: index + 1 },
      });
    }
  });
  return events;
}
