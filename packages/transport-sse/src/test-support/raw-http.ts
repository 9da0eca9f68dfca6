/** A bare node:http client for checking exact wire shapes (no pooling, so no socket outlives a test). */
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'POST', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A JSON-RPC 2.0 request body. */
export function rpcBody(method: string, params: unknown, id: string | number | null = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

export interface ParsedFrame {
  id?: string;
  event?: string;
  data?: string;
}

/** Splits an event-stream body into frames and comment lines, keeping the exact field lines. */
export function splitStream(text: string): { frames: ParsedFrame[]; comments: string[] } {
  const frames: ParsedFrame[] = [];
  const comments: string[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    const frame: ParsedFrame = {};
    let isFrame = false;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        comments.push(line);
        continue;
      }
      const colon = line.indexOf(': ');
      const field = line.slice(0, colon) as keyof ParsedFrame;
      frame[field] = line.slice(colon + 2);
      isFrame = true;
    }
    if (isFrame) frames.push(frame);
  }
  return { frames, comments };
}
