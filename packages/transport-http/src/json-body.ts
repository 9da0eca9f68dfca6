import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, PayloadTooLargeError, type AgentError } from '@agent/core';

/** Parses a request body as JSON; an empty or malformed body is a 400 INVALID_REQUEST. */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new InvalidRequestError('Malformed JSON: the request body is empty');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequestError(`Malformed JSON: ${(error as Error).message}`);
  }
}

export function payloadTooLarge(maxBodyBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body exceeds ${maxBodyBytes} bytes`, {
    data: { max_body_bytes: maxBodyBytes },
  });
}

export type BodyCallback = (error: AgentError | undefined, body?: unknown) => void;

/** Per-request read state; it rides on the request so the listeners can be shared functions. */
class BodyRead {
  first: Buffer | undefined;
  rest: Buffer[] | undefined;
  size = 0;
  settled = false;

  constructor(
    readonly maxBodyBytes: number,
    readonly done: BodyCallback,
  ) {}
}

const READ = Symbol('agent.bodyRead');
type ReadingRequest = IncomingMessage & { [READ]?: BodyRead };

/**
 * Reads a request body once and parses it as JSON, refusing it as soon as it passes
 * `maxBodyBytes` (a declared Content-Length is checked before any byte is read). Callback-style
 * with shared listeners because it sits on the hot path: no promise and no closure per request.
 * The caller drains what is left after a refusal with {@link discardBody}.
 */
export function readJsonBody(req: IncomingMessage, maxBodyBytes: number, done: BodyCallback): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    done(payloadTooLarge(maxBodyBytes));
    return;
  }
  (req as ReadingRequest)[READ] = new BodyRead(maxBodyBytes, done);
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyError);
}

function onBodyData(this: ReadingRequest, chunk: Buffer): void {
  const read = this[READ]!;
  read.size += chunk.length;
  if (read.size > read.maxBodyBytes) {
    read.settled = true;
    this.off('data', onBodyData);
    read.first = undefined;
    read.rest = undefined;
    read.done(payloadTooLarge(read.maxBodyBytes));
    return;
  }
  if (read.first === undefined) read.first = chunk;
  else (read.rest ??= [read.first]).push(chunk);
}

function onBodyEnd(this: ReadingRequest): void {
  const read = this[READ]!;
  if (read.settled) return;
  read.settled = true;
  const text = read.rest
    ? Buffer.concat(read.rest, read.size).toString('utf8')
    : read.first
      ? read.first.toString('utf8')
      : '';
  read.first = undefined;
  read.rest = undefined;
  let body: unknown;
  try {
    body = parseJsonBody(text);
  } catch (error) {
    read.done(error as AgentError);
    return;
  }
  read.done(undefined, body);
}

function onBodyError(this: ReadingRequest, error: Error): void {
  const read = this[READ]!;
  if (read.settled) return;
  read.settled = true;
  read.done(new InvalidRequestError(`Request body could not be read: ${error.message}`));
}

/**
 * Discards the unread rest of a refused request so the client can read the error instead of a
 * connection reset; a client that keeps sending past `budget` more bytes loses its socket.
 */
export function discardBody(req: IncomingMessage, budget: number): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > budget) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}
