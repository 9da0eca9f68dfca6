import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidRequestError, PayloadTooLargeError, type AgentError } from '@agent/core';
import { jsonLimitError } from '@agent/core/internal';

/**
 * A body that is not JSON: a 400 INVALID_REQUEST on plain HTTP. Its own class so that a JSON-RPC
 * route can answer it as the protocol's parse error (-32700) instead.
 */
export class MalformedJsonError extends InvalidRequestError {}

/**
 * Parses a request body as JSON; an empty or malformed body is a 400 INVALID_REQUEST, and so is one
 * nested deeper or with an array longer than the JSON limits (checked on the text, before parsing).
 * The parser's own message (an engine's wording, with positions) is not passed on.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new MalformedJsonError('Malformed JSON: the request body is empty');
  const limit = jsonLimitError(text);
  if (limit) throw limit;
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedJsonError('Malformed JSON: the request body is not valid JSON');
  }
}

export function payloadTooLarge(maxBodyBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`Request body exceeds ${maxBodyBytes} bytes`, {
    data: { max_body_bytes: maxBodyBytes },
  });
}

/**
 * Request bodies are read as they arrive: a Content-Encoding other than `identity` is refused
 * with 400 rather than guessed at, so both backends answer alike (body-parser would inflate gzip,
 * deflate and br; node's reader would not) and no compressed body can expand past `maxBodyBytes`.
 */
export function unsupportedEncoding(req: IncomingMessage): InvalidRequestError | undefined {
  const header = req.headers['content-encoding'];
  if (header === undefined) return undefined;
  const encoding = header.trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return undefined;
  return new InvalidRequestError(`Unsupported Content-Encoding: ${header}; send the body uncompressed`, {
    data: { content_encoding: header },
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
  const encodingError = unsupportedEncoding(req);
  if (encodingError) {
    done(encodingError);
    return;
  }
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
 * How much of a refused request's unread body is drained before answering, as a multiple of
 * `maxBodyBytes`.
 */
const LINGER_FACTOR = 8;

/**
 * Answers a refused request (401, 404, 413, …) only after its unread body has been drained.
 * Answering first is a race the client can lose: when the connection closes after the response
 * (the client sent `Connection: close`, or we do), a client still uploading gets a reset, and the
 * reset can discard the answer it had not read yet. So up to {@link LINGER_FACTOR} times the limit
 * is read and dropped first; a client that declares or sends more gets the answer at once with
 * `Connection: close`, and loses its socket once the answer is out.
 */
export function answerAfterDrain(
  req: IncomingMessage,
  res: ServerResponse,
  maxBodyBytes: number,
  answer: () => void,
): void {
  if (req.complete) {
    answer();
    return;
  }
  const lingerBytes = maxBodyBytes * LINGER_FACTOR;
  let settled = false;
  const cut = (): void => {
    settled = true;
    res.setHeader('connection', 'close');
    answer();
    if (res.writableFinished) req.socket.destroy();
    else res.once('finish', () => req.socket.destroy());
  };
  req.on('error', () => undefined);
  const header = req.headers['content-length'];
  if (header !== undefined && Number(header) > lingerBytes) {
    req.resume();
    cut();
    return;
  }
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (!settled && drained > lingerBytes) cut();
  });
  req.once('end', () => {
    if (settled) return;
    settled = true;
    answer();
  });
  // A client that gives up mid-body is owed nothing.
  req.once('close', () => {
    settled = true;
  });
  req.resume();
}
