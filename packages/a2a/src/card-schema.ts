/**
 * The A2A 1.0 AgentCard as a JSON Schema (ProtoJSON form: lowerCamelCase names, REQUIRED fields
 * required, every `oneof` as exactly one member key), and the validator the registry and the tests
 * use. Unknown fields are allowed, as ProtoJSON readers ignore them; a malformed known field is not.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { ValidationError, toValidationIssues } from '@agent/core';

type Schema = Record<string, unknown>;

const text = { type: 'string' };
const nonEmpty = { type: 'string', minLength: 1 };
const texts = { type: 'array', items: text };
const struct = { type: 'object' };
const scopeMap = { type: 'object', additionalProperties: text };

/** An object with exactly one of `members` (a proto `oneof` in ProtoJSON). */
function oneOfKeys(members: Record<string, Schema>): Schema {
  return {
    type: 'object',
    properties: members,
    oneOf: Object.keys(members).map((key) => ({ required: [key] })),
  };
}

// Closed: the 0.3 form (`{"apiKey": []}`) would otherwise pass as an unknown field.
const securityRequirement: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    schemes: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { list: texts } },
    },
  },
};

const oauthFlows = oneOfKeys({
  authorizationCode: {
    type: 'object',
    required: ['authorizationUrl', 'tokenUrl', 'scopes'],
    properties: {
      authorizationUrl: nonEmpty,
      tokenUrl: nonEmpty,
      refreshUrl: text,
      scopes: scopeMap,
      pkceRequired: { type: 'boolean' },
    },
  },
  clientCredentials: {
    type: 'object',
    required: ['tokenUrl', 'scopes'],
    properties: { tokenUrl: nonEmpty, refreshUrl: text, scopes: scopeMap },
  },
  deviceCode: {
    type: 'object',
    required: ['deviceAuthorizationUrl', 'tokenUrl', 'scopes'],
    properties: { deviceAuthorizationUrl: nonEmpty, tokenUrl: nonEmpty, refreshUrl: text, scopes: scopeMap },
  },
  implicit: {
    type: 'object',
    properties: { authorizationUrl: text, refreshUrl: text, scopes: scopeMap },
  },
  password: { type: 'object', properties: { tokenUrl: text, refreshUrl: text, scopes: scopeMap } },
});

const securityScheme = oneOfKeys({
  apiKeySecurityScheme: {
    type: 'object',
    required: ['location', 'name'],
    properties: { description: text, location: { enum: ['query', 'header', 'cookie'] }, name: nonEmpty },
  },
  httpAuthSecurityScheme: {
    type: 'object',
    required: ['scheme'],
    properties: { description: text, scheme: nonEmpty, bearerFormat: text },
  },
  oauth2SecurityScheme: {
    type: 'object',
    required: ['flows'],
    properties: { description: text, flows: oauthFlows, oauth2MetadataUrl: text },
  },
  openIdConnectSecurityScheme: {
    type: 'object',
    required: ['openIdConnectUrl'],
    properties: { description: text, openIdConnectUrl: nonEmpty },
  },
  mtlsSecurityScheme: { type: 'object', properties: { description: text } },
});

const agentInterface: Schema = {
  type: 'object',
  required: ['url', 'protocolBinding', 'protocolVersion'],
  properties: { url: nonEmpty, protocolBinding: nonEmpty, tenant: text, protocolVersion: nonEmpty },
};

const skill: Schema = {
  type: 'object',
  required: ['id', 'name', 'description', 'tags'],
  properties: {
    id: nonEmpty,
    name: nonEmpty,
    description: text,
    tags: texts,
    examples: texts,
    inputModes: texts,
    outputModes: texts,
    securityRequirements: { type: 'array', items: securityRequirement },
  },
};

/** The A2A 1.0 AgentCard, as served at `/.well-known/agent-card.json`. */
export const A2A_AGENT_CARD_SCHEMA: Schema = {
  type: 'object',
  required: [
    'name',
    'description',
    'supportedInterfaces',
    'version',
    'capabilities',
    'defaultInputModes',
    'defaultOutputModes',
    'skills',
  ],
  properties: {
    name: nonEmpty,
    description: text,
    supportedInterfaces: { type: 'array', minItems: 1, items: agentInterface },
    provider: {
      type: 'object',
      required: ['url', 'organization'],
      properties: { url: text, organization: text },
    },
    version: nonEmpty,
    documentationUrl: text,
    capabilities: {
      type: 'object',
      properties: {
        streaming: { type: 'boolean' },
        pushNotifications: { type: 'boolean' },
        extendedAgentCard: { type: 'boolean' },
        extensions: {
          type: 'array',
          items: {
            type: 'object',
            properties: { uri: text, description: text, required: { type: 'boolean' }, params: struct },
          },
        },
      },
    },
    securitySchemes: { type: 'object', additionalProperties: securityScheme },
    securityRequirements: { type: 'array', items: securityRequirement },
    defaultInputModes: { type: 'array', minItems: 1, items: text },
    defaultOutputModes: { type: 'array', minItems: 1, items: text },
    skills: { type: 'array', items: skill },
    signatures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['protected', 'signature'],
        properties: { protected: nonEmpty, signature: nonEmpty, header: struct },
      },
    },
    iconUrl: text,
  },
};

let compiled: ValidateFunction | undefined;

/** True for an object that looks like an A2A 1.0 card rather than a native one. */
export function isA2ACard(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Array.isArray((value as { supportedInterfaces?: unknown }).supportedInterfaces)
  );
}

/**
 * Checks an A2A 1.0 card and returns it; ValidationError (`data.errors` with JSON pointers) when it
 * is not one — a security scheme with no or several wrapper keys, an interface without a protocol
 * version, a skill without tags, the 0.3 spellings (`security`, `url` without interfaces).
 */
export function validateA2ACard(value: unknown): Record<string, unknown> {
  compiled ??= new Ajv({ allErrors: true, strict: false }).compile(A2A_AGENT_CARD_SCHEMA);
  if (compiled(value)) return value as Record<string, unknown>;
  const errors = toValidationIssues(compiled.errors);
  const summary = errors
    .slice(0, 5)
    .map((e) => `${e.pointer} ${e.message}`)
    .join('; ');
  throw new ValidationError(`Invalid A2A agent card: ${summary}`, { data: { errors } });
}
