/**
 * The document's security schemes, from the authenticator the transport serves behind. The native
 * scheme is translated once, by `toA2ASecuritySchemes` of `@agent/auth` (A2A's schemes are
 * OpenAPI's, wrapped); here each is only unwrapped into OpenAPI's form.
 */
import { toA2ASecuritySchemes, type A2ASecurityScheme, type Authenticator } from '@agent/auth';
import type { JsonSchema, OpenApiSecurityRequirement } from './openapi-types.js';

/** The flows OpenAPI 3.1 knows (A2A adds `deviceCode`, which it cannot express). */
const OPENAPI_FLOWS = ['implicit', 'password', 'clientCredentials', 'authorizationCode'];

export interface DocumentSecurity {
  schemes: Record<string, JsonSchema>;
  /** Any one scheme suffices, as on the card. */
  requirements: OpenApiSecurityRequirement[];
}

/** The schemes and requirements of `authenticator`; undefined without one or when none can be expressed. */
export function documentSecurity(authenticator: Authenticator | undefined): DocumentSecurity | undefined {
  if (!authenticator) return undefined;
  const { securitySchemes, securityRequirements } = toA2ASecuritySchemes(authenticator.securityScheme);
  const schemes: Record<string, JsonSchema> = {};
  for (const [name, scheme] of Object.entries(securitySchemes)) {
    const unwrapped = toOpenApi(scheme);
    if (unwrapped) schemes[name] = unwrapped;
  }
  const requirements = securityRequirements
    .filter((requirement) => Object.keys(requirement.schemes).every((name) => name in schemes))
    .map((requirement) =>
      Object.fromEntries(Object.entries(requirement.schemes).map(([name, { list }]) => [name, list])),
    );
  return requirements.length > 0 ? { schemes, requirements } : undefined;
}

function toOpenApi(scheme: A2ASecurityScheme): JsonSchema | undefined {
  const described = (description: string | undefined): { description?: string } =>
    description ? { description } : {};
  if ('apiKeySecurityScheme' in scheme) {
    const { location, name, description } = scheme.apiKeySecurityScheme;
    return { type: 'apiKey', in: location, name, ...described(description) };
  }
  if ('httpAuthSecurityScheme' in scheme) {
    const { scheme: name, bearerFormat, description } = scheme.httpAuthSecurityScheme;
    return {
      type: 'http',
      scheme: name.toLowerCase(),
      ...(bearerFormat ? { bearerFormat } : {}),
      ...described(description),
    };
  }
  if ('oauth2SecurityScheme' in scheme) {
    const { flows, description } = scheme.oauth2SecurityScheme;
    const known = Object.entries(flows).filter(([flow]) => OPENAPI_FLOWS.includes(flow));
    if (known.length === 0) return undefined;
    return { type: 'oauth2', flows: Object.fromEntries(known), ...described(description) };
  }
  if ('openIdConnectSecurityScheme' in scheme) {
    const { openIdConnectUrl, description } = scheme.openIdConnectSecurityScheme;
    return { type: 'openIdConnect', openIdConnectUrl, ...described(description) };
  }
  return { type: 'mutualTLS', ...described(scheme.mtlsSecurityScheme.description) };
}
