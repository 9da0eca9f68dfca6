import type { ServerResponse } from 'node:http';
import type { EndpointResponse } from './backend.js';

const CONTENT_TYPE = 'application/json; charset=utf-8';
const UNSERIALIZABLE = JSON.stringify({
  error: { code: 'INTERNAL', message: 'The response could not be serialized as JSON' },
});

/**
 * Writes an endpoint response: the body is stringified once and sent with its length in one `end`.
 * Never throws: a body JSON cannot represent (a cycle, a BigInt) becomes a 500 INTERNAL.
 */
export function writeJson(res: ServerResponse, response: EndpointResponse): void {
  if (res.headersSent || res.destroyed) return;
  let status = response.status;
  let payload: string;
  try {
    payload = JSON.stringify(response.body);
  } catch {
    status = 500;
    payload = UNSERIALIZABLE;
  }
  const headers: Record<string, string | number> = {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(payload),
  };
  if (response.headers && status === response.status) Object.assign(headers, response.headers);
  res.writeHead(status, headers);
  res.end(payload);
}
