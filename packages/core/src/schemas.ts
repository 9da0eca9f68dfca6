/**
 * JSON Schemas (draft 2020-12 subset understood by ajv) for every wire type.
 * `strict` variants reject unknown fields (the transports' `validateSchema` option); metadata objects
 * and part contents stay free-form in both.
 */
import { ERROR_CODES } from './errors.js';
import { MESSAGE_ROLES, TASK_STATES } from './wire.js';
import { TASK_EVENT_TYPES } from './task-event.js';

type Schema = Record<string, unknown>;

function closed(strict: boolean, schema: Schema): Schema {
  return strict ? { ...schema, additionalProperties: false } : schema;
}

const timestamp = { type: 'string', format: 'date-time' };
const nonEmpty = { type: 'string', minLength: 1 };
const object = { type: 'object' };

export function buildSchemas(strict: boolean) {
  const part: Schema = closed(strict, {
    type: 'object',
    required: ['type'],
    properties: { type: nonEmpty, content: {} },
    if: { properties: { type: { const: 'text' } } },
    then: { required: ['content'], properties: { content: { type: 'string' } } },
  });
  const message: Schema = closed(strict, {
    type: 'object',
    required: ['id', 'role', 'parts', 'timestamp'],
    properties: {
      id: nonEmpty,
      role: { enum: [...MESSAGE_ROLES] },
      parts: { type: 'array', items: part },
      timestamp,
    },
  });
  const artifact: Schema = closed(strict, {
    type: 'object',
    required: ['id', 'parts'],
    properties: {
      id: nonEmpty,
      parts: { type: 'array', items: part },
      metadata: object,
      created_at: timestamp,
      kind: { type: 'string' },
      name: { type: 'string' },
      uri: { type: 'string' },
      media_type: { type: 'string' },
      action_id: { type: 'string' },
    },
  });
  const task: Schema = closed(strict, {
    type: 'object',
    required: ['id'],
    properties: {
      id: nonEmpty,
      state: { enum: [...TASK_STATES] },
      messages: { type: 'array', items: message },
      artifacts: { type: 'array', items: artifact },
      metadata: object,
      created_at: timestamp,
    },
  });
  const securityScheme: Schema = closed(strict, {
    type: 'object',
    required: ['type', 'description', 'metadata'],
    properties: {
      type: { enum: ['apiKey', 'http', 'oauth2', 'mutualTLS', 'openIdConnect'] },
      scheme: { type: ['string', 'null'] },
      description: { type: 'string' },
      metadata: object,
    },
  });
  const agentCard: Schema = closed(strict, {
    type: 'object',
    required: ['name', 'description', 'url'],
    properties: {
      name: nonEmpty,
      description: { type: 'string' },
      url: { type: 'string' },
      version: { type: 'string' },
      capabilities: {
        type: 'object',
        properties: {
          streaming: { type: 'boolean' },
          transports: { type: 'array', items: { type: 'string' } },
        },
      },
      skills: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'name'],
          properties: {
            id: nonEmpty,
            name: nonEmpty,
            description: { type: 'string' },
            tags: { type: 'array', items: { type: 'string' } },
          },
        },
      },
      securitySchemes: { type: 'object', additionalProperties: securityScheme },
      metadata: object,
    },
  });
  const eventBase = { task_id: nonEmpty, timestamp, sequence: { type: 'integer', minimum: 1 } };
  const taskEvent: Schema = {
    type: 'object',
    required: ['type', 'task_id', 'timestamp'],
    properties: { type: { enum: [...TASK_EVENT_TYPES] }, ...eventBase },
    allOf: [
      {
        if: { properties: { type: { const: 'task.status' } } },
        then: {
          required: ['state', 'final'],
          properties: { state: { enum: [...TASK_STATES] }, final: { type: 'boolean' }, message, task },
        },
      },
      {
        if: { properties: { type: { const: 'task.artifact' } } },
        then: {
          required: ['artifact', 'append', 'last_chunk'],
          properties: { artifact, append: { type: 'boolean' }, last_chunk: { type: 'boolean' } },
        },
      },
      {
        if: { properties: { type: { const: 'llm.stream' } } },
        then: { required: ['delta'], properties: { delta: { type: 'string' } } },
      },
    ],
  };
  return { part, message, artifact, task, agentCard, taskEvent };
}

/**
 * The body of every HTTP answer with a status of 400 or more: `{"error": {code, message, data?}}`,
 * `code` one of the error table's. Not a validator's: the servers write it, clients and API
 * descriptions read it.
 */
export function errorBodySchema(): Schema {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { enum: Object.keys(ERROR_CODES) },
          message: { type: 'string' },
          data: {},
        },
      },
    },
  };
}
