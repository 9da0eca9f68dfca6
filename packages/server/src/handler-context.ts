import type { CallContext, SecurityContextLike, TransportKind } from '@agent/core';

/** The call a handler context reads from: its request's signal and headers only on demand. */
export interface ContextSource {
  readonly transport: TransportKind;
  readonly tenant: string;
  readonly security: SecurityContextLike | undefined;
  readonly taskStore: object | undefined;
  readonly request: { readonly signal: AbortSignal };
  /** The request headers with lowercase names, copied once. */
  normalizedHeaders(): Record<string, string>;
}

/**
 * The CallContext a handler gets. `signal` and `headers` are built on first read, so a handler that
 * reads neither costs nothing; they are own enumerable accessors, so spreading the context keeps
 * them. The accessors are functions every context shares: getters written in an object literal are
 * new closures per call, V8 keeps no fast shape for such an object, and each one held its call (the
 * request, the task) alive through young-generation collections.
 */
export class HandlerContext implements CallContext {
  readonly transport: TransportKind;
  readonly tenant: string;
  declare readonly signal: AbortSignal;
  declare readonly headers: Readonly<Record<string, string>>;
  declare security?: SecurityContextLike;
  declare taskStore?: object;
  readonly #source: ContextSource;

  // One descriptor per accessor, each defined with its own `defineProperty`: `defineProperties` with a
  // map of both read the map's descriptors afresh on every call and took twice as long (~1.4 µs).
  static readonly #signal: PropertyDescriptor = {
    get(this: HandlerContext) {
      return this.#source.request.signal;
    },
    enumerable: true,
    configurable: true,
  };
  static readonly #headers: PropertyDescriptor = {
    get(this: HandlerContext) {
      return this.#source.normalizedHeaders();
    },
    enumerable: true,
    configurable: true,
  };

  constructor(source: ContextSource) {
    this.transport = source.transport;
    this.tenant = source.tenant;
    this.#source = source;
    Object.defineProperty(this, 'signal', HandlerContext.#signal);
    Object.defineProperty(this, 'headers', HandlerContext.#headers);
    if (source.security) this.security = source.security;
    if (source.taskStore) this.taskStore = source.taskStore;
  }
}
