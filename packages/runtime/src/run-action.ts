import {
  createArtifact,
  newId,
  ValidationError,
  type Artifact,
  type CreateArtifactOptions,
  type JsonObject,
  type Part,
  type RunActionData,
} from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';

export interface RunActionInit {
  actionId?: string;
  /** Extensible kind, e.g. `tool.call`, `agent.call`, `resource.update`. */
  kind: string;
  name: string;
  payload?: JsonObject;
  capabilities?: Iterable<string>;
  artifacts?: readonly Artifact[];
  description?: string | null;
  metadata?: JsonObject;
}

const INIT_NAMES = optionNames<RunActionInit>({
  actionId: true,
  kind: true,
  name: true,
  payload: true,
  capabilities: true,
  artifacts: true,
  description: true,
  metadata: true,
});

/**
 * The prepared record that policy evaluates right before a side effect. Immutable: `withArtifacts`
 * and `withCapabilities` return new actions. Capabilities are a set (deduplicated, sorted).
 */
export class RunAction {
  readonly actionId: string;
  readonly kind: string;
  readonly name: string;
  readonly payload: JsonObject;
  readonly capabilities: readonly string[];
  readonly artifacts: readonly Artifact[];
  readonly description: string | null;
  readonly metadata: JsonObject;

  constructor(init: RunActionInit) {
    checkOptionNames('RunAction', init, INIT_NAMES);
    if (typeof init.kind !== 'string' || init.kind === '')
      throw invalid('/kind', 'must be a non-empty string');
    if (typeof init.name !== 'string' || init.name === '')
      throw invalid('/name', 'must be a non-empty string');
    const capabilities = [...(init.capabilities ?? [])];
    if (capabilities.some((capability) => typeof capability !== 'string' || capability === '')) {
      throw invalid('/capabilities', 'must be non-empty strings');
    }
    this.actionId = init.actionId ?? newId();
    this.kind = init.kind;
    this.name = init.name;
    this.payload = { ...(init.payload ?? {}) };
    this.capabilities = Object.freeze([...new Set(capabilities)].sort());
    this.artifacts = Object.freeze([...(init.artifacts ?? [])]);
    this.description = init.description ?? null;
    this.metadata = { ...(init.metadata ?? {}) };
  }

  /** The payload's `arguments` entry (tool calls put their arguments there). */
  get arguments(): JsonObject {
    return isRecord(this.payload.arguments) ? (this.payload.arguments as JsonObject) : {};
  }

  /** A copy with the artifacts attached; each gets this action's id. */
  withArtifacts(artifacts: readonly Artifact[]): RunAction {
    const attached = artifacts.map((artifact) => ({ ...artifact, action_id: this.actionId }));
    return new RunAction({ ...this.toInit(), artifacts: [...this.artifacts, ...attached] });
  }

  /** A copy with the capabilities added (a set union). */
  withCapabilities(capabilities: Iterable<string>): RunAction {
    return new RunAction({ ...this.toInit(), capabilities: [...this.capabilities, ...capabilities] });
  }

  /** The preview artifacts: descriptions of what would happen, which perform nothing. */
  get previews(): readonly Artifact[] {
    return this.artifacts.filter((artifact) => artifact.kind === 'preview');
  }

  toDict(): RunActionData {
    return {
      action_id: this.actionId,
      kind: this.kind,
      name: this.name,
      payload: structuredClone(this.payload),
      capabilities: [...this.capabilities],
      artifacts: structuredClone([...this.artifacts]),
      description: this.description,
      metadata: structuredClone(this.metadata),
    };
  }

  toJSON(): RunActionData {
    return this.toDict();
  }

  static fromDict(value: unknown): RunAction {
    if (!isRecord(value)) throw invalid('', 'must be an object');
    if (value.payload !== undefined && !isRecord(value.payload))
      throw invalid('/payload', 'must be an object');
    if (value.capabilities !== undefined && !Array.isArray(value.capabilities))
      throw invalid('/capabilities', 'must be an array');
    if (value.artifacts !== undefined && !Array.isArray(value.artifacts))
      throw invalid('/artifacts', 'must be an array');
    if (value.action_id !== undefined && typeof value.action_id !== 'string')
      throw invalid('/action_id', 'must be a string');
    return new RunAction({
      actionId: value.action_id as string | undefined,
      kind: value.kind as string,
      name: value.name as string,
      payload: value.payload as JsonObject | undefined,
      capabilities: value.capabilities as string[] | undefined,
      artifacts: value.artifacts as Artifact[] | undefined,
      description: typeof value.description === 'string' ? value.description : null,
      metadata: isRecord(value.metadata) ? (value.metadata as JsonObject) : {},
    });
  }

  private toInit(): RunActionInit {
    return {
      actionId: this.actionId,
      kind: this.kind,
      name: this.name,
      payload: this.payload,
      capabilities: this.capabilities,
      artifacts: this.artifacts,
      description: this.description,
      metadata: this.metadata,
    };
  }
}

/** A preview artifact (`kind: "preview"`): shown to an approver, performs nothing. */
export function previewArtifact(
  content: string | Part | Part[],
  options: Omit<CreateArtifactOptions, 'kind'> = {},
): Artifact {
  return createArtifact(content, { ...options, kind: 'preview' });
}

function invalid(pointer: string, message: string): ValidationError {
  return new ValidationError(`Invalid action: ${pointer || '/'} ${message}`, {
    data: { errors: [{ pointer: pointer || '/', message }] },
  });
}
