/**
 * HTTP/1.1 over a bare TCP socket: the request goes out byte for byte as generated (node:http
 * would refuse or repair most of what the fuzzer sends), and the answer is read with just enough
 * parsing to know where it ends.
 */
import { connect, type Socket } from 'node:net';

export interface RawHttpAnswer {
  /** 0 when no status line arrived. */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The answer was complete (framing satisfied) or the server closed the connection after it. */
  complete: boolean;
  /** The server closed (FIN or reset) before a complete answer. */
  closedEarly: boolean;
  /** Neither an answer nor a close within the limit. */
  timedOut: boolean;
  elapsedMs: number;
  error?: string;
}

export interface RawHttpRequest {
  /** The whole request: request line, headers, blank line and body. */
  bytes: Buffer;
  /** The request is deliberately incomplete: half-close the socket after sending it. */
  incomplete?: boolean;
  /** HEAD requests have no response body. */
  head?: boolean;
}

/** How a response whose head was read ends: a last chunk, a byte count, or the close. */
type Framing = { kind: 'chunked' } | { kind: 'length'; end: number } | { kind: 'close' };

/** What the parser found so far in the received bytes. */
interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  done: boolean;
  /** How the body ends; `length.end` counts from the start of the data parsed. */
  framing: Framing;
}

function findHeaderEnd(buffer: Buffer, from: number): number {
  return buffer.indexOf('\r\n\r\n', from);
}

/** Parses one response (skipping 1xx interim ones) from `data`; `done` once its framing is met. */
function parse(data: Buffer, head: boolean, closed: boolean): Parsed | undefined {
  let offset = 0;
  for (;;) {
    const end = findHeaderEnd(data, offset);
    if (end < 0) return undefined;
    const lines = data.subarray(offset, end).toString('latin1').split('\r\n');
    const statusMatch = /^HTTP\/\d\.\d (\d{3})/.exec(lines[0] ?? '');
    const status = statusMatch ? Number(statusMatch[1]) : 0;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      offset = bodyStart;
      continue;
    }
    const rest = data.subarray(bodyStart);
    if (head || status === 204 || status === 304 || status === 101) {
      return { status, headers, body: Buffer.alloc(0), done: true, framing: { kind: 'close' } };
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const framing: Framing = { kind: 'chunked' };
      const chunks: Buffer[] = [];
      let at = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        if (lineEnd < 0) return { status, headers, body: Buffer.concat(chunks), done: closed, framing };
        const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size))
          return { status, headers, body: Buffer.concat(chunks), done: true, framing };
        if (size === 0) return { status, headers, body: Buffer.concat(chunks), done: true, framing };
        if (rest.length < lineEnd + 2 + size + 2) {
          chunks.push(rest.subarray(lineEnd + 2, Math.min(rest.length, lineEnd + 2 + size)));
          return { status, headers, body: Buffer.concat(chunks), done: closed, framing };
        }
        chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = headers['content-length'];
    if (length !== undefined && /^\d+$/.test(length)) {
      const n = Number(length);
      const framing: Framing = { kind: 'length', end: bodyStart + n };
      return { status, headers, body: rest.subarray(0, n), done: rest.length >= n || closed, framing };
    }
    return { status, headers, body: rest, done: closed, framing: { kind: 'close' } };
  }
}

/** False when the bytes received cannot have completed the response yet. */
function framingMayBeMet(framing: Framing, received: number, tail: Buffer): boolean {
  if (framing.kind === 'length') return received >= framing.end;
  // The parser ends a chunked body at a size line (the last chunk's, or one it cannot read): only
  // bytes that end a line can complete one.
  if (framing.kind === 'chunked') return tail.toString('latin1').endsWith('\r\n');
  return false;
}

/** Sends `request` to `host:port` and reads one answer, or the close, within `timeoutMs`. */
export function sendRawHttp(
  host: string,
  port: number,
  request: RawHttpRequest,
  timeoutMs: number,
): Promise<RawHttpAnswer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let closed = false;
    let error: string | undefined;
    let socket: Socket | undefined = undefined;
    const finish = (timedOut: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const data = Buffer.concat(chunks);
      const parsed = parse(data, request.head === true, true);
      socket?.destroy();
      resolve({
        status: parsed?.status ?? 0,
        headers: parsed?.headers ?? {},
        body: parsed?.body ?? data,
        complete: parsed !== undefined && !timedOut,
        closedEarly: parsed === undefined && closed,
        timedOut,
        elapsedMs: Date.now() - started,
        error,
      });
    };
    socket = connect({ host, port }, () => {
      socket!.write(request.bytes);
      if (request.incomplete) {
        // Give the server a moment with the partial request, then end our side of the connection.
        setTimeout(() => socket!.end(), 100).unref();
      }
    });
    socket.setNoDelay(true);
    // Once the head is read, only a chunk that may meet the framing is worth parsing all over
    // again: parsing everything received at every chunk made a long answer (a stream echoing
    // 3 MiB) quadratic, seconds of the fuzzer's own time counted against the server's hang limit.
    let framing: Framing | undefined;
    let received = 0;
    let tail: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      tail = chunk.length >= 2 ? chunk.subarray(-2) : Buffer.concat([tail, chunk]).subarray(-2);
      if (framing !== undefined && !framingMayBeMet(framing, received, tail)) return;
      const parsed = parse(Buffer.concat(chunks), request.head === true, false);
      if (parsed?.done) finish(false);
      else if (parsed) framing = parsed.framing;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => {
      closed = true;
      finish(false);
    });
    const timer = setTimeout(() => finish(true), timeoutMs);
  });
}
