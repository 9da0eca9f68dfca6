import { describeTenantOption } from '@agent/test-support';
import { SSETransport } from './sse-transport.js';
import type { SSETransportOptions } from './options.js';

describeTenantOption('SSETransport', {
  server: () => new SSETransport({ url: 'http://127.0.0.1:0' }),
  client: (url, options) => new SSETransport({ url, ...options } as SSETransportOptions),
});
