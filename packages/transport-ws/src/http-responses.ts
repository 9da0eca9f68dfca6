import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AgentError } from '@agent/core';

export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** Answers an HTTP request with the error body of DESIGN.md §3. */
export function writeError(res: ServerResponse, error: unknown): void {
  const agentError = AgentError.from(error);
  writeJson(res, agentError.httpStatus, { error: agentError.toJSON() });
}

/**
 * Rejects an upgrade before any WebSocket exists: a plain HTTP response with the JSON error body
 * written on the raw socket, which is then closed. The client sees the status and no connection.
 */
export function rejectUpgrade(socket: Duplex, error: unknown): void {
  const agentError = AgentError.from(error);
  const status = agentError.httpStatus;
  const payload = JSON.stringify({ error: agentError.toJSON() });
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(payload)}\r\n` +
      '\r\n' +
      payload,
  );
  // end() flushes the response; destroy afterwards so a peer that keeps its side open cannot linger.
  socket.once('finish', () => socket.destroy());
}
