/**
 * The reference server's log on stderr: JSON lines (the default, for log pipelines) or `pretty`,
 * one readable line per record for a person at a terminal. Both carry the same fields.
 */
import { createJsonLogger, type Logger } from '@agent/core';
import type { LogConfig } from './config.js';

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;
type Level = Exclude<keyof typeof LEVELS, 'silent'>;

export function createServerLogger(
  config: Pick<LogConfig, 'level' | 'format'>,
  write: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
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
