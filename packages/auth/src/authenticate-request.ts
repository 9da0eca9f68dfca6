import { UnauthenticatedError } from '@agent/core';
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
 * authenticator throws; the message never contains the credential.
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
    const reason =
      error instanceof Error && error.message && !error.message.includes(credentials)
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
