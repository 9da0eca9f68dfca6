import { describeTenantOption } from '@agent/test-support';
import { HTTPTransport } from './http-transport.js';
import type { HTTPTransportOptions } from './options.js';

describeTenantOption('HTTPTransport', {
  server: () => new HTTPTransport({ url: 'http://127.0.0.1:0' }),
  client: (url, options) => new HTTPTransport({ url, ...options } as HTTPTransportOptions),
});
