/** Test-time certificates: a CA, a server certificate for 127.0.0.1/localhost and a client certificate. */
import { generate } from 'selfsigned';

export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second, unrelated CA: certificates it signs must be refused. */
  otherCa: string;
  otherClientCert: string;
  otherClientKey: string;
}

async function authority(name: string): Promise<{ cert: string; key: string }> {
  const ca = await generate([{ name: 'commonName', value: name }], {
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
  commonName: string,
  ca: { cert: string; key: string },
  usage: { serverAuth?: boolean; clientAuth?: boolean },
): Promise<{ cert: string; key: string }> {
  const result = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', ...usage },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: result.cert, key: result.private };
}

export async function createTestCertificates(): Promise<TestCertificates> {
  const ca = await authority('SSE Test CA');
  const other = await authority('Unrelated CA');
  const server = await leaf('localhost', ca, { serverAuth: true });
  const client = await leaf('test-client', ca, { clientAuth: true });
  const stranger = await leaf('stranger', other, { clientAuth: true });
  return {
    ca: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    clientCert: client.cert,
    clientKey: client.key,
    otherCa: other.cert,
    otherClientCert: stranger.cert,
    otherClientKey: stranger.key,
  };
}
