import { generate } from 'selfsigned';

export interface TestPki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Another CA: a client trusting only it must refuse the server. */
  strangerCa: string;
  /** A client certificate from that other CA: the server must refuse it. */
  strangerCert: string;
  strangerKey: string;
}

async function authority(cn: string): Promise<{ cert: string; key: string }> {
  const ca = await generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: ca.cert, key: ca.private };
}

async function leaf(
  cn: string,
  issuer: { cert: string; key: string },
  usage: 'server' | 'client',
): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: issuer,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: usage === 'server', clientAuth: usage === 'client' },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A throwaway CA with server and client leaves, generated at test time (never committed). */
export async function createTestPki(): Promise<TestPki> {
  const ca = await authority('agent-tasks test CA');
  const other = await authority('someone else');
  const server = await leaf('localhost', ca, 'server');
  const client = await leaf('test-client', ca, 'client');
  const stranger = await leaf('stranger', other, 'client');
  return {
    ca: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    clientCert: client.cert,
    clientKey: client.key,
    strangerCa: other.cert,
    strangerCert: stranger.cert,
    strangerKey: stranger.key,
  };
}
