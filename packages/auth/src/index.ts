// Public API of @agent/auth: anything exported here is public.
export { SecurityContext, type SecurityContextInit, type SecurityContextDict } from './security-context.js';
export {
  SecurityScheme,
  AUTH_TYPES,
  HTTP_AUTH_SCHEMES,
  type AuthType,
  type HttpAuthScheme,
  type SecuritySchemeInit,
} from './security-scheme.js';
export { Authenticator } from './authenticator.js';
export { extractCredentials, stripAuthPrefix, type HeaderSource, type QuerySource } from './extract-credentials.js';
export { authenticateRequest, isPublicPath, PUBLIC_PATHS, type AuthenticateRequestOptions } from './authenticate-request.js';
export { buildAuthHeaders, buildAuthMetadata } from './auth-headers.js';
export { LazyCredentials } from './lazy-credentials.js';
export { constantTimeEquals } from './constant-time.js';
export { APIKeyAuth, type APIKeyAuthOptions } from './api-key-auth.js';
