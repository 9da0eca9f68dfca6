/**
 * WebSocket (RFC 6455) by hand over a TCP socket: the handshake, a frame writer that can break
 * every rule (reserved bits and opcodes, unmasked frames, lying lengths, fragments out of order)
 * and a reader for the server's frames.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface FrameSpec {
  fin?: boolean;
  /** RSV1..3 as a 3-bit number. */
  rsv?: number;
  opcode: number;
  payload: Buffer;
  /** Clients must mask; `false` sends the frame unmasked. */
  masked?: boolean;
  /** A length field that is not the payload's (the payload bytes still follow as given). */
  declaredLength?: bigint;
}

export function encodeFrame(spec: FrameSpec): Buffer {
  const fin = spec.fin ?? true;
  const masked = spec.masked ?? true;
  const length = spec.declaredLength ?? BigInt(spec.payload.length);
  const first = (fin ? 0x80 : 0) | (((spec.rsv ?? 0) & 7) << 4) | (spec.opcode & 0x0f);
  let header: Buffer;
  if (length < 126n) {
    header = Buffer.from([first, (masked ? 0x80 : 0) | Number(length)]);
  } else if (length < 65536n) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 126;
    header.writeUInt16BE(Number(length), 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(length & 0xffffffffffffffffn, 2);
  }
  if (!masked) return Buffer.concat([header, spec.payload]);
  // A big payload goes out under the all-zero key (valid, and it spares masking megabytes in JS).
  if (spec.payload.length > 65_536) return Buffer.concat([header, Buffer.alloc(4), spec.payload]);
  const key = randomBytes(4);
  const body = Buffer.alloc(spec.payload.length);
  for (let i = 0; i < body.length; i++) body[i] = spec.payload[i]! ^ key[i & 3]!;
  return Buffer.concat([header, key, body]);
}

export interface ServerFrame {
  opcode: number;
  fin: boolean;
  payload: Buffer;
}

/** Reads server frames out of a byte stream; `push` returns the frames completed so far. */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): ServerFrame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: ServerFrame[] = [];
    for (;;) {
      if (this.buffer.length < 2) break;
      const b0 = this.buffer[0]!;
      const b1 = this.buffer[1]!;
      let length = b1 & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) break;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) break;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (b1 & 0x80) offset += 4; // a server must not mask, but read past a key if it did
      if (this.buffer.length < offset + length) break;
      frames.push({
        opcode: b0 & 0x0f,
        fin: (b0 & 0x80) !== 0,
        payload: this.buffer.subarray(offset, offset + length),
      });
      this.buffer = this.buffer.subarray(offset + length);
    }
    return frames;
  }
}

export interface Handshake {
  socket: Socket;
  status: number;
  /** The raw response head (for the report). */
  head: string;
  /** Bytes that followed the handshake response (early frames). */
  rest: Buffer;
}

/**
 * Sends an upgrade request (`extraHeaders` added, `twist` for malformed handshakes) and resolves once
 * the response head arrived; `status` is 0 when the server closed first.
 */
export function handshake(
  host: string,
  port: number,
  path: string,
  extraHeaders: Array<[string, string]>,
  timeoutMs: number,
  omit: ReadonlySet<string> = new Set(),
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.setNoDelay(true);
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('handshake timed out'));
    }, timeoutMs);
    const headers: Array<[string, string]> = [
      ['Host', `${host}:${port}`],
      ['Upgrade', 'websocket'],
      ['Connection', 'Upgrade'],
      ['Sec-WebSocket-Key', randomBytes(16).toString('base64')],
      ['Sec-WebSocket-Version', '13'],
    ];
    const all = [...headers.filter(([name]) => !omit.has(name.toLowerCase())), ...extraHeaders];
    socket.on('connect', () => {
      socket.write(`GET ${path} HTTP/1.1\r\n${all.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`, 'latin1');
    });
    const onData = (chunk: Buffer): void => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      const head = data.subarray(0, end).toString('latin1');
      const match = /^HTTP\/\d\.\d (\d{3})/.exec(head);
      resolve({ socket, status: match ? Number(match[1]) : 0, head, rest: data.subarray(end + 4) });
    };
    const onClose = (): void => {
      clearTimeout(timer);
      resolve({ socket, status: 0, head: data.toString('latin1'), rest: Buffer.alloc(0) });
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.on('error', () => undefined);
  });
}
