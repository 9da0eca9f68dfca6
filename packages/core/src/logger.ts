import { checkOptionNames, optionNames } from './option-names.js';
/**
 * The server's one logging seam. The interface is pino's calling convention (`logger.error(obj,
 * msg)`), so a pino logger can be passed as it is; without one, the server writes JSON lines to
 * stderr through a small built-in writer. Nothing the pipeline logs carries a credential: it logs
 * errors, ids and operation names, never headers.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  error(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  debug(fields: object, message?: string): void;
}

const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity };

export interface JsonLoggerOptions {
  /** Lowest level written. Default `info`. */
  level?: LogLevel;
  /** Where lines go. Default: process.stderr. */
  write?: (line: string) => void;
}

const LOGGER_OPTIONS = optionNames<JsonLoggerOptions>({ level: true, write: true });

/** Errors do not serialize with JSON.stringify: keep their name, message, code and stack. */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const result: Record<string, unknown> = { type: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) result.code = code;
  if (error.stack) result.stack = error.stack;
  if (error.cause !== undefined) result.cause = serializeError(error.cause);
  return result;
}

function stringifyLine(level: number, fields: object, message: string | undefined): string {
  const line: Record<string, unknown> = { level, time: Date.now() };
  // `for…in` with the own-key check: Object.entries built a pair array per field of every line.
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = (fields as Record<string, unknown>)[key];
    line[key] = key === 'err' ? serializeError(value) : value;
  }
  if (message !== undefined) line.msg = message;
  try {
    return JSON.stringify(line);
  } catch {
    return JSON.stringify({ level, time: line.time, msg: message, note: 'fields could not be serialized' });
  }
}

/** A pino-compatible logger that writes one JSON object per line (pino's field names: level, time, msg, err). */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  checkOptionNames('createJsonLogger', options, LOGGER_OPTIONS);
  const threshold = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const at =
    (name: Exclude<LogLevel, 'silent'>) =>
    (fields: object, message?: string): void => {
      const level = LEVELS[name];
      if (level >= threshold) write(stringifyLine(level, fields, message));
    };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

const noop = (): void => undefined;

/** Discards everything. */
export const silentLogger: Logger = { error: noop, warn: noop, info: noop, debug: noop };

let defaultLogger: Logger | undefined;

/** The logger a server uses when none is configured: JSON lines on stderr at `AGENT_LOG_LEVEL` (default info). */
export function getDefaultLogger(): Logger {
  if (!defaultLogger) {
    const env = process.env.AGENT_LOG_LEVEL as LogLevel | undefined;
    defaultLogger = createJsonLogger({ level: env && env in LEVELS ? env : 'info' });
  }
  return defaultLogger;
}

export function isLogger(value: unknown): value is Logger {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ['error', 'warn', 'info', 'debug'].every((name) => typeof candidate[name] === 'function');
}
