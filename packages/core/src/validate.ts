import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DATE_TIME_FORMAT } from './date-time-format.js';
import { ValidationError } from './errors.js';
import { nowIso } from './ids.js';
import { buildSchemas } from './schemas.js';
import type { TaskEvent } from './task-event.js';
import type { AgentCard, Artifact, Message, Task } from './wire.js';

export interface ValidateOptions {
  /** Reject fields the wire types do not name (free-form `metadata` and part `content` excepted). */
  strict?: boolean;
}

/** One failing location: a JSON pointer into the validated value and what is wrong there. */
export interface ValidationIssue {
  pointer: string;
  message: string;
}

type Kind = keyof ReturnType<typeof buildSchemas>;
type Validators = Record<Kind, ValidateFunction>;

// Compiled once per mode, on first use, so importing @agent/core costs nothing until validation runs.
const compiled: { loose?: Validators; strict?: Validators } = {};

function validators(strict: boolean): Validators {
  const key = strict ? 'strict' : 'loose';
  const existing = compiled[key];
  if (existing) return existing;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addFormat('date-time', DATE_TIME_FORMAT);
  const schemas = buildSchemas(strict);
  const built = Object.fromEntries(
    (Object.keys(schemas) as Kind[]).map((kind) => [kind, ajv.compile(schemas[kind])]),
  ) as Validators;
  compiled[key] = built;
  return built;
}

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Turns ajv errors into `{pointer, message}`, naming the missing or unknown property itself. */
export function toValidationIssues(errors: readonly ErrorObject[] | null | undefined): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    // `if`/`then` wrappers repeat the inner failure; keep only the inner one.
    if (error.keyword === 'if') continue;
    let pointer = error.instancePath;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      pointer = `${pointer}/${escapePointerToken(missing)}`;
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      pointer = `${pointer}/${escapePointerToken(extra)}`;
      message = 'is not allowed';
    } else if (error.keyword === 'enum') {
      message = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ pointer: pointer || '/', message });
  }
  return issues;
}

function check<T>(kind: Kind, label: string, value: unknown, options: ValidateOptions): T {
  const validate = validators(options.strict === true)[kind];
  if (validate(value)) return value as T;
  const errors = toValidationIssues(validate.errors);
  const summary = errors
    .slice(0, 5)
    .map((e) => `${e.pointer} ${e.message}`)
    .join('; ');
  throw new ValidationError(`Invalid ${label}: ${summary}`, { data: { errors } });
}

/**
 * Validates a Task. Only `id` is required on input; a valid task missing `state`, `messages`,
 * `artifacts`, `metadata` or `created_at` is returned as a new object with the defaults filled in
 * (`submitted`, `[]`, `[]`, `{}`, now). The input is never mutated.
 */
export function validateTask(value: unknown, options: ValidateOptions = {}): Task {
  const task = check<Partial<Task> & { id: string }>('task', 'task', value, options);
  if (task.state && task.messages && task.artifacts && task.metadata && task.created_at) return task as Task;
  return {
    ...task,
    state: task.state ?? 'submitted',
    messages: task.messages ?? [],
    artifacts: task.artifacts ?? [],
    metadata: task.metadata ?? {},
    created_at: task.created_at ?? nowIso(),
  };
}

export function validateMessage(value: unknown, options: ValidateOptions = {}): Message {
  return check<Message>('message', 'message', value, options);
}

export function validateArtifact(value: unknown, options: ValidateOptions = {}): Artifact {
  const artifact = check<Artifact>('artifact', 'artifact', value, options);
  if (artifact.metadata && artifact.created_at) return artifact;
  return { ...artifact, metadata: artifact.metadata ?? {}, created_at: artifact.created_at ?? nowIso() };
}

export function validateAgentCard(value: unknown, options: ValidateOptions = {}): AgentCard {
  return check<AgentCard>('agentCard', 'agent card', value, options);
}

export function validateTaskEvent(value: unknown, options: ValidateOptions = {}): TaskEvent {
  return check<TaskEvent>('taskEvent', 'task event', value, options);
}
