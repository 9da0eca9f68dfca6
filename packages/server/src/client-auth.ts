import { ValueError } from '@agent/core';
import { ClientCredentials, type Authenticator, type SecurityContext } from '@agent/auth';

/** The client-side options every transport shares (network or in-process). */
export interface ClientAuthOptions {
  authenticator?: Authenticator | undefined;
  credentials?: string | undefined;
}

/**
 * What a transport's client side sends, from its options: nothing without `credentials`;
 * `credentials` without an `authenticator` (which builds what is sent) are a ValueError.
 */
export function clientCredentialsFrom(options: ClientAuthOptions): ClientCredentials | undefined {
  if (options.credentials === undefined) return undefined;
  if (!options.authenticator) {
    throw new ValueError('credentials need an authenticator, which builds what the client sends');
  }
  return new ClientCredentials(options.authenticator, options.credentials);
}

/**
 * `Transport.authenticate(credentials)`, the same everywhere: authenticates now (a scrubbed
 * UnauthenticatedError when refused) and returns the store later calls send from.
 */
export async function authenticateClient(
  authenticator: Authenticator | undefined,
  current: ClientCredentials | undefined,
  credentials: string,
): Promise<{ store: ClientCredentials; context: SecurityContext }> {
  if (!authenticator) throw new ValueError('authenticate() needs an authenticator');
  const store = current ?? new ClientCredentials(authenticator, credentials);
  const context = await store.authenticate(credentials);
  return { store, context };
}
