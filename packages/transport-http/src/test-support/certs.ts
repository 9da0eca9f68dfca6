import selfsigned from 'selfsigned';

export interface TestPki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A client certificate from a CA the server does not trust. */
  strangerCert: string;
  strangerKey: string;
}

let cached: Promise<TestPki> | undefined;

/** A throwaway PKI made at test time (EC keys, a few ms each); nothing is written to disk. */
export function testPki(): Promise<TestPki> {
  cached ??= build();
  return cached;
}

async function build(): Promise<TestPki> {
  const caExtensions = [
    { name: 'basicConstraints' as const, cA: true, critical: true },
    { name: 'keyUsage' as const, keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
  ];
  const ca = await selfsigned.generate([{ name: 'commonName', value: 'agent-tasks test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: caExtensions,
  });
  const stranger = await selfsigned.generate([{ name: 'commonName', value: 'stranger CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: caExtensions,
  });
  const server = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const clientExtensions = [
    { name: 'basicConstraints' as const, cA: false },
    { name: 'keyUsage' as const, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage' as const, clientAuth: true },
  ];
  const client = await selfsigned.generate([{ name: 'commonName', value: 'test-client' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: clientExtensions,
  });
  const strangerClient = await selfsigned.generate([{ name: 'commonName', value: 'stranger-client' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: stranger.private, cert: stranger.cert },
    extensions: clientExtensions,
  });
  return {
    ca: ca.cert,
    serverCert: server.cert,
    serverKey: server.private,
    clientCert: client.cert,
    clientKey: client.private,
    strangerCert: strangerClient.cert,
    strangerKey: strangerClient.private,
  };
}
