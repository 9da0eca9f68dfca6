import { ValidationError } from '@agent/core';
import {
  checkWebhookUrl,
  guardedLookup,
  isBlockedAddress,
  resolveWithDns,
  type ResolveHost,
} from './ssrf.js';

const refusedAddresses = [
  '127.0.0.1',
  '127.255.255.254',
  '10.0.0.1',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '224.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fe80::1%eth0',
  'ff02::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.1.2.3',
  '::ffff:169.254.169.254',
  '64:ff9b::a9fe:a9fe',
  '2002:7f00:1::',
  '::127.0.0.1',
  'not-an-address',
];

const publicAddresses = [
  '93.184.216.34',
  '8.8.8.8',
  '172.32.0.1',
  '100.128.0.1',
  '2606:4700::1111',
  '::ffff:8.8.8.8',
];

describe('isBlockedAddress', () => {
  it.each(refusedAddresses)('refuses %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(publicAddresses)('allows %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });
});

const publicResolver: ResolveHost = () => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);

async function refusal(url: string, resolve: ResolveHost = resolveWithDns): Promise<ValidationError> {
  try {
    await checkWebhookUrl(url, { allowPrivateNetworks: false, resolve });
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('checkWebhookUrl', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:8080/hook',
    'http://10.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://2130706433/hook', // 127.0.0.1 as one number
    'http://0x7f.1/hook',
  ])('refuses %s with a ValidationError at /url', async (url) => {
    const error = await refusal(url);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.data).toEqual({
      errors: [{ pointer: '/url', message: expect.stringMatching(/non-public/) }],
    });
  });

  it('refuses a host name any of whose addresses is private', async () => {
    const mixed: ResolveHost = () =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ]);
    await expect(refusal('https://hooks.example.com/x', mixed)).resolves.toBeInstanceOf(ValidationError);
  });

  it.each(['ftp://example.com/hook', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://example.com/'])(
    'refuses the non-http scheme of %s',
    async (url) => {
      const error = await refusal(url, publicResolver);
      expect(error.data).toEqual({ errors: [{ pointer: '/url', message: 'must be an http or https URL' }] });
    },
  );

  it('refuses what is not a URL, and credentials in the URL', async () => {
    expect((await refusal('/relative', publicResolver)).message).toMatch(/not an absolute URL/);
    expect((await refusal('https://user:secret@hooks.example.com/', publicResolver)).message).toMatch(
      /must not carry credentials/,
    );
  });

  it('refuses a host name that does not resolve', async () => {
    const failing: ResolveHost = () =>
      Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }));
    expect((await refusal('https://nowhere.invalid/', failing)).message).toMatch(/does not resolve/);
  });

  it('accepts a public host, and private ones when allowed', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', {
        allowPrivateNetworks: false,
        resolve: publicResolver,
      }),
    ).resolves.toBeInstanceOf(URL);
    await expect(
      checkWebhookUrl('http://127.0.0.1:9/x', { allowPrivateNetworks: true, resolve: publicResolver }),
    ).resolves.toBeInstanceOf(URL);
    // The scheme rule holds even then.
    await expect(
      checkWebhookUrl('file:///etc/passwd', { allowPrivateNetworks: true, resolve: publicResolver }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('uses the given pointer', async () => {
    await expect(
      checkWebhookUrl('http://10.0.0.1/', {
        allowPrivateNetworks: false,
        resolve: publicResolver,
        pointer: '/a/url',
      }),
    ).rejects.toMatchObject({ data: { errors: [{ pointer: '/a/url' }] } });
  });
});

describe('guardedLookup', () => {
  it('hands over the checked addresses', async () => {
    const lookup = guardedLookup(() =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1111', family: 6 },
      ]),
    );
    await expect(lookup('hooks.example.com')).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ]);
  });

  it('refuses when any address is not public', async () => {
    const lookup = guardedLookup(() =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '::1', family: 6 },
      ]),
    );
    await expect(lookup('hooks.example.com')).rejects.toMatchObject({ code: 'ERR_PUSH_ADDRESS_REFUSED' });
  });
});
