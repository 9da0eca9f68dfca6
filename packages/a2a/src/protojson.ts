/**
 * The A2A 1.0 ProtoJSON codec: native wire types (snake_case, `@agent/core`) <-> A2A 1.0 JSON.
 *
 * Output follows ProtoJSON: lowerCamelCase names, enums as names, fields at their default omitted
 * (no empty arrays except `parts`, no `false`, no empty metadata), timestamps ending in `Z`. Input is
 * read the way a ProtoJSON parser reads it: snake_case names and numeric enums are accepted and
 * unknown fields are ignored. Every decode failure is one ValidationError whose `data.errors` lists
 * `{pointer, message}` for each problem.
 */
import {
  type Artifact,
  type JsonObject,
  type Message,
  type MessageRole,
  type Part,
  type Task,
  type TaskState,
  ValidationError,
  isTerminalState,
  nowIso,
  parseIsoTimestamp,
} from '@agent/core';
import { isRecord } from '@agent/core/internal';

export const A2A_PROTOCOL_VERSION = '1.0';

export type A2ATaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED';

export interface A2APart {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  metadata?: Record<string, unknown>;
  filename?: string;
  mediaType?: string;
}

export interface A2AMessage {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: A2APart[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface A2ATaskStatus {
  state: A2ATaskState;
  message?: A2AMessage;
  timestamp?: string;
}

export interface A2AArtifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: A2APart[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
}

export interface A2ATask {
  id: string;
  contextId: string;
  status: A2ATaskStatus;
  artifacts?: A2AArtifact[];
  history?: A2AMessage[];
  metadata?: Record<string, unknown>;
}

export interface A2AStatusUpdate {
  taskId: string;
  contextId: string;
  status: A2ATaskStatus;
  metadata?: Record<string, unknown>;
}

export interface A2AArtifactUpdate {
  taskId: string;
  contextId: string;
  artifact: A2AArtifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: Record<string, unknown>;
}

export type A2AStreamResponse =
  | { task: A2ATask }
  | { message: A2AMessage }
  | { statusUpdate: A2AStatusUpdate }
  | { artifactUpdate: A2AArtifactUpdate };

// ---------------------------------------------------------------------------------------------
// Decode plumbing: problems are collected, then thrown once.

interface Issue {
  pointer: string;
  message: string;
}

class Issues {
  readonly list: Issue[] = [];
  add(pointer: string, message: string): void {
    this.list.push({ pointer: pointer || '/', message });
  }
  throwIfAny(label: string): void {
    if (this.list.length === 0) return;
    const summary = this.list
      .slice(0, 5)
      .map((issue) => `${issue.pointer} ${issue.message}`)
      .join('; ');
    throw new ValidationError(`Invalid ${label}: ${summary}`, { data: { errors: this.list } });
  }
}

function snakeToCamel(key: string): string {
  // Nearly every key comes in camelCase already: no pattern run, no replacement made for it.
  if (!key.includes('_')) return key;
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** A copy of an object whose snake_case keys read as lowerCamelCase; the camelCase spelling wins. */
function camelKeys(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    const camel = snakeToCamel(key);
    if (camel !== key && Object.prototype.hasOwnProperty.call(value, camel)) continue;
    out[camel] = entry;
  }
  return out;
}

/**
 * A request's params (or any ProtoJSON object) with snake_case keys read as lowerCamelCase, one level
 * deep, so `history_length` reads as `historyLength`. Anything but an object is a ValidationError.
 */
export function readRequestObject(json: unknown, pointer = ''): Record<string, unknown> {
  if (!isRecord(json)) {
    throw new ValidationError(`Invalid request: ${pointer || '/'} must be an object`, {
      data: { errors: [{ pointer: pointer || '/', message: 'must be an object' }] },
    });
  }
  return camelKeys(json);
}

function readObject(json: unknown, pointer: string, issues: Issues): Record<string, unknown> | undefined {
  if (!isRecord(json)) {
    issues.add(pointer, 'must be an object');
    return undefined;
  }
  return camelKeys(json);
}

function optionalString(
  record: Record<string, unknown>,
  key: string,
  pointer: string,
  issues: Issues,
): string | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    issues.add(`${pointer}/${key}`, 'must be a string');
    return undefined;
  }
  return value;
}

function requiredString(
  record: Record<string, unknown>,
  key: string,
  pointer: string,
  issues: Issues,
): string | undefined {
  const value = record[key];
  if (typeof value === 'string' && value !== '') return value;
  issues.add(`${pointer}/${key}`, value === undefined || value === '' ? 'is required' : 'must be a string');
  return undefined;
}

function optionalMetadata(
  record: Record<string, unknown>,
  pointer: string,
  issues: Issues,
): Record<string, unknown> | undefined {
  const value = record.metadata;
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    issues.add(`${pointer}/metadata`, 'must be an object');
    return undefined;
  }
  return value;
}

function nonEmpty(record: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return record !== undefined && Object.keys(record).length > 0 ? record : undefined;
}

function without(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (!keys.includes(key)) out[key] = value;
  return out;
}

function isIsoString(value: unknown): value is string {
  return typeof value === 'string' && parseIsoTimestamp(value) instanceof Date;
}

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** ProtoJSON timestamps end in `Z`; native timestamps may carry an offset. */
function toUtc(timestamp: string): string {
  // What `nowIso` writes (and most peers send) is already in that form: nothing to normalize.
  if (CANONICAL_UTC.test(timestamp)) return timestamp;
  const parsed = parseIsoTimestamp(timestamp);
  return parsed instanceof Date ? parsed.toISOString() : timestamp;
}

// ---------------------------------------------------------------------------------------------
// States

const STATE_NAMES: Record<TaskState, A2ATaskState> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

// Proto enum numbers: 0 is UNSPECIFIED.
const STATE_NUMBERS: readonly (TaskState | undefined)[] = [
  undefined,
  'submitted',
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
  'rejected',
  'auth-required',
];

const STATE_BY_NAME = new Map<string, TaskState>();
for (const [native, name] of Object.entries(STATE_NAMES) as [TaskState, A2ATaskState][]) {
  STATE_BY_NAME.set(name, native);
  STATE_BY_NAME.set(native, native); // 0.3 spelled states in lowercase kebab case
}
STATE_BY_NAME.set('cancelled', 'canceled');

export function toA2AState(state: TaskState): A2ATaskState {
  return STATE_NAMES[state];
}

function readState(value: unknown): TaskState | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? STATE_NUMBERS[value] : undefined;
  if (typeof value !== 'string') return undefined;
  return STATE_BY_NAME.get(value) ?? STATE_BY_NAME.get(value.toUpperCase());
}

/** A TaskState from its A2A name, its proto number (1..8) or its 0.3 kebab-case name. */
export function fromA2AState(value: unknown, pointer = '/state'): TaskState {
  const state = readState(value);
  if (state !== undefined) return state;
  throw new ValidationError(`Invalid task state: ${JSON.stringify(value) ?? 'undefined'}`, {
    data: { errors: [{ pointer, message: 'must be a known TaskState other than TASK_STATE_UNSPECIFIED' }] },
  });
}

/** True for the states after which an A2A stream closes: terminal or interrupted. */
export function endsA2AStream(state: TaskState): boolean {
  return isTerminalState(state) || state === 'input-required' || state === 'auth-required';
}

// ---------------------------------------------------------------------------------------------
// Parts

function fileContent(content: unknown): Record<string, unknown> {
  return isRecord(content) ? content : {};
}

export function toA2APart(part: Part): A2APart {
  switch (part.type) {
    case 'text':
      return {
        text: typeof part.content === 'string' ? part.content : JSON.stringify(part.content ?? ''),
      };
    case 'data':
      return { data: part.content ?? null };
    case 'file': {
      const file = fileContent(part.content);
      const out: A2APart = {};
      if (typeof file.url === 'string') out.url = file.url;
      else out.raw = typeof file.bytes === 'string' ? file.bytes : '';
      if (typeof file.filename === 'string' && file.filename !== '') out.filename = file.filename;
      if (typeof file.media_type === 'string' && file.media_type !== '') out.mediaType = file.media_type;
      return out;
    }
    default:
      return { data: part.content ?? null, metadata: { native_type: part.type } };
  }
}

function decodePart(json: unknown, pointer: string, issues: Issues): Part | undefined {
  const record = readObject(json, pointer, issues);
  if (!record) return undefined;
  const members = ['text', 'raw', 'url', 'data'].filter(
    (key) => record[key] !== undefined && !(key !== 'data' && record[key] === null),
  );
  if (members.length !== 1) {
    issues.add(pointer, 'must have exactly one of text, raw, url, data');
    return undefined;
  }
  const metadata = optionalMetadata(record, pointer, issues);
  const member = members[0]!;
  if (member === 'data') {
    const nativeType = metadata?.native_type;
    if (typeof nativeType === 'string' && nativeType !== '') {
      return record.data === null ? { type: nativeType } : { type: nativeType, content: record.data };
    }
    return { type: 'data', content: record.data };
  }
  const value = record[member];
  if (typeof value !== 'string') {
    issues.add(`${pointer}/${member}`, 'must be a string');
    return undefined;
  }
  if (member === 'text') return { type: 'text', content: value };
  const content: Record<string, unknown> = member === 'url' ? { url: value } : { bytes: value };
  // 0.3 named the media type `mimeType`.
  const mediaType =
    optionalString(record, 'mediaType', pointer, issues) ??
    optionalString(record, 'mimeType', pointer, issues);
  const filename = optionalString(record, 'filename', pointer, issues);
  if (mediaType) content.media_type = mediaType;
  if (filename) content.filename = filename;
  return { type: 'file', content };
}

/** A native Part from an A2A Part; a ValidationError (pointers under `pointer`) when it is not one. */
export function fromA2APart(json: unknown, pointer: string): Part {
  const issues = new Issues();
  const part = decodePart(json, pointer, issues);
  issues.throwIfAny('part');
  return part!;
}

function decodeParts(
  value: unknown,
  pointer: string,
  issues: Issues,
  requireOne: boolean,
): Part[] | undefined {
  if (!Array.isArray(value)) {
    issues.add(pointer, value === undefined ? 'is required' : 'must be an array');
    return undefined;
  }
  if (requireOne && value.length === 0) {
    issues.add(pointer, 'must have at least one part');
    return undefined;
  }
  const parts: Part[] = [];
  value.forEach((entry, index) => {
    const part = decodePart(entry, `${pointer}/${index}`, issues);
    if (part) parts.push(part);
  });
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Messages

export function toA2AMessage(
  message: Message,
  ids: { taskId?: string; contextId?: string } = {},
): A2AMessage {
  const out: A2AMessage = {
    messageId: message.id,
    role: message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: message.parts.map(toA2APart),
  };
  if (ids.contextId) out.contextId = ids.contextId;
  if (ids.taskId) out.taskId = ids.taskId;
  // A2A messages have no timestamp and no system role: both travel in metadata, so a round trip keeps them.
  const metadata: Record<string, unknown> = {};
  if (message.timestamp) metadata.timestamp = toUtc(message.timestamp);
  if (message.role === 'system') metadata.native_role = 'system';
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  return out;
}

function readRole(value: unknown): 'user' | 'agent' | undefined {
  if (value === 'ROLE_USER' || value === 1 || value === 'user') return 'user';
  if (value === 'ROLE_AGENT' || value === 2 || value === 'agent') return 'agent';
  return undefined;
}

export interface DecodedMessage {
  message: Message;
  taskId?: string;
  contextId?: string;
  metadata?: Record<string, unknown>;
}

function decodeMessage(
  json: unknown,
  pointer: string,
  issues: Issues,
  requireParts: boolean,
): DecodedMessage | undefined {
  const record = readObject(json, pointer, issues);
  if (!record) return undefined;
  const before = issues.list.length;
  const id = requiredString(record, 'messageId', pointer, issues);
  const a2aRole = readRole(record.role);
  if (a2aRole === undefined) {
    issues.add(
      `${pointer}/role`,
      record.role === undefined ? 'is required' : 'must be ROLE_USER or ROLE_AGENT',
    );
  }
  const parts = decodeParts(record.parts, `${pointer}/parts`, issues, requireParts);
  const taskId = optionalString(record, 'taskId', pointer, issues);
  const contextId = optionalString(record, 'contextId', pointer, issues);
  const metadata = optionalMetadata(record, pointer, issues);
  if (issues.list.length > before || id === undefined || a2aRole === undefined || !parts) return undefined;
  const role: MessageRole = a2aRole === 'agent' && metadata?.native_role === 'system' ? 'system' : a2aRole;
  const timestamp = isIsoString(metadata?.timestamp) ? metadata.timestamp : nowIso();
  const decoded: DecodedMessage = { message: { id, role, parts, timestamp } };
  if (taskId) decoded.taskId = taskId;
  if (contextId) decoded.contextId = contextId;
  const rest = nonEmpty(metadata ? without(metadata, ['timestamp', 'native_role']) : undefined);
  if (rest) decoded.metadata = rest;
  return decoded;
}

/**
 * A native Message from an A2A Message, with the ids and metadata the native message has no field
 * for. A ValidationError lists every problem (`messageId`, `role` and at least one part are required).
 */
export function fromA2AMessage(json: unknown, pointer = ''): DecodedMessage {
  const issues = new Issues();
  const decoded = decodeMessage(json, pointer, issues, true);
  issues.throwIfAny('message');
  return decoded!;
}

// ---------------------------------------------------------------------------------------------
// Artifacts

// Native artifact fields A2A has no field for travel in metadata under these keys.
const ARTIFACT_EXTRAS = [
  ['created_at', 'created_at'],
  ['kind', 'native_kind'],
  ['uri', 'native_uri'],
  ['media_type', 'native_media_type'],
  ['action_id', 'native_action_id'],
] as const;

export function toA2AArtifact(artifact: Artifact): A2AArtifact {
  const out: A2AArtifact = { artifactId: artifact.id, parts: artifact.parts.map(toA2APart) };
  if (artifact.name) out.name = artifact.name;
  const metadata: Record<string, unknown> = { ...artifact.metadata };
  for (const [field, key] of ARTIFACT_EXTRAS) {
    const value = artifact[field];
    if (typeof value === 'string' && value !== '') {
      metadata[key] = field === 'created_at' ? toUtc(value) : value;
    }
  }
  const kept = nonEmpty(metadata);
  if (kept) out.metadata = kept;
  return out;
}

function decodeArtifact(json: unknown, pointer: string, issues: Issues): Artifact | undefined {
  const record = readObject(json, pointer, issues);
  if (!record) return undefined;
  const before = issues.list.length;
  const id = requiredString(record, 'artifactId', pointer, issues);
  const parts = decodeParts(record.parts, `${pointer}/parts`, issues, false);
  const name = optionalString(record, 'name', pointer, issues);
  const description = optionalString(record, 'description', pointer, issues);
  const metadata = optionalMetadata(record, pointer, issues) ?? {};
  if (issues.list.length > before || id === undefined || !parts) return undefined;
  const createdAt = metadata.created_at;
  const artifact: Artifact = {
    id,
    parts,
    metadata: without(
      metadata,
      ARTIFACT_EXTRAS.map(([, key]) => key),
    ),
    created_at: isIsoString(createdAt) ? createdAt : nowIso(),
  };
  if (name) artifact.name = name;
  if (description && artifact.metadata.description === undefined) artifact.metadata.description = description;
  for (const [field, key] of ARTIFACT_EXTRAS) {
    const value = metadata[key];
    if (field !== 'created_at' && typeof value === 'string') artifact[field] = value;
  }
  return artifact;
}

export function fromA2AArtifact(json: unknown, pointer = ''): Artifact {
  const issues = new Issues();
  const artifact = decodeArtifact(json, pointer, issues);
  issues.throwIfAny('artifact');
  return artifact!;
}

// ---------------------------------------------------------------------------------------------
// Tasks

/** The A2A context of a native task: metadata.run_context.session_id, else metadata.session_id, else the task id. */
export function contextIdOf(task: Task): string {
  const runContext = task.metadata.run_context;
  if (isRecord(runContext) && typeof runContext.session_id === 'string' && runContext.session_id !== '') {
    return runContext.session_id;
  }
  const sessionId = task.metadata.session_id;
  if (typeof sessionId === 'string' && sessionId !== '') return sessionId;
  return task.id;
}

export interface ToA2ATaskOptions {
  /** Unset: all history; 0: no `history` key; N: the last N messages. */
  historyLength?: number;
  /** False leaves the `artifacts` key out. Default true. */
  includeArtifacts?: boolean;
  /** `status.timestamp`. Default now. */
  timestamp?: string;
}

/** The status message a finished or interrupted task reports: its last message, when the agent sent it. */
function statusMessage(task: Task): Message | undefined {
  if (!endsA2AStream(task.state)) return undefined;
  const last = task.messages[task.messages.length - 1];
  return last !== undefined && last.role !== 'user' ? last : undefined;
}

/** An A2A TaskStatus for a state, with its message and timestamp. */
export function toA2AStatus(
  state: TaskState,
  ids: { taskId: string; contextId: string },
  message?: Message,
  timestamp?: string,
): A2ATaskStatus {
  const status: A2ATaskStatus = { state: toA2AState(state) };
  if (message) status.message = toA2AMessage(message, ids);
  status.timestamp = toUtc(timestamp ?? nowIso());
  return status;
}

export function toA2ATask(task: Task, options: ToA2ATaskOptions = {}): A2ATask {
  const ids = { taskId: task.id, contextId: contextIdOf(task) };
  const out: A2ATask = {
    id: task.id,
    contextId: ids.contextId,
    status: toA2AStatus(task.state, ids, statusMessage(task), options.timestamp),
  };
  if (options.includeArtifacts !== false && task.artifacts.length > 0) {
    out.artifacts = task.artifacts.map(toA2AArtifact);
  }
  const limit = options.historyLength;
  const history =
    limit === undefined ? task.messages : limit <= 0 ? [] : task.messages.slice(-Math.floor(limit));
  if (history.length > 0) out.history = history.map((message) => toA2AMessage(message, ids));
  const metadata = nonEmpty(without(task.metadata, ['run_context', 'session_id']));
  if (metadata) out.metadata = metadata;
  return out;
}

/**
 * A native Task from an A2A Task, tolerant of what other servers send: history messages may have no
 * parts, and `status.message` joins the messages when history lacks it. A ValidationError when the
 * value is not a Task (`id` and `status.state` are required).
 */
export function fromA2ATask(json: unknown): Task {
  const issues = new Issues();
  const record = readObject(json, '', issues);
  issues.throwIfAny('task');
  const id = requiredString(record!, 'id', '', issues);
  const status = readObject(record!.status, '/status', issues);
  const statusRecord = status ?? {};
  const state = readState(statusRecord.state);
  if (status && state === undefined) issues.add('/status/state', 'must be a known TaskState');
  const contextId = optionalString(record!, 'contextId', '', issues);
  const messages: Message[] = [];
  const history = record!.history;
  if (history !== undefined && history !== null) {
    if (!Array.isArray(history)) issues.add('/history', 'must be an array');
    else {
      history.forEach((entry, index) => {
        const decoded = decodeMessage(entry, `/history/${index}`, issues, false);
        if (decoded) messages.push(decoded.message);
      });
    }
  }
  if (statusRecord.message !== undefined && statusRecord.message !== null) {
    const decoded = decodeMessage(statusRecord.message, '/status/message', issues, false);
    if (decoded && !messages.some((message) => message.id === decoded.message.id)) {
      messages.push(decoded.message);
    }
  }
  const artifacts: Artifact[] = [];
  const rawArtifacts = record!.artifacts;
  if (rawArtifacts !== undefined && rawArtifacts !== null) {
    if (!Array.isArray(rawArtifacts)) issues.add('/artifacts', 'must be an array');
    else {
      rawArtifacts.forEach((entry, index) => {
        const artifact = decodeArtifact(entry, `/artifacts/${index}`, issues);
        if (artifact) artifacts.push(artifact);
      });
    }
  }
  const metadata: JsonObject = { ...(optionalMetadata(record!, '', issues) ?? {}) };
  issues.throwIfAny('task');
  if (contextId) metadata.session_id = contextId;
  const timestamp = statusRecord.timestamp;
  return {
    id: id!,
    state: state!,
    messages,
    artifacts,
    metadata,
    created_at: isIsoString(timestamp) ? timestamp : nowIso(),
  };
}
