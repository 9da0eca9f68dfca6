// The trace context on the gRPC wire: the client writes it as call metadata.
import { describeTraceContext } from '@agent/test-support';
import { GRPCTransport } from './grpc-transport.js';

describeTraceContext('GRPCTransport', {
  server: () => new GRPCTransport({ url: 'grpc://127.0.0.1:0' }),
  client: (url) => new GRPCTransport({ url }),
});
