/**
 * The reference server's log on stderr: JSON lines (the default, for log pipelines) or `pretty`,
 * one readable line per record for a person at a terminal. Both carry the same fields.
 */
import { createJsonLogger, type Logger } from '@agent/core';
import type { LogConfig } from './config.js';

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;
type Level = Exclude<keyof typeof LEVELS, 'silent'>;

/** Writers holding lines not yet written; one `exit` listener writes them all. */
const unwritten = new Set<() => void>();
let exitHooked = false;

/**
 * Writes log lines to stderr once per turn of the event loop, joined: stderr on a pipe or a file is
 * a synchronous write per call, and a burst of requests (a thousand cancels at once) logs a line
 * each. The turn's lines go out together after the poll phase, and whatever is left when the
 * process exits is written then (an `exit` listener runs synchronously).
 */
export function turnBufferedWriter(
  out: { write(text: string): unknown } = process.stderr,
): (line: string) => void {
  let lines: string[] = [];
  const flush = (): void => {
    unwritten.delete(flush);
    if (lines.length === 0) return;
    const text = `${lines.join('\n')}\n`;
    lines = [];
    out.write(text);
  };
  return (line) => {
    lines.push(line);
    if (unwritten.has(flush)) return;
    unwritten.add(flush);
    if (!exitHooked) {
      exitHooked = true;
      process.once('exit', () => {
        for (const pending of [...unwritten]) pending();
      });
    }
    setImmediate(flush).unref();
  };
}

export function createServerLogger(
  config: Pick<LogConfig, 'level' | 'format'>,
  write: (line: string) => void = turnBufferedWriter(),
): Logger {
  if (config.format === 'json') return createJsonLogger({ level: config.level, write });
  const threshold = LEVELS[config.level];
  const at =
    (level: Level) =>
    (fields: object, message?: string): void => {
      if (LEVELS[level] >= threshold) write(prettyLine(level, fields, message));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * `12:04:05.123 INFO  request operation=send_task transport=http status=ok duration_ms=3.1 …`:
 * the time, the level, the message, then every field as `key=value` (a value with spaces or
 * quotes JSON-quoted; an error as its type and message). One line, whatever the values hold.
 */
export function prettyLine(
  level: Level,
  fields: object,
  message: string | undefined,
  now = new Date(),
): string {
  const parts = [now.toISOString().slice(11, 23), level.toUpperCase().padEnd(5)];
  if (message !== undefined) parts.push(oneLine(message));
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    parts.push(`${key}=${prettyValue(key === 'err' ? errorText(value) : value)}`);
  }
  return parts.join(' ');
}

function errorText(value: unknown): string {
  if (!(value instanceof Error)) return String(value);
  const code = (value as { code?: unknown }).code;
  return `${value.name}${typeof code === 'string' ? ` ${code}` : ''}: ${value.message}`;
}

function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '[unserializable]';
  }
}

/** A message is a fixed text, but keep the one-line promise even for one that is not. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
