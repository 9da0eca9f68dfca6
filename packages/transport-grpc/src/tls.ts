import { ValueError, type TlsOptions } from '@agent/core';
import { credentials, ServerCredentials, type ChannelCredentials } from '@grpc/grpc-js';

type Pem = string | Buffer | Uint8Array;

// Descriptors cross a structured clone, which turns Buffers into plain Uint8Arrays.
function toBuffer(value: Pem): Buffer {
  return typeof value === 'string'
    ? Buffer.from(value)
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function caBuffer(ca: TlsOptions['ca']): Buffer | null {
  if (ca === undefined) return null;
  const list = Array.isArray(ca) ? ca : [ca];
  if (list.length === 0) return null;
  return Buffer.concat(list.flatMap((item) => [toBuffer(item), Buffer.from('\n')]));
}

/**
 * Server credentials: insecure without `tls` (a `grpc://` URL), else its cert and key, plus `ca` for
 * mutual TLS. The transport base has already checked that a `grpcs://` server has what it needs.
 */
export function serverCredentials(tls: TlsOptions | undefined): ServerCredentials {
  if (!tls?.cert || !tls.key) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    caBuffer(tls.ca),
    [{ private_key: toBuffer(tls.key), cert_chain: toBuffer(tls.cert) }],
    tls.requestClientCert === true,
  );
}

/** Channel credentials: insecure for `grpc://`; for `grpcs://` the `tls` CA, and cert/key for mutual TLS. */
export function channelCredentials(secure: boolean, tls: TlsOptions | undefined): ChannelCredentials {
  if (!secure) return credentials.createInsecure();
  if ((tls?.cert === undefined) !== (tls?.key === undefined)) {
    throw new ValueError('tls.cert and tls.key must be given together for a client certificate');
  }
  const verify =
    tls?.rejectUnauthorized === false
      ? { rejectUnauthorized: false, checkServerIdentity: () => undefined }
      : {};
  return credentials.createSsl(
    caBuffer(tls?.ca),
    tls?.key === undefined ? null : toBuffer(tls.key),
    tls?.cert === undefined ? null : toBuffer(tls.cert),
    verify,
  );
}
