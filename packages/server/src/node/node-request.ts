import type { IncomingMessage } from 'node:http';
import type { HeaderBag, RequestInfo } from '../request.js';
import type { RequestScope } from '../request-scope.js';

/**
 * What the pipeline sees of a node:http request: its headers, query, peer and abort side, read from
 * the request when asked. A class, not an object literal with getters: V8 keeps no fast shape for a
 * literal whose getters are new closures per request, and each such object held its request alive
 * through young-generation collections.
 */
export class NodeRequest implements RequestInfo {
  constructor(
    readonly req: IncomingMessage,
    /** The request's abort side: a wire adapter that only needs to hear of an abort listens here. */
    readonly scope: RequestScope,
  ) {}

  get headers(): HeaderBag {
    return this.req.headers;
  }

  /** Parsed only when asked for: an authenticator reading credentials, or a route reading its query. */
  get query(): URLSearchParams | undefined {
    const url = this.req.url ?? '';
    const q = url.indexOf('?');
    return q === -1 ? undefined : new URLSearchParams(url.slice(q + 1));
  }

  /** Read lazily: the scope builds its AbortController only for whoever asks. */
  get signal(): AbortSignal {
    return this.scope.signal;
  }

  get remoteAddress(): string | undefined {
    return this.req.socket.remoteAddress;
  }

  abort(reason: unknown): void {
    this.scope.abort(reason);
  }
}
