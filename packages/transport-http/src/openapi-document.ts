/**
 * Builds the OpenAPI 3.1 document of one started transport: the wire schemas from core (the ones
 * the validators compile), the error answers from core's error table, the security schemes of the
 * authenticator, and one operation per endpoint the backend serves, as the task routes and each
 * route set describe them. An endpoint nobody describes still appears (marked `x-undocumented`), so
 * the document never lists less than the server serves.
 */
import type { Authenticator } from '@agent/auth';
import { ERROR_CODES, ValueError, type ErrorCode } from '@agent/core';
import { buildSchemas, errorBodySchema } from '@agent/core/internal';
import { MAX_TENANT_LENGTH, TENANT_NAME_PATTERN } from '@agent/server';
import { routeKey } from '@agent/server/node';
import type { HttpEndpoint } from './backend.js';
import { documentSecurity } from './openapi-security.js';
import type {
  JsonSchema,
  OpenApiContext,
  OpenApiContribution,
  OpenApiDocument,
  OpenApiMethod,
  OpenApiOperation,
  OpenApiParameter,
  OpenApiPaths,
  OpenApiResponse,
  WireSchemaName,
} from './openapi-types.js';

const CALL_ERRORS: readonly ErrorCode[] = [
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'INVALID_REQUEST',
  'UNAVAILABLE',
  'INTERNAL',
];
const BODY_ERRORS: readonly ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'INVALID_REQUEST'];

/** Paths the host answers itself on every backend, below the transport URL's path. */
export const HOST_PATHS: readonly string[] = ['/healthz', '/readyz'];

function wireSchemas(): Record<WireSchemaName, JsonSchema> {
  const { part, message, artifact, task, agentCard, taskEvent } = buildSchemas(false);
  return {
    Part: part,
    Message: message,
    Artifact: artifact,
    Task: task,
    TaskEvent: taskEvent,
    AgentCard: agentCard,
    TaskList: {
      type: 'object',
      required: ['tasks', 'next_page_token'],
      properties: {
        tasks: { type: 'array', items: { $ref: '#/components/schemas/Task' } },
        next_page_token: { type: 'string' },
      },
    },
    CancelRequest: {
      type: 'object',
      description: '`id` is accepted for `task_id`, and `metadata.reason` for `reason`.',
      anyOf: [{ required: ['task_id'] }, { required: ['id'] }],
      properties: {
        task_id: { type: 'string', minLength: 1 },
        id: { type: 'string', minLength: 1 },
        reason: { type: 'string' },
        metadata: { type: 'object' },
      },
    },
    ErrorBody: errorBodySchema(),
  };
}

const TENANT: OpenApiParameter = {
  name: 'X-Tenant',
  in: 'header',
  description: 'The tenant the call acts in; absent: the default tenant.',
  schema: { type: 'string', maxLength: MAX_TENANT_LENGTH, pattern: TENANT_NAME_PATTERN },
};

function errorResponses(codes: readonly ErrorCode[]): Record<string, OpenApiResponse> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].httpStatus;
    const listed = byStatus.get(status) ?? [];
    if (!listed.includes(code)) listed.push(code);
    byStatus.set(status, listed);
  }
  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, listed] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: listed.join(', '),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/ErrorBody' },
              { properties: { error: { properties: { code: { enum: listed } } } } },
            ],
          },
        },
      },
    };
  }
  responses.default = {
    description: "Any other code of the error table, with that code's status (a handler's own errors).",
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  };
  return responses;
}

export const OPENAPI_CONTEXT: OpenApiContext = {
  schema: (name) => ({ $ref: `#/components/schemas/${name}` }),
  errorResponses,
  callErrors: CALL_ERRORS,
  bodyErrors: BODY_ERRORS,
  tenantHeader: { $ref: '#/components/parameters/Tenant' },
};

export interface DocumentSource {
  /** The transport URL's path: endpoints' paths start with it, the document's are below it. */
  basePath: string;
  authenticator: Authenticator | undefined;
  /** Every endpoint the backend was given. */
  endpoints: readonly HttpEndpoint[];
  /** The transport's own description first, then each route set's, labelled for messages. */
  contributions: readonly { label: string; contribution: OpenApiContribution }[];
}

/** The document without `servers` (the real port is known only once listening). ValueError for a broken contribution. */
export function buildOpenApiDocument(source: DocumentSource): Omit<OpenApiDocument, 'servers'> {
  const schemas: Record<string, JsonSchema> = { ...wireSchemas() };
  const documented: OpenApiPaths = {};
  for (const { label, contribution } of source.contributions) {
    if (typeof contribution !== 'object' || contribution === null || typeof contribution.paths !== 'object') {
      throw new ValueError(`${label}.openapi() did not return { paths }`);
    }
    for (const [name, schema] of Object.entries(contribution.schemas ?? {})) {
      if (name in schemas) throw new ValueError(`${label}.openapi(): the schema ${name} exists already`);
      schemas[name] = schema;
    }
    for (const [path, item] of Object.entries(contribution.paths)) {
      const key = routeKey(path);
      const target = (documented[key] ??= {});
      for (const [method, operation] of Object.entries(item) as [OpenApiMethod, OpenApiOperation][]) {
        if (target[method])
          throw new ValueError(`${label}.openapi(): ${method.toUpperCase()} ${key} is described twice`);
        target[method] = operation;
      }
    }
  }
  for (const endpoint of source.endpoints) {
    const path = localPath(endpoint.path, source.basePath);
    const method = endpoint.method.toLowerCase() as OpenApiMethod;
    const item = (documented[path] ??= {});
    item[method] ??= undocumented(endpoint.method, path);
  }
  const security = documentSecurity(source.authenticator);
  return {
    openapi: '3.1.0',
    info: {
      title: 'agent-tasks HTTP API',
      version: '1.0.0',
      description:
        'The native HTTP wire of @agent/transport-http: the task routes and the routes this server adds. Errors are {"error": {code, message, data?}} with the status of the code.',
    },
    paths: sortedPaths(documented),
    components: {
      schemas,
      parameters: { Tenant: TENANT },
      ...(security ? { securitySchemes: security.schemes } : {}),
    },
    ...(security ? { security: security.requirements } : {}),
  };
}

/** An endpoint's path as the document names it: below the base path, without its trailing slash. */
export function localPath(path: string, basePath: string): string {
  const below = path.startsWith(basePath) ? path.slice(basePath.length) : path;
  return routeKey(below === '' ? '/' : below);
}

function undocumented(method: string, path: string): OpenApiOperation {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  return {
    operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: 'Served by a route set that does not describe its routes',
    'x-undocumented': true,
    ...(names.length > 0
      ? {
          parameters: names.map((name): OpenApiParameter => ({
            name,
            in: 'path',
            required: true,
            schema: { type: 'string' },
          })),
        }
      : {}),
    responses: errorResponses([]),
  };
}

function sortedPaths(paths: OpenApiPaths): OpenApiPaths {
  return Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
