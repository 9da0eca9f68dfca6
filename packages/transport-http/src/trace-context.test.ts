// The trace context on the HTTP wire: the client writes it as request headers.
import { describeTraceContext } from '@agent/test-support';
import { HTTPTransport } from './http-transport.js';

describeTraceContext('HTTPTransport', {
  server: () => new HTTPTransport({ url: 'http://127.0.0.1:0' }),
  client: (url) => new HTTPTransport({ url }),
});
