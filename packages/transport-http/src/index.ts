// Public API of @agent/transport-http: anything exported here is public.
export { HTTPTransport } from './http-transport.js';
export { DEFAULT_MAX_RESPONSE_BYTES, type BackendName, type HTTPTransportOptions } from './options.js';
export type { BackendFactory, BackendOptions, HttpBackend, HttpEndpoint } from './backend.js';
export {
  jsonEndpoint,
  type HttpRouteContext,
  type HttpRoutes,
  type JsonEndpointAnswer,
  type JsonEndpointInput,
  type JsonEndpointSpec,
} from './json-endpoint.js';
export { exchangeEndpoint, type ExchangeEndpointSpec, type ExchangeInput } from './exchange-endpoint.js';
export { approvalRoutes, ApprovalRoutes, type ApprovalRoutesOptions } from './approval-routes.js';
export { NodeBackend } from './node-backend.js';
export { ExpressBackend, type ExpressBackendOptions } from './express-backend.js';
export type { HttpResponseError } from './client.js';
export type {
  JsonSchema,
  OpenApiContext,
  OpenApiContribution,
  OpenApiDocument,
  OpenApiHeader,
  OpenApiMediaType,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPathItem,
  OpenApiPaths,
  OpenApiReference,
  OpenApiRequestBody,
  OpenApiResponse,
  OpenApiSecurityRequirement,
  WireSchemaName,
} from './openapi-types.js';
// The `cors` option's shape lives with the host that applies it (the SSE transport takes the same).
export type { CorsOptions } from '@agent/server/node';
// The shared defaults, for code that imported them from here.
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_STOP_GRACE_MS, DEFAULT_TIMEOUT_MS } from '@agent/server';
