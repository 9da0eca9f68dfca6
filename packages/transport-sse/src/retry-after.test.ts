// The SSE client reads a proxy's Retry-After into data.retry_after_ms.
import { CLIENT_OPERATIONS } from '@agent/core';
import { describeRetryAfterHeader } from '@agent/test-support';
import { SSETransport } from './sse-transport.js';

describeRetryAfterHeader('SSE client', {
  client: () => new SSETransport({ url: 'http://127.0.0.1:0' }),
  call: (client, url) => client.send(CLIENT_OPERATIONS.get_task, url, 'task-1'),
});
