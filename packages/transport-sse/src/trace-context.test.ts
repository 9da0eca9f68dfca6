// The trace context on the SSE JSON-RPC wire: the client writes it as request headers.
import { describeTraceContext } from '@agent/test-support';
import { SSETransport } from './sse-transport.js';

describeTraceContext('SSETransport', {
  server: () => new SSETransport({ url: 'http://127.0.0.1:0' }),
  client: (url) => new SSETransport({ url }),
});
