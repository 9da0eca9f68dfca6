/** Wire helpers for the SSE tests: the raw HTTP client with SSE defaults, JSON-RPC bodies, frame parsing. */
import {
  rawRequest as sharedRawRequest,
  type RawRequestOptions,
  type RawResponse,
} from '@agent/test-support';

export type { RawResponse };

/** The shared raw client with this transport's defaults: every route is a POST, bodies go untyped. */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  return sharedRawRequest(url, { method: 'POST', contentType: false, ...options });
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
