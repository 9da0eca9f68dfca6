/**
 * Wire types: the JSON shapes of a Task and its resources (Message, Part, Artifact, AgentCard), with
 * snake_case field names, as they travel on every transport.
 */

/** JSON value, used where a field accepts any JSON. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** Free-form JSON object (string keys, any values). */
export type JsonObject = { [key: string]: unknown };

/** The five core task states every agent and transport supports. */
export const CORE_TASK_STATES = ['submitted', 'working', 'completed', 'canceled', 'failed'] as const;
/**
 * States beyond the core five, taken from A2A so that an agent can pause for the caller
 * (`input-required`, `auth-required`) or refuse work (`rejected`).
 */
export const EXTENDED_TASK_STATES = ['input-required', 'rejected', 'auth-required'] as const;
export const TASK_STATES = [...CORE_TASK_STATES, ...EXTENDED_TASK_STATES] as const;
export type TaskState = (typeof TASK_STATES)[number];
/** States after which a task never changes again. */
export const TERMINAL_TASK_STATES: readonly TaskState[] = ['completed', 'canceled', 'failed', 'rejected'];

export function isTerminalState(state: TaskState): boolean {
  return TERMINAL_TASK_STATES.includes(state);
}

export const MESSAGE_ROLES = ['user', 'agent', 'system'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** A content payload. `type` is `text` for text, `data` for JSON content; other values are allowed. */
export interface Part {
  type: string;
  content?: unknown;
}

export interface Message {
  id: string;
  role: MessageRole;
  parts: Part[];
  timestamp: string;
}

/** Artifact wire form plus the optional runtime descriptor fields. */
export interface Artifact {
  id: string;
  parts: Part[];
  metadata: JsonObject;
  created_at: string;
  /** `preview` marks a pre-execution preview: it describes, and performs nothing. */
  kind?: string;
  name?: string;
  uri?: string;
  media_type?: string;
  action_id?: string;
}

export interface Task {
  id: string;
  state: TaskState;
  messages: Message[];
  artifacts: Artifact[];
  /** Reserved keys: `run_context`, `session_id` (legacy), `cancel_reason`; `error` on failed tasks. */
  metadata: JsonObject;
  created_at: string;
}

/** The dict form of a SecurityScheme as it appears in an AgentCard. */
export interface SecuritySchemeDict {
  type: string;
  scheme: string | null;
  description: string;
  metadata: JsonObject;
}

export interface AgentSkill {
  id: string;
  name: string;
  description?: string;
  tags?: string[];
}

export interface AgentCapabilities {
  streaming?: boolean;
  /** Transports this agent is reachable over, e.g. `["http", "sse"]`. */
  transports?: string[];
}

/** Native discovery metadata (`/.well-known/agent.json`). */
export interface AgentCard {
  name: string;
  description: string;
  url: string;
  version?: string;
  capabilities?: AgentCapabilities;
  skills?: AgentSkill[];
  /** Present only when an authenticator is configured; keyed by the scheme's auth type. */
  securitySchemes?: Record<string, SecuritySchemeDict>;
  metadata?: JsonObject;
}
