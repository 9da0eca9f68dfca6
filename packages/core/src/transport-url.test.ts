import { ValueError } from './index.js';
import { normalizeHeaders, parseTransportUrl } from './internal.js';

describe('parseTransportUrl', () => {
  it('reads scheme, host, port and security', () => {
    expect(parseTransportUrl('http://127.0.0.1:8080')).toEqual({
      scheme: 'http',
      host: '127.0.0.1',
      port: 8080,
      secure: false,
      basePath: '',
    });
    expect(parseTransportUrl('wss://localhost/agent/')).toMatchObject({
      port: 443,
      secure: true,
      basePath: '/agent',
    });
    expect(parseTransportUrl('grpc://[::1]:0')).toMatchObject({ host: '::1', port: 0, secure: false });
    expect(parseTransportUrl('grpcs://h')).toMatchObject({ port: 443, secure: true });
  });
  it('rejects bad URLs with ValueError', () => {
    expect(() => parseTransportUrl('not a url')).toThrow(ValueError);
    expect(() => parseTransportUrl('ftp://x')).toThrow(/Unsupported URL scheme/);
  });
  it('normalizes headers', () => {
    expect(normalizeHeaders({ 'X-Api-Key': 'k', Accept: ['a', 'b'], gone: undefined })).toEqual({
      'x-api-key': 'k',
      accept: 'a, b',
    });
  });
});
