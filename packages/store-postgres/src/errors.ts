/**
 * Turning what `pg` throws into the typed errors of `@agent/core`. A pg error can carry a server's
 * address, and a connection error a URL; none of that, and no credential, may reach a caller or a
 * log line: the message keeps pg's reason with every secret of the pool cut out, and the pg error
 * itself is not attached.
 */
import { AgentError, UnavailableError, ValueError } from '@agent/core';
import type { Pool } from 'pg';

/** SQLSTATE classes that name bad data in an argument, not a failing server. */
const DATA_ERRORS = /^(22|54)/;

/** The pool's connection string, password and user, and the password inside the string. */
function secretsOf(pool: Pool | undefined): string[] {
  const options = (pool?.options ?? {}) as { connectionString?: unknown; password?: unknown };
  const secrets: string[] = [];
  if (typeof options.connectionString === 'string' && options.connectionString !== '') {
    secrets.push(options.connectionString);
    try {
      const url = new URL(options.connectionString);
      if (url.password !== '') secrets.push(url.password, decodeURIComponent(url.password));
    } catch {
      // Not a URL (a libpq key=value string): the whole string is cut out already.
    }
  }
  if (typeof options.password === 'string' && options.password !== '') secrets.push(options.password);
  // Longest first, so a password inside the connection string goes with it.
  return secrets.sort((a, b) => b.length - a.length);
}

export function scrub(text: string, pool: Pool | undefined): string {
  let clean = text;
  for (const secret of secretsOf(pool)) clean = clean.split(secret).join('[REDACTED]');
  // A URL with credentials that is not the pool's own (an error quoting another address).
  return clean.replace(/\b(postgres(?:ql)?:\/\/)[^\s@/]*@/gi, '$1[REDACTED]@');
}

/**
 * Our own errors pass through. A value pg refuses (a NUL character in a string, an id too long for
 * an index) is a ValueError; anything else (no connection, a timeout, a server shutting down) is an
 * UnavailableError. `data.pg_code` keeps pg's SQLSTATE or system error code.
 */
export function postgresError(error: unknown, context: string, pool?: Pool): AgentError {
  if (error instanceof AgentError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  const message = scrub(`${context}: ${reason}`, pool);
  const data = typeof code === 'string' ? { pg_code: code } : undefined;
  if (typeof code === 'string' && DATA_ERRORS.test(code)) return new ValueError(message, { data });
  return new UnavailableError(message, { data });
}
