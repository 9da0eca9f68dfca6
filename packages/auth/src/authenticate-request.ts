import { AgentError, retryAfterMsOf, UnauthenticatedError } from '@agent/core';
import type { Authenticator } from './authenticator.js';
import { extractCredentials, type HeaderSource, type QuerySource } from './extract-credentials.js';
import type { SecurityContext } from './security-context.js';

/** Routes that skip application authentication. `/.well-known/agent.json` is not among them. */
export const PUBLIC_PATHS: readonly string[] = ['/.well-known/agent-card.json', '/healthz', '/readyz'];

export function isPublicPath(path: string): boolean {
  const bare = path.split('?')[0]!;
  return PUBLIC_PATHS.includes(bare) || PUBLIC_PATHS.includes(bare.replace(/\/+$/, ''));
}

export interface AuthenticateRequestOptions {
  authenticator?: Authenticator | null;
  headers: HeaderSource;
  query?: QuerySource;
  /** When given and public, no authentication runs and the result is undefined. */
  path?: string;
}

/**
 * The server-side step every transport runs before any handler: extract the credential, ask the
 * authenticator. Resolves with the SecurityContext, or undefined when no authenticator is configured
 * or the path is public. Rejects with UnauthenticatedError when the credential is missing or the
 * authenticator throws; the message never contains the credential. An overload (UNAVAILABLE with
 * `data.retry_after_ms`, e.g. a full `outboundLimit` of OAuth2DelegationAuth) is passed on as it is:
 * the credential was not judged, so the caller should wait and retry, not replace it.
 */
export async function authenticateRequest(
  options: AuthenticateRequestOptions,
): Promise<SecurityContext | undefined> {
  const { authenticator } = options;
  if (!authenticator) return undefined;
  if (options.path !== undefined && isPublicPath(options.path)) return undefined;
  const credentials = extractCredentials(options.headers, options.query);
  if (credentials === null || credentials === '') throw new UnauthenticatedError('Missing credentials');
  let context: SecurityContext;
  try {
    context = await authenticator.authenticate(credentials);
  } catch (error) {
    if (isOverload(error) && !sharesCredential(error.message, credentials)) throw error;
    const reason =
      error instanceof Error && error.message && !sharesCredential(error.message, credentials)
        ? error.message
        : 'Invalid credentials';
    throw new UnauthenticatedError(reason, { cause: error });
  }
  // A custom authenticator that resolves with nothing usable must not let the request through.
  if (typeof context !== 'object' || context === null || typeof context.principalId !== 'string') {
    throw new UnauthenticatedError('Invalid credentials');
  }
  return context;
}

function isOverload(error: unknown): error is AgentError {
  return error instanceof AgentError && error.code === 'UNAVAILABLE' && retryAfterMsOf(error) !== undefined;
}

/** The shortest run of credential characters a message may not contain (all of it when shorter). */
export const CREDENTIAL_ECHO_WINDOW = 8;

/**
 * True when `message` contains any run of CREDENTIAL_ECHO_WINDOW characters of `credentials`:
 * authenticators (and the upstream servers they quote) echo truncated or partial credentials, so a
 * whole-credential check is not enough. Any longer shared run contains a shared window, so comparing
 * the windows of both strings through a Set is enough and linear in their lengths.
 */
export function sharesCredential(message: string, credentials: string): boolean {
  if (credentials.length <= CREDENTIAL_ECHO_WINDOW) return message.includes(credentials);
  if (message.length < CREDENTIAL_ECHO_WINDOW) return false;
  const windows = new Set<string>();
  for (let i = 0; i + CREDENTIAL_ECHO_WINDOW <= message.length; i++) {
    windows.add(message.slice(i, i + CREDENTIAL_ECHO_WINDOW));
  }
  for (let i = 0; i + CREDENTIAL_ECHO_WINDOW <= credentials.length; i++) {
    if (windows.has(credentials.slice(i, i + CREDENTIAL_ECHO_WINDOW))) return true;
  }
  return false;
}
