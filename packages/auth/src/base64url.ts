const BASE64URL = /^[A-Za-z0-9_-]*$/;

export function base64UrlEncode(input: string | Uint8Array): string {
  return Buffer.from(input).toString('base64url');
}

/**
 * Strict, canonical base64url decoding (RFC 7515 §2: no padding, no `+`/`/`, no whitespace).
 * Non-canonical trailing bits are refused too, so one token has exactly one spelling.
 * Returns undefined for anything else; Node's own decoder would silently skip bad characters.
 */
export function base64UrlDecode(segment: string): Buffer | undefined {
  if (!BASE64URL.test(segment) || segment.length % 4 === 1) return undefined;
  const bytes = Buffer.from(segment, 'base64url');
  return bytes.toString('base64url') === segment ? bytes : undefined;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 text of the bytes, or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}
