import { ValueError } from './index.js';
import { httpEndpointUrl, normalizeHeaders, parseTransportUrl } from './internal.js';

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

describe('httpEndpointUrl', () => {
  it('joins a route below the base path, keeping and adding query parameters', () => {
    expect(httpEndpointUrl('T', 'http://h:1/agent/', '/tasks/').href).toBe('http://h:1/agent/tasks/');
    expect(httpEndpointUrl('T', 'https://h/a?x=1', '/rpc', { y: '2' }).href).toBe('https://h/a/rpc?x=1&y=2');
  });
  it('refuses a URL that is not http(s), naming the client', () => {
    expect(() => httpEndpointUrl('SSETransport', 'ws://h:1', '/rpc')).toThrow(
      'SSETransport sends to http and https URLs only, got ws://h:1',
    );
    expect(() => httpEndpointUrl('T', 'not a url', '/rpc')).toThrow(ValueError);
  });
});
