/** The HTTP pieces both A2A bindings share: bodies, content types, the 401 challenge, SSE. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '@agent/auth';
import { corkForTurn, MalformedJsonError, drained, writeFrame, type BodyCallback } from '@agent/server/node';
import type { ExchangeInput } from '@agent/transport-http';
import type { A2AStreamResponse } from '../protojson.js';
import type { FrameStream } from './frame-stream.js';

const JSON_TYPES = new Set(['application/json', 'application/a2a+json']);

/** True when the request has no Content-Type or a JSON one (`application/json`, `application/a2a+json`). */
export function acceptsContentType(req: IncomingMessage): boolean {
  const header = req.headers['content-type'];
  // The header as nearly every client sends it, without splitting it apart.
  if (header === undefined || JSON_TYPES.has(header)) return true;
  if (header.trim() === '') return true;
  const type = header.split(';')[0]!.trim().toLowerCase();
  return JSON_TYPES.has(type);
}

/** Reads the JSON body, or gives `{}` when the request has none (a bodyless POST such as a cancel). */
export function readOptionalJsonBody(input: ExchangeInput, done: BodyCallback): void {
  const { req } = input;
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) {
    done(undefined, {});
    return;
  }
  input.readBody((error, body) => {
    if (error instanceof MalformedJsonError && /body is empty/.test(error.message)) done(undefined, {});
    else done(error, body);
  });
}

/** The `WWW-Authenticate` challenge of a 401, from the authenticator's scheme. */
export function wwwAuthenticate(authenticator: Authenticator | undefined): string {
  const scheme = authenticator?.securityScheme;
  if (!scheme) return 'Bearer';
  switch (scheme.authType) {
    case 'apiKey':
      return 'ApiKey';
    case 'http':
      if (scheme.authScheme === 'basic') return 'Basic realm="agent"';
      if (scheme.authScheme === 'bearer' || scheme.authScheme === null) return 'Bearer';
      return scheme.authScheme.charAt(0).toUpperCase() + scheme.authScheme.slice(1);
    default:
      return 'Bearer';
  }
}

/** Writes a JSON answer with exactly `Content-Type: application/json`; never throws. */
export function writeJsonBody(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  let payload: string;
  try {
    payload = JSON.stringify(body);
  } catch {
    status = 500;
    payload = JSON.stringify({ error: { code: 500, status: 'INTERNAL', message: 'Internal error' } });
  }
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/**
 * Writes a stream as `text/event-stream`, one `data:` frame per StreamResponse, honouring back
 * pressure. A client that goes away detaches from the task (which runs on); a failure after the
 * first frame writes `onError`'s frame, when it gives one, and ends the stream.
 */
export async function writeSse(
  res: ServerResponse,
  stream: FrameStream,
  frame: (response: A2AStreamResponse) => unknown,
  onError: (error: unknown) => unknown,
): Promise<void> {
  let gone = false;
  const onClose = (): void => {
    gone = true;
    void stream.close();
  };
  res.once('close', onClose);
  // The head leaves at once, with the frames written in the same turn.
  corkForTurn(res);
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    // Reverse proxies (nginx) buffer responses unless told not to. No `connection` header: node
    // keeps the connection alive or closes it as the request asked.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  try {
    for await (const response of stream) {
      if (gone) break;
      if (!writeFrame(res, `data: ${JSON.stringify(frame(response))}\n\n`)) await drained(res);
    }
  } catch (error) {
    if (!gone) writeFrame(res, `data: ${JSON.stringify(onError(error))}\n\n`);
  } finally {
    res.off('close', onClose);
    await stream.close();
    if (!res.writableEnded) res.end();
  }
}
