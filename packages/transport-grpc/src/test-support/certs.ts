import selfsigned from 'selfsigned';

export interface TestPki {
  ca: string;
  server: { cert: string; key: string };
  client: { cert: string; key: string };
  /** A client certificate from a CA the server does not trust. */
  rogueClient: { cert: string; key: string };
}

type Extensions = NonNullable<Parameters<typeof selfsigned.generate>[1]>['extensions'];

async function authority(cn: string): Promise<{ cert: string; key: string }> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

async function leaf(
  cn: string,
  ca: { cert: string; key: string },
  extensions: Extensions,
): Promise<{ cert: string; key: string }> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: cn }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions,
    ca,
  });
  return { cert: pems.cert, key: pems.private };
}

/** A throwaway CA with a server (localhost, 127.0.0.1) and a client certificate, made at test time. */
export async function createTestPki(): Promise<TestPki> {
  const ca = await authority('agent-tasks test CA');
  const rogueCa = await authority('rogue CA');
  const clientExtensions: Extensions = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', clientAuth: true },
  ];
  return {
    ca: ca.cert,
    server: await leaf('localhost', ca, [
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
    ]),
    client: await leaf('test-client', ca, clientExtensions),
    rogueClient: await leaf('rogue-client', rogueCa, clientExtensions),
  };
}
