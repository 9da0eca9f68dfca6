// The HTTP client reads a proxy's Retry-After into data.retry_after_ms.
import { CLIENT_OPERATIONS } from '@agent/core';
import { describeRetryAfterHeader } from '@agent/test-support';
import { HTTPTransport } from './http-transport.js';

describeRetryAfterHeader('HTTP client', {
  client: () => new HTTPTransport({ url: 'http://127.0.0.1:0' }),
  call: (client, url) => client.send(CLIENT_OPERATIONS.get_card, url),
  keepsStatus: true,
});
