import { ValueError } from '@agent/core';
import { CONTROL_PATH, DATA_PATH, type ConnectionKind } from './frames.js';

const WS_SCHEMES: Record<string, string> = { 'ws:': 'ws:', 'wss:': 'wss:', 'http:': 'ws:', 'https:': 'wss:' };

/**
 * The socket URL of one connection kind for an agent's base URL. `http(s)` maps to `ws(s)` (agent
 * cards often advertise HTTP URLs), and a base that already names `/ws` or `/ws/control` is accepted.
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
  let base = url.pathname.replace(/\/+$/, '');
  for (const suffix of [CONTROL_PATH, DATA_PATH]) {
    if (base.endsWith(suffix)) {
      base = base.slice(0, -suffix.length);
      break;
    }
  }
  url.pathname = `${base}${kind === 'data' ? DATA_PATH : CONTROL_PATH}`;
  url.hash = '';
  return url.toString();
}
