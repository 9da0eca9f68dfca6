/** Small request/response helpers for the node:http server side. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentError, ParseError, PayloadTooLargeError } from '@agent/core';

/**
 * Reads the whole request body, refusing more than `maxBytes` (by Content-Length up front, else
 * while streaming). Throws PayloadTooLargeError; the caller answers 413 and closes the connection.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    new PayloadTooLargeError(`Request body exceeds ${maxBytes} bytes`, { data: { max_bytes: maxBytes } });
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(
        new AgentError('INVALID_REQUEST', 'The client closed the connection before sending the whole body'),
      );
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Parses a JSON body; an empty or malformed one is a ParseError (JSON-RPC -32700). */
export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ParseError(`Malformed JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Answers with the error's HTTP status and the DESIGN.md body `{"error": {code, message, data?}}`. */
export function sendError(res: ServerResponse, error: unknown, headers: Record<string, string> = {}): void {
  const agentError = AgentError.from(error);
  sendJson(res, agentError.httpStatus, { error: agentError.toJSON() }, headers);
}
