import { UnauthenticatedError } from '@agent/core';
import { sharesCredential } from './authenticate-request.js';
import type { Authenticator } from './authenticator.js';
import { LazyCredentials } from './lazy-credentials.js';
import type { SecurityContext } from './security-context.js';

/**
 * The client side of authentication, the same for every transport: the credential is authenticated
 * lazily on the first call, an expired context is authenticated again, and a failure becomes an
 * UnauthenticatedError whose message carries no run of the credential (authenticators and the
 * servers they ask tend to quote what they were given).
 */
export class ClientCredentials {
  private lazy: LazyCredentials;

  constructor(
    readonly authenticator: Authenticator,
    private credentials: string,
  ) {
    this.lazy = new LazyCredentials(authenticator, credentials);
  }

  /** The raw credential, for rebuilding the transport elsewhere (`describe()`); never log it. */
  get credential(): string {
    return this.credentials;
  }

  /** Authenticates `credentials` now and uses them from then on; rejects with a scrubbed UnauthenticatedError. */
  async authenticate(credentials: string): Promise<SecurityContext> {
    const lazy = new LazyCredentials(this.authenticator, credentials);
    const context = await scrubbed(lazy, credentials);
    this.lazy = lazy;
    this.credentials = credentials;
    return context;
  }

  /** The current context, authenticating on first use and again once it has expired. */
  async context(): Promise<SecurityContext> {
    const context = await scrubbed(this.lazy, this.credentials);
    if (!isExpired(context)) return context;
    this.lazy.reset();
    return scrubbed(this.lazy, this.credentials);
  }

  /** Authorization headers for the current context. */
  async headers(): Promise<Record<string, string>> {
    await this.context();
    return this.lazy.headers();
  }

  /** The same as lowercase gRPC metadata. */
  async metadata(): Promise<Record<string, string>> {
    await this.context();
    return this.lazy.metadata();
  }

  /** Forgets the context (after a 401), so the next call authenticates again. */
  reset(): void {
    this.lazy.reset();
  }
}

async function scrubbed(lazy: LazyCredentials, credentials: string): Promise<SecurityContext> {
  try {
    return await lazy.getContext();
  } catch (error) {
    throw clientAuthError(error, credentials);
  }
}

/** The error a client reports when its own authenticator refused: no fragment of the credential in it. */
export function clientAuthError(error: unknown, credentials: string): UnauthenticatedError {
  const message =
    error instanceof Error &&
    error.message &&
    (credentials === '' || !sharesCredential(error.message, credentials))
      ? error.message
      : 'rejected';
  // No `cause`: the original error is exactly what may quote the credential.
  return new UnauthenticatedError(`Client authentication failed: ${message}`);
}

function isExpired(context: SecurityContext): boolean {
  try {
    return context.isExpired();
  } catch {
    return false;
  }
}
