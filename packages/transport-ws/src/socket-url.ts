import { ValueError } from '@agent/core';
import type { ConnectionKind } from './codec.js';

/** The control connection's path below the data connection's. */
export const CONTROL_SUFFIX = '/control';
/** The fixed path earlier versions served the data connection on, below the URL's path. */
export const LEGACY_DATA_SUFFIX = '/ws';

const WS_SCHEMES: Record<string, string> = { 'ws:': 'ws:', 'wss:': 'wss:', 'http:': 'ws:', 'https:': 'wss:' };

/** A path without trailing slashes ('' for the root). */
function trimmed(path: string): string {
  return path.replace(/\/+$/, '');
}

/**
 * Where a server whose URL path is `basePath` serves each connection: the data connection on the
 * URL's own path (`/` for a bare origin), the control connection on `<path>/control`. The paths of
 * earlier versions, `<path>/ws` and `<path>/ws/control`, keep working.
 */
export class SocketPaths {
  private readonly kinds = new Map<string, ConnectionKind>();

  constructor(basePath: string) {
    const base = trimmed(basePath);
    const legacy = `${base}${LEGACY_DATA_SUFFIX}`;
    this.kinds.set(base === '' ? '/' : base, 'data');
    this.kinds.set(`${base}${CONTROL_SUFFIX}`, 'control');
    this.kinds.set(legacy, 'data');
    this.kinds.set(`${legacy}${CONTROL_SUFFIX}`, 'control');
  }

  /** The connection a request path asks for, trailing slashes ignored; undefined for any other path. */
  kindOf(path: string): ConnectionKind | undefined {
    return this.kinds.get(trimmed(path) || '/');
  }
}

/**
 * The socket URL of one connection kind for an agent's base URL: the base itself for data, the
 * base plus `/control` for control. `http(s)` maps to `ws(s)` (agent cards often advertise HTTP
 * URLs); a base naming an earlier version's control path (`…/ws/control`) is read as its `…/ws`.
 */
export function socketUrlFor(baseUrl: string, kind: ConnectionKind): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ValueError(`Invalid WebSocket base URL: ${baseUrl}`);
  }
  const protocol = WS_SCHEMES[url.protocol];
  if (!protocol)
    throw new ValueError(`Unsupported scheme "${url.protocol}" for a WebSocket URL; use ws:// or wss://`);
  url.protocol = protocol;
  let base = trimmed(url.pathname);
  const legacyControl = `${LEGACY_DATA_SUFFIX}${CONTROL_SUFFIX}`;
  if (base.endsWith(legacyControl)) base = base.slice(0, -CONTROL_SUFFIX.length);
  url.pathname = kind === 'data' ? base || '/' : `${base}${CONTROL_SUFFIX}`;
  url.hash = '';
  return url.toString();
}
