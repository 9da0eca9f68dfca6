/**
 * Answers for requests node's HTTP parser refuses before any request exists (node's `clientError`):
 * a malformed request line, a bad header, contradictory body framing, a header section over
 * `maxHeaderSize`, a request that did not arrive in time. Node's own answer is a bare status line;
 * here it is the JSON error body every other answer ≥ 400 has, with `Connection: close`.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  DeadlineExceededError,
  InvalidRequestError,
  PayloadTooLargeError,
  type AgentError,
} from '@agent/core';

/** The status and error of one parser-level refusal. */
export interface ParserRefusal {
  status: number;
  error: AgentError;
}

/** What a malformed request got wrong, by llhttp's error code; the parser's own wording is never sent. */
const PARTS: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: 'the method',
  HPE_INVALID_URL: 'the request target',
  HPE_INVALID_VERSION: 'the HTTP version',
  HPE_INVALID_HEADER_TOKEN: 'a header',
  HPE_INVALID_CONSTANT: 'the request line',
  HPE_LF_EXPECTED: 'a line ending',
  HPE_CR_EXPECTED: 'a line ending',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'the body framing (Content-Length, Transfer-Encoding)',
  HPE_INVALID_CONTENT_LENGTH: 'the body framing (Content-Length, Transfer-Encoding)',
  HPE_INVALID_TRANSFER_ENCODING: 'the body framing (Content-Length, Transfer-Encoding)',
  HPE_INVALID_CHUNK_SIZE: 'the chunked body',
};

/**
 * The answer to a parser error. 400 INVALID_REQUEST for a malformed request; 431 (HTTP's status for
 * it, which the error table has no row for) with PAYLOAD_TOO_LARGE and `data.max_header_bytes` for
 * a header section over the limit; 413 PAYLOAD_TOO_LARGE for oversized chunk extensions; 408 (HTTP's
 * status) with DEADLINE_EXCEEDED for a request that did not arrive within the server's timeouts.
 */
export function parserRefusal(error: unknown, maxHeaderBytes: number): ParserRefusal {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        error: new PayloadTooLargeError(`The request's header section exceeds ${maxHeaderBytes} bytes`, {
          data: { max_header_bytes: maxHeaderBytes },
        }),
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        error: new PayloadTooLargeError('The chunk extensions of the request are too large'),
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: new DeadlineExceededError('The request did not arrive in time') };
    default: {
      const part = typeof code === 'string' ? PARTS[code] : undefined;
      return {
        status: 400,
        error: new InvalidRequestError(part ? `Malformed HTTP request: ${part}` : 'Malformed HTTP request'),
      };
    }
  }
}

/** The whole response of a parser-level refusal, as bytes on the socket (no request object exists). */
export function encodeRefusal({ status, error }: ParserRefusal): string {
  const body = JSON.stringify({ error: error.toJSON() });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * The `clientError` listener of the host: answers with the JSON error body and closes the socket.
 * As node's own handler does, it writes nothing on a socket that is gone or whose current response
 * is half written (the bytes would corrupt that answer); it closes the socket either way.
 */
export function answerClientError(error: unknown, socket: Duplex, maxHeaderBytes: number): void {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
    socket.destroy();
    return;
  }
  socket.end(encodeRefusal(parserRefusal(error, maxHeaderBytes)), () => socket.destroy());
}

/**
 * True when the response node is writing on this socket (it keeps it as `_httpMessage`) has sent its
 * headers but not ended: more of it may follow, so nothing else may be written. A response that
 * ended has all its bytes queued ahead of anything written after it.
 */
function responseStarted(socket: Duplex): boolean {
  type Current = { headersSent?: boolean; writableEnded?: boolean } | null;
  const current = (socket as { _httpMessage?: Current })._httpMessage;
  return current?.headersSent === true && current.writableEnded !== true;
}
