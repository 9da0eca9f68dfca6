// Public API of @agent/auth: anything exported here is public.
export { SecurityContext, type SecurityContextInit, type SecurityContextDict } from './security-context.js';
export {
  SecurityScheme,
  AUTH_TYPES,
  HTTP_AUTH_SCHEMES,
  HTTP_SCHEME_NAMES,
  type AuthType,
  type HttpAuthScheme,
  type SecuritySchemeInit,
} from './security-scheme.js';
export { Authenticator } from './authenticator.js';
export {
  extractCredentials,
  CREDENTIAL_QUERY_PARAMS,
  stripAuthPrefix,
  type HeaderSource,
  type QuerySource,
} from './extract-credentials.js';
export {
  authenticateRequest,
  isPublicPath,
  PUBLIC_PATHS,
  type AuthenticateRequestOptions,
} from './authenticate-request.js';
export { buildAuthHeaders, buildAuthMetadata } from './auth-headers.js';
export { LazyCredentials } from './lazy-credentials.js';
export { ClientCredentials, clientAuthError } from './client-credentials.js';
export { constantTimeEquals } from './constant-time.js';
export { APIKeyAuth, type APIKeyAuthOptions } from './api-key-auth.js';
export {
  BearerTokenAuth,
  JWT_ALGORITHMS,
  type BearerTokenAuthOptions,
  type JwtAlgorithm,
} from './bearer-token-auth.js';
export { BasicAuth, decodeBasicCredential, type BasicAuthOptions } from './basic-auth.js';
export {
  OAuth2DelegationAuth,
  TOKEN_EXCHANGE_GRANT_TYPE,
  ACCESS_TOKEN_TYPE,
  DEFAULT_TOKEN_EXCHANGE_LIMIT,
  TOKEN_EXCHANGE_LIMIT_NAME,
  type OAuth2DelegationAuthOptions,
  type OAuth2AuthenticateOptions,
} from './oauth2-delegation-auth.js';
export {
  toA2ASecuritySchemes,
  type A2ASecurityScheme,
  type A2ASecurityRequirement,
  type A2ASecurityDeclaration,
  type SecuritySchemeSource,
  type ToA2ASecurityOptions,
} from './a2a-security.js';
