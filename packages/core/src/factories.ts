import { ValueError } from './errors.js';
import { newId, newTimeOrderedId, nowIso } from './ids.js';
import { checkOptionNames, optionNames } from './option-names.js';
import type { Artifact, JsonObject, Message, MessageRole, Part, Task, TaskState } from './wire.js';

/** A text part. */
export function textPart(text: string): Part {
  return { type: 'text', content: text };
}

/** A part built from JSON content; its type is `data`. */
export function dataPart(content: unknown): Part {
  return { type: 'data', content };
}

export interface CreateMessageOptions {
  id?: string;
  role?: MessageRole;
  timestamp?: string;
}

const MESSAGE_OPTIONS = optionNames<CreateMessageOptions>({ id: true, role: true, timestamp: true });

/** A message; a string becomes one text part. The role defaults to `user`. */
export function createMessage(content: string | Part | Part[], options: CreateMessageOptions = {}): Message {
  checkOptionNames('createMessage', options, MESSAGE_OPTIONS);
  const parts =
    typeof content === 'string' ? [textPart(content)] : Array.isArray(content) ? content : [content];
  return {
    id: options.id ?? newId(),
    role: options.role ?? 'user',
    parts,
    timestamp: options.timestamp ?? nowIso(),
  };
}

export interface CreateTaskOptions {
  id?: string;
  state?: TaskState;
  messages?: Message[];
  artifacts?: Artifact[];
  metadata?: JsonObject;
  created_at?: string;
}

const TASK_OPTIONS = optionNames<CreateTaskOptions>({
  id: true,
  state: true,
  messages: true,
  artifacts: true,
  metadata: true,
  created_at: true,
});

/**
 * A task with a caller-side id (the id exists before submission). A string or message argument
 * becomes the first message. The id is a UUID v7: stores key and index tasks by it, and an id that
 * begins with the time adds its index entry at the end of the index instead of on a random page.
 */
export function createTask(
  input?: string | Message | CreateTaskOptions,
  options: CreateTaskOptions = {},
): Task {
  let opts: CreateTaskOptions = options;
  let first: Message[] = [];
  if (typeof input === 'string') first = [createMessage(input)];
  else if (input && 'role' in input && 'parts' in input) first = [input as Message];
  else if (input) opts = { ...(input as CreateTaskOptions), ...options };
  checkOptionNames('createTask', opts, TASK_OPTIONS);
  return {
    id: opts.id ?? newTimeOrderedId(),
    state: opts.state ?? 'submitted',
    messages: [...first, ...(opts.messages ?? [])],
    artifacts: opts.artifacts ?? [],
    metadata: opts.metadata ?? {},
    created_at: opts.created_at ?? nowIso(),
  };
}

export interface CreateArtifactOptions {
  id?: string;
  metadata?: JsonObject;
  kind?: string;
  name?: string;
  uri?: string;
  media_type?: string;
  action_id?: string;
  created_at?: string;
}

const ARTIFACT_OPTIONS = optionNames<CreateArtifactOptions>({
  id: true,
  metadata: true,
  kind: true,
  name: true,
  uri: true,
  media_type: true,
  action_id: true,
  created_at: true,
});

/** An artifact; a string becomes one text part, any other non-part value one data part. */
export function createArtifact(
  content: string | Part | Part[],
  options: CreateArtifactOptions = {},
): Artifact {
  const parts =
    typeof content === 'string' ? [textPart(content)] : Array.isArray(content) ? content : [content];
  checkOptionNames('createArtifact', options, ARTIFACT_OPTIONS);
  const { id, metadata, created_at, ...descriptor } = options;
  const artifact: Artifact = {
    id: id ?? newId(),
    parts,
    metadata: metadata ?? {},
    created_at: created_at ?? nowIso(),
  };
  for (const [key, value] of Object.entries(descriptor)) {
    if (value !== undefined) (artifact as unknown as Record<string, unknown>)[key] = value;
  }
  return artifact;
}

/**
 * The text of a message's text parts, joined by newlines. A task gives its last message's text;
 * nothing (or a task without messages) gives ''.
 */
export function messageText(source: Message | Task | null | undefined): string {
  if (source === undefined || source === null) return '';
  const message = Array.isArray((source as Partial<Task>).messages)
    ? (source as Task).messages.at(-1)
    : (source as Message);
  if (message === undefined) return '';
  if (typeof message !== 'object' || message === null || !Array.isArray(message.parts))
    throw new ValueError('messageText needs a Message or a Task');
  return message.parts
    .filter((part) => part.type === 'text' && typeof part.content === 'string')
    .map((part) => part.content as string)
    .join('\n');
}
