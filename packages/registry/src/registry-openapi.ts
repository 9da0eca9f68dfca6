/**
 * The registry's routes in the OpenAPI document of the HTTPTransport that serves them
 * (`Registry.openapi`), keyed by REGISTRY_OPERATIONS like the endpoints, so both name the same paths.
 */
import type {
  OpenApiContext,
  OpenApiContribution,
  OpenApiOperation,
  OpenApiPaths,
} from '@agent/transport-http';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, REGISTRY_OPERATIONS } from './operations.js';

type Describe = (context: OpenApiContext) => Omit<OpenApiOperation, 'operationId'>;

const NAME = { name: 'name', in: 'path', required: true, schema: { type: 'string', minLength: 1 } } as const;
const TAGS = ['registry'];

function entry(context: OpenApiContext, description: string, status = '200'): OpenApiOperation['responses'] {
  return {
    [status]: { description, content: { 'application/json': { schema: context.schema('RegistryEntry') } } },
  };
}

const DESCRIBED: Record<keyof typeof REGISTRY_OPERATIONS, Describe> = {
  register: (context) => ({
    summary: "Register an agent under its card name in the caller's tenant",
    parameters: [context.tenantHeader],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: context.schema('RegistryCard') } },
    },
    responses: {
      ...entry(context, 'The new entry.', '201'),
      ...context.errorResponses([
        ...context.callErrors,
        ...context.bodyErrors,
        'VALIDATION_FAILED',
        'ALREADY_EXISTS',
        'RESOURCE_EXHAUSTED',
      ]),
    },
  }),
  replace: (context) => ({
    summary: 'Replace the card of an entry the caller registered',
    parameters: [NAME, context.tenantHeader],
    requestBody: {
      required: true,
      content: { 'application/json': { schema: context.schema('RegistryCard') } },
    },
    responses: {
      ...entry(context, 'The renewed entry.'),
      ...context.errorResponses([
        ...context.callErrors,
        ...context.bodyErrors,
        'VALIDATION_FAILED',
        'NOT_FOUND',
      ]),
    },
  }),
  heartbeat: (context) => ({
    summary: 'Renew an entry the caller registered',
    parameters: [NAME, context.tenantHeader],
    responses: {
      ...entry(context, 'The renewed entry.'),
      ...context.errorResponses([...context.callErrors, 'NOT_FOUND']),
    },
  }),
  deregister: (context) => ({
    summary: 'Remove an entry the caller registered',
    parameters: [NAME, context.tenantHeader],
    responses: {
      ...entry(context, 'The removed entry.'),
      ...context.errorResponses([...context.callErrors, 'NOT_FOUND']),
    },
  }),
  get_agent: (context) => ({
    summary: "One entry of the caller's tenant",
    parameters: [NAME, context.tenantHeader],
    responses: {
      ...entry(context, 'The entry.'),
      ...context.errorResponses([...context.callErrors, 'NOT_FOUND']),
    },
  }),
  list_agents: (context) => ({
    summary: "One page of the tenant's entries",
    parameters: [
      { name: 'skill', in: 'query', schema: { type: 'string' } },
      { name: 'name', in: 'query', schema: { type: 'string' } },
      {
        name: 'page_size',
        in: 'query',
        description: `Default ${DEFAULT_PAGE_SIZE}.`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
      },
      { name: 'page_token', in: 'query', schema: { type: 'string' } },
      context.tenantHeader,
    ],
    responses: {
      '200': {
        description: 'A page; next_page_token is "" on the last one.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['agents', 'next_page_token'],
              properties: {
                agents: { type: 'array', items: context.schema('RegistryEntry') },
                next_page_token: { type: 'string' },
              },
            },
          },
        },
      },
      ...context.errorResponses([...context.callErrors, 'VALIDATION_FAILED']),
    },
  }),
};

export function registryOpenApi(context: OpenApiContext): OpenApiContribution {
  const paths: OpenApiPaths = {};
  for (const key of Object.keys(DESCRIBED) as (keyof typeof REGISTRY_OPERATIONS)[]) {
    const spec = REGISTRY_OPERATIONS[key];
    const method = spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    (paths[spec.path] ??= {})[method] = { operationId: spec.name, tags: TAGS, ...DESCRIBED[key](context) };
  }
  return {
    paths,
    schemas: {
      RegistryCard: {
        description: 'A native AgentCard, or an A2A 1.0 card (with supportedInterfaces).',
        anyOf: [context.schema('AgentCard'), { type: 'object', required: ['name', 'supportedInterfaces'] }],
      },
      RegistryEntry: {
        type: 'object',
        required: ['name', 'card', 'registered_at', 'heartbeat_at', 'expires_at'],
        properties: {
          name: { type: 'string' },
          card: context.schema('RegistryCard'),
          registered_at: { type: 'string', format: 'date-time' },
          heartbeat_at: { type: 'string', format: 'date-time' },
          expires_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  };
}
