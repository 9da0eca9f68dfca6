/**
 * Routes for reviewers of durable approvals, served beside the task routes of an HTTPTransport
 * (`routes: [approvalRoutes(store)]`): list the caller's requests, read one, decide one. Every call
 * goes through the pipeline first (authentication, tenant, error policy), and acts for the caller's
 * owner: a request of another principal or tenant answers exactly as an unknown one.
 */
import { ApprovalNotFoundError, ValidationError, ValueError } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';
import type { ApprovalDecisionInput, ApprovalQuery, ApprovalState, ApprovalStore } from '@agent/events';
import type { ServerCall } from '@agent/server';
import type { HttpEndpoint } from './backend.js';
import {
  jsonEndpoint,
  type HttpRouteContext,
  type HttpRoutes,
  type JsonEndpointAnswer,
} from './json-endpoint.js';
import type { OpenApiContext, OpenApiContribution, OpenApiParameter } from './openapi-types.js';

export interface ApprovalRoutesOptions {
  /** Where the routes live below the transport URL's path. Default `/approvals`. */
  path?: string;
}

const OPTION_NAMES = optionNames<ApprovalRoutesOptions>({ path: true });

const STORE_METHODS = ['getApproval', 'listApprovals', 'decideApproval'] as const;
const STATES: readonly ApprovalState[] = ['pending', 'approved', 'denied', 'withdrawn'];
const MAX_LIMIT = 1000;
/** Longest `decided_by` or `reason` accepted: what the stores keep. */
const MAX_NOTE_LENGTH = 4096;
const DECISION_FIELDS = ['approved', 'action_hash', 'decided_by', 'reason'];
const PATH_PATTERN = /^(\/[A-Za-z0-9._~-]+)+$/;

interface Issue {
  pointer: string;
  message: string;
}

function invalid(what: string, issues: Issue[]): ValidationError {
  return new ValidationError(
    `Invalid ${what}: ${issues.map((i) => `${i.pointer} ${i.message}`).join('; ')}`,
    {
      data: { errors: issues },
    },
  );
}

/** One value of a query parameter (`''` counts as absent); a repeated one is refused, not guessed. */
function single(query: URLSearchParams, field: string, issues: Issue[]): string | undefined {
  const values = query.getAll(field);
  if (values.length > 1) issues.push({ pointer: `/${field}`, message: 'must be given once' });
  const value = values[0];
  return value === undefined || value === '' ? undefined : value;
}

/** `?state=&task_id=&limit=`; other parameters are ignored (a credential may travel in the query). */
export function parseApprovalQuery(query: URLSearchParams): ApprovalQuery {
  const issues: Issue[] = [];
  const parsed: ApprovalQuery = {};
  const state = single(query, 'state', issues);
  if (state !== undefined) {
    if (STATES.includes(state as ApprovalState)) parsed.state = state as ApprovalState;
    else issues.push({ pointer: '/state', message: `must be one of ${STATES.join(', ')}` });
  }
  const taskId = single(query, 'task_id', issues);
  if (taskId !== undefined) parsed.taskId = taskId;
  const limit = single(query, 'limit', issues);
  if (limit !== undefined) {
    const value = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (value >= 1 && value <= MAX_LIMIT) parsed.limit = value;
    else issues.push({ pointer: '/limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  if (issues.length > 0) throw invalid('list_approvals request', issues);
  return parsed;
}

function note(body: Record<string, unknown>, field: string, issues: Issue[]): string | null | undefined {
  const value = body[field];
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') issues.push({ pointer: `/${field}`, message: 'must be string or null' });
  else if (value.length > MAX_NOTE_LENGTH)
    issues.push({ pointer: `/${field}`, message: `must be at most ${MAX_NOTE_LENGTH} characters` });
  else return value;
  return undefined;
}

/**
 * `{"approved": boolean, "action_hash": string, "decided_by"?: string|null, "reason"?: string|null}`;
 * every problem is listed by JSON pointer. `decided_by` defaults to the caller's principal.
 */
export function parseDecision(body: unknown, principalId: string): ApprovalDecisionInput {
  if (!isRecord(body))
    throw invalid('decide_approval request', [{ pointer: '/', message: 'must be object' }]);
  const issues: Issue[] = [];
  if (typeof body.approved !== 'boolean') issues.push({ pointer: '/approved', message: 'must be boolean' });
  if (typeof body.action_hash !== 'string' || body.action_hash === '')
    issues.push({ pointer: '/action_hash', message: 'must be a non-empty string' });
  const decidedBy = note(body, 'decided_by', issues);
  const reason = note(body, 'reason', issues);
  for (const field of Object.keys(body)) {
    if (!DECISION_FIELDS.includes(field))
      issues.push({
        pointer: `/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        message: 'is not a known field',
      });
  }
  if (issues.length > 0) throw invalid('decide_approval request', issues);
  const decision: ApprovalDecisionInput = {
    approved: body.approved as boolean,
    action_hash: body.action_hash as string,
    decided_by: decidedBy ?? principalId,
  };
  if (reason !== undefined) decision.reason = reason;
  return decision;
}

function notFound(requestId: string): ApprovalNotFoundError {
  return new ApprovalNotFoundError(`Approval request ${requestId} not found`, {
    data: { request_id: requestId },
  });
}

/**
 * The reviewer routes over an ApprovalStore: `GET {path}?state=&task_id=&limit=` →
 * `{"approvals": [...]}` (oldest first), `GET {path}/{request_id}` → the record, `POST
 * {path}/{request_id}` with a decision → the decided record. The store is the caller's to close.
 */
export class ApprovalRoutes implements HttpRoutes {
  readonly store: ApprovalStore;
  readonly path: string;

  constructor(store: ApprovalStore, options: ApprovalRoutesOptions = {}) {
    const candidate = store as unknown;
    if (!isRecord(candidate) || STORE_METHODS.some((name) => typeof candidate[name] !== 'function')) {
      throw new ValueError(`approvalRoutes: store must be an ApprovalStore (${STORE_METHODS.join(', ')})`);
    }
    if (!isRecord(options as unknown)) throw new ValueError('approvalRoutes options must be an object');
    checkOptionNames('approvalRoutes', options, OPTION_NAMES);
    const path = options.path ?? '/approvals';
    if (typeof path !== 'string' || !PATH_PATTERN.test(path)) {
      throw new ValueError(
        `approvalRoutes: path must be "/" and plain segments, like "/approvals", got ${JSON.stringify(path)}`,
        { data: { field: 'path' } },
      );
    }
    this.store = store;
    this.path = path;
  }

  endpoints(context: HttpRouteContext): HttpEndpoint[] {
    const one = `${this.path}/{request_id}`;
    return [
      jsonEndpoint(
        {
          method: 'GET',
          path: this.path,
          operation: 'list_approvals',
          body: false,
          run: (call, { query }) => this.list(call, query),
        },
        context,
      ),
      jsonEndpoint(
        {
          method: 'GET',
          path: one,
          operation: 'get_approval',
          body: false,
          run: (call, { params }) => this.get(call, params.request_id!),
        },
        context,
      ),
      jsonEndpoint(
        {
          method: 'POST',
          path: one,
          operation: 'decide_approval',
          body: true,
          run: (call, { params, body }) => this.decide(call, params.request_id!, body),
        },
        context,
      ),
    ];
  }

  /** The three routes in the transport's OpenAPI document, with the record and decision schemas. */
  openapi(context: OpenApiContext): OpenApiContribution {
    return approvalsOpenApi(this.path, context);
  }

  private async list(call: ServerCall, query: URLSearchParams): Promise<JsonEndpointAnswer> {
    const approvals = await this.store.listApprovals(call.owner, parseApprovalQuery(query));
    return { body: { approvals } };
  }

  private async get(call: ServerCall, requestId: string): Promise<JsonEndpointAnswer> {
    const record = await this.store.getApproval(call.owner, requestId);
    if (!record) throw notFound(requestId);
    return { body: record };
  }

  private async decide(call: ServerCall, requestId: string, body: unknown): Promise<JsonEndpointAnswer> {
    const decision = parseDecision(body, call.owner.principal_id);
    return { body: await this.store.decideApproval(call.owner, requestId, decision) };
  }
}

const REQUEST_ID: OpenApiParameter = {
  name: 'request_id',
  in: 'path',
  required: true,
  schema: { type: 'string', minLength: 1 },
};
const nullableString = { type: ['string', 'null'] };

function approvalsOpenApi(path: string, context: OpenApiContext): OpenApiContribution {
  const record = { 'application/json': { schema: context.schema('ApprovalRecord') } };
  const tags = ['approvals'];
  return {
    schemas: {
      ApprovalRecord: {
        type: 'object',
        required: [
          'request_id',
          'tenant',
          'principal_id',
          'task_id',
          'action',
          'action_hash',
          'state',
          'created_at',
          'decided_at',
          'decided_by',
          'reason',
        ],
        properties: {
          request_id: { type: 'string' },
          tenant: { type: 'string' },
          principal_id: { type: 'string' },
          task_id: { type: 'string' },
          action: { type: 'object' },
          action_hash: { type: 'string', description: "SHA-256 (hex) of the action's canonical JSON." },
          state: { enum: [...STATES] },
          created_at: { type: 'string', format: 'date-time' },
          decided_at: { type: ['string', 'null'], format: 'date-time' },
          decided_by: nullableString,
          reason: nullableString,
        },
      },
      ApprovalDecision: {
        type: 'object',
        required: ['approved', 'action_hash'],
        additionalProperties: false,
        properties: {
          approved: { type: 'boolean' },
          action_hash: { type: 'string', minLength: 1 },
          decided_by: {
            ...nullableString,
            maxLength: MAX_NOTE_LENGTH,
            description: "Default: the caller's principal.",
          },
          reason: { ...nullableString, maxLength: MAX_NOTE_LENGTH },
        },
      },
    },
    paths: {
      [path]: {
        get: {
          operationId: 'list_approvals',
          summary: "The caller's approval requests, oldest first",
          tags,
          parameters: [
            { name: 'state', in: 'query', schema: { enum: [...STATES] } },
            { name: 'task_id', in: 'query', schema: { type: 'string' } },
            {
              name: 'limit',
              in: 'query',
              description: 'Default 100.',
              schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT },
            },
            context.tenantHeader,
          ],
          responses: {
            '200': {
              description: 'The requests.',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['approvals'],
                    properties: { approvals: { type: 'array', items: context.schema('ApprovalRecord') } },
                  },
                },
              },
            },
            ...context.errorResponses([...context.callErrors, 'VALIDATION_FAILED']),
          },
        },
      },
      [`${path}/{request_id}`]: {
        get: {
          operationId: 'get_approval',
          summary: "One of the caller's approval requests",
          tags,
          parameters: [REQUEST_ID, context.tenantHeader],
          responses: {
            '200': { description: 'The request.', content: record },
            ...context.errorResponses([...context.callErrors, 'APPROVAL_NOT_FOUND']),
          },
        },
        post: {
          operationId: 'decide_approval',
          summary: 'Decide a pending request',
          tags,
          parameters: [REQUEST_ID, context.tenantHeader],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: context.schema('ApprovalDecision') } },
          },
          responses: {
            '200': { description: 'The decided request.', content: record },
            ...context.errorResponses([
              ...context.callErrors,
              ...context.bodyErrors,
              'VALIDATION_FAILED',
              'APPROVAL_NOT_FOUND',
              'APPROVAL_ALREADY_DECIDED',
              'APPROVAL_ACTION_MISMATCH',
            ]),
          },
        },
      },
    },
  };
}

/** The reviewer routes of `store`, for `new HTTPTransport({ routes: [approvalRoutes(store)] })`. */
export function approvalRoutes(store: ApprovalStore, options?: ApprovalRoutesOptions): ApprovalRoutes {
  return new ApprovalRoutes(store, options);
}
