// Public API of @agent/transport-http: anything exported here is public.
export { HTTPTransport } from './http-transport.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_STOP_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type BackendName,
  type HTTPTransportOptions,
} from './options.js';
export type {
  BackendFactory,
  BackendOptions,
  EndpointRequest,
  EndpointResponse,
  HttpBackend,
  HttpEndpoint,
  RequestHead,
} from './backend.js';
export { NodeBackend } from './node-backend.js';
export { ExpressBackend, type ExpressBackendOptions } from './express-backend.js';
export type { HttpResponseError } from './http-client.js';
