import {
  UnsupportedOperationError,
  ValueError,
  type ComponentDescriptor,
  type TlsOptions,
} from '@agent/core';
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

/**
 * The client settings a `describe()` recipe carries so that a worker thread can rebuild the client
 * (`client.sync`): TLS material as PEM text, the raw credential and the authenticator's own recipe.
 * UNSUPPORTED_OPERATION for an authenticator that cannot describe itself.
 */
export function describeClientAuth(settings: {
  tls?: TlsOptions | undefined;
  credentials?: ClientCredentials | undefined;
  authenticator?: Authenticator | undefined;
}): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (settings.tls) options.tls = pemStrings(settings.tls);
  if (settings.credentials) options.credentials = settings.credentials.credential;
  const authenticator = settings.authenticator;
  if (authenticator) {
    const describable = authenticator as Authenticator & { describe?: () => ComponentDescriptor };
    if (typeof describable.describe !== 'function') {
      throw new UnsupportedOperationError(
        `${authenticator.constructor.name} has no describe(), so this transport cannot be rebuilt in a worker`,
      );
    }
    options.authenticator = describable.describe();
  }
  return options;
}

/** Buffers do not survive `structuredClone` as Buffers; PEM text does. */
function pemStrings(tls: TlsOptions): TlsOptions {
  const text = (value: string | Buffer): string =>
    typeof value === 'string' ? value : value.toString('utf8');
  const result: TlsOptions = { ...tls };
  if (tls.cert !== undefined) result.cert = text(tls.cert);
  if (tls.key !== undefined) result.key = text(tls.key);
  if (tls.ca !== undefined) result.ca = Array.isArray(tls.ca) ? tls.ca.map(text) : text(tls.ca);
  return result;
}
