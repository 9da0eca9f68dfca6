/**
 * Bytes on a bare `node:net` socket, for requests no HTTP client would send (a malformed request
 * line, contradictory framing, absolute-form targets, a path with extra slashes). Resolves with
 * everything the server wrote once it closes the connection; every request here asks it to.
 */
import { connect } from 'node:net';

export interface SocketAnswer {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export function socketRequest(url: string, bytes: string): Promise<SocketAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer arrived still ends in 'close', with the answer read.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = split === -1 ? raw : raw.slice(0, split);
      const text = split === -1 ? '' : raw.slice(split + 4);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, text, json });
    });
    socket.write(bytes);
  });
}

/** A whole request with `Connection: close`, a `Host` and, with a body, its `Content-Length`. */
export function requestBytes(method: string, target: string, body?: string, extra = ''): string {
  const length =
    body === undefined
      ? ''
      : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}${length}Connection: close\r\n\r\n${body ?? ''}`;
}
