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
  /** Bumped by reset/setContext so that an attempt already in flight cannot overwrite the newer state. */
  private generation = 0;

  constructor(
    readonly authenticator: Authenticator,
    private readonly credentials: string,
  ) {}

  /** The cached context, authenticating on first use. */
  async getContext(): Promise<SecurityContext> {
    if (this.context) return this.context;
    if (this.pending) return this.pending;
    const generation = this.generation;
    const attempt = Promise.resolve()
      .then(() => this.authenticator.authenticate(this.credentials))
      .then(
        (context) => {
          if (generation === this.generation) {
            this.context = context;
            this.pending = undefined;
          }
          return context;
        },
        (error: unknown) => {
          if (generation === this.generation) this.pending = undefined;
          throw error;
        },
      );
    this.pending = attempt;
    return attempt;
  }

  /** Replaces the cached context (after an explicit `authenticate` or refresh). */
  setContext(context: SecurityContext): void {
    this.generation += 1;
    this.pending = undefined;
    this.context = context;
  }

  /** Forgets the cached context so the next call authenticates again. */
  reset(): void {
    this.generation += 1;
    this.pending = undefined;
    this.context = undefined;
  }

  /** The cached context, if the first authentication already succeeded; never triggers one. */
  get current(): SecurityContext | undefined {
    return this.context;
  }

  async headers(): Promise<Record<string, string>> {
    return buildAuthHeaders(this.authenticator.securityScheme, await this.getContext());
  }

  /** Lowercase header names, as gRPC metadata requires. */
  async metadata(): Promise<Record<string, string>> {
    return buildAuthMetadata(this.authenticator.securityScheme, await this.getContext());
  }
}
