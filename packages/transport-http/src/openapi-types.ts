/**
 * The part of OpenAPI 3.1 this package writes, and what a route set (`HttpRoutes.openapi`) gives
 * and gets to describe its own paths in the transport's document.
 */
import type { ErrorCode } from '@agent/core';

/** A JSON Schema of draft 2020-12, the dialect of OpenAPI 3.1 (a `$ref` is one too). */
export type JsonSchema = { readonly [keyword: string]: unknown };

export interface OpenApiReference {
  $ref: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiMediaType {
  schema: JsonSchema;
  /** Extensions: the `text/event-stream` answers name the schema of each frame's data in `x-event-data`. */
  [extension: `x-${string}`]: unknown;
}

export interface OpenApiHeader {
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiRequestBody {
  required?: boolean;
  description?: string;
  content: Record<string, OpenApiMediaType>;
}

/** A security requirement: scheme names and the scopes each needs; `[]` for a public operation. */
export type OpenApiSecurityRequirement = Record<string, string[]>;

export interface OpenApiOperation {
  /** Unique in the document: the route's operation name (`send_task`, `list_approvals`). */
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: (OpenApiParameter | OpenApiReference)[];
  requestBody?: OpenApiRequestBody;
  responses: Record<string, OpenApiResponse>;
  /** Absent: the document's (the authenticator's schemes). `[]`: a public operation. */
  security?: OpenApiSecurityRequirement[];
  /** Set on an operation the transport serves but whose route set does not describe it. */
  'x-undocumented'?: boolean;
}

export type OpenApiMethod = 'get' | 'post' | 'put' | 'delete';

export type OpenApiPathItem = Partial<Record<OpenApiMethod, OpenApiOperation>>;

/** Paths below the transport URL's path, as a route set's endpoints name them (`/approvals/{request_id}`). */
export type OpenApiPaths = Record<string, OpenApiPathItem>;

/** What a route set adds to the document. */
export interface OpenApiContribution {
  paths: OpenApiPaths;
  /** Schemas of its own, by name, for `context.schema(name)` (the wire types are there already). */
  schemas?: Record<string, JsonSchema>;
}

/** The names under which the document carries core's wire schemas. */
export type WireSchemaName =
  | 'Part'
  | 'Message'
  | 'Artifact'
  | 'Task'
  | 'TaskEvent'
  | 'TaskList'
  | 'AgentCard'
  | 'CancelRequest'
  | 'ErrorBody';

/** What a route set gets to describe its paths with the document's shared pieces. */
export interface OpenApiContext {
  /** A `$ref` to a schema of the document: a wire schema, or one a contribution adds under `schemas`. */
  schema(name: WireSchemaName | (string & {})): JsonSchema;
  /**
   * The error answers of an operation: the `{"error": …}` body, one response per HTTP status of the
   * codes (from core's `ERROR_CODES`; the body's `code` limited to those of the status), and a
   * `default` for any other code a handler may raise.
   */
  errorResponses(codes: readonly ErrorCode[]): Record<string, OpenApiResponse>;
  /** The codes every authenticated call may get before its route runs (401, 403, a bad tenant, 503, 500). */
  readonly callErrors: readonly ErrorCode[];
  /** The codes of reading a JSON body (413, a compressed or malformed body). */
  readonly bodyErrors: readonly ErrorCode[];
  /** The `X-Tenant` request header, for the parameters of an authenticated operation. */
  readonly tenantHeader: OpenApiReference;
}

/** The document `GET /openapi.json` answers. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: OpenApiPaths;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, OpenApiParameter>;
    securitySchemes?: Record<string, JsonSchema>;
  };
  security?: OpenApiSecurityRequirement[];
}
