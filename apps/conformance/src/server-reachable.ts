/** Tells "nothing listens there" apart from "the server misbehaves" before any case runs. */
import { connect } from 'node:net';
import { UnavailableError } from '@agent/core';
import { parseTransportUrl } from '@agent/core/internal';

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * Resolves once a TCP connection to the URL's host and port opens (and closes it again); rejects
 * with `UnavailableError` saying why it could not.
 */
export function checkReachable(url: string, timeoutMs: number): Promise<void> {
  const { host, port } = parseTransportUrl(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const fail = (reason: string): void => {
      socket.destroy();
      reject(
        new UnavailableError(
          `nothing answers at ${url} (${reason}); is the server running? (pnpm start runs the reference server)`,
        ),
      );
    };
    socket.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => fail(REASONS[error.code ?? ''] ?? error.message));
  });
}
