import { buildAuthHeaders, buildAuthMetadata } from './auth-headers.js';
import type { Authenticator } from './authenticator.js';
import type { SecurityContext } from './security-context.js';

/**
 * Client-side lazy authentication: the first call awaits `authenticator.authenticate(credentials)`
 * and caches the context; concurrent first calls share one in-flight promise. A failed attempt is
 * not cached, so the next call tries again.
 */
export class LazyCredentials {
  private context: SecurityContext | undefined;
  private pending: Promise<SecurityContext> | undefined;

  constructor(
    readonly authenticator: Authenticator,
    private readonly credentials: string,
  ) {}

  /** The cached context, authenticating on first use. */
  async getContext(): Promise<SecurityContext> {
    if (this.context) return this.context;
    this.pending ??= this.authenticator.authenticate(this.credentials).then(
      (context) => {
        this.context = context;
        this.pending = undefined;
        return context;
      },
      (error: unknown) => {
        this.pending = undefined;
        throw error;
      },
    );
    return this.pending;
  }

  /** Replaces the cached context (after an explicit `authenticate` or refresh). */
  setContext(context: SecurityContext): void {
    this.context = context;
  }

  /** Forgets the cached context so the next call authenticates again. */
  reset(): void {
    this.context = undefined;
  }

  async headers(): Promise<Record<string, string>> {
    return buildAuthHeaders(this.authenticator.securityScheme, await this.getContext());
  }

  /** Lowercase header names, as gRPC metadata requires. */
  async metadata(): Promise<Record<string, string>> {
    return buildAuthMetadata(this.authenticator.securityScheme, await this.getContext());
  }
}
