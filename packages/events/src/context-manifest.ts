/**
 * ContextManifest: the per-call estimate of prompt tokens by section, built before every LLM call
 * and carried as the `manifest` entry of `context.prepared`.
 */
import { ValueError } from '@agent/core';
import { checkOptionNames, isRecord, optionNames } from '@agent/core/internal';

/** One per-section token record. */
export interface ContextItem {
  section: string;
  name?: string;
  tokens: number;
}

/** The snake_case dict form (`toDict()`), as it travels inside events and reports. */
export interface ContextManifestData {
  run_id: string;
  session_id: string | null;
  agent_name: string;
  provider: string;
  model: string;
  system_tokens: number;
  tool_prompt_tokens: number;
  history_tokens: number;
  user_tokens: number;
  total_estimated_tokens: number;
  context_window: number | null;
  context_items: ContextItem[];
}

export interface ContextManifestInit {
  runId: string;
  sessionId?: string | null;
  agentName: string;
  provider: string;
  model: string;
  /** Estimated non-tool system prompt tokens. */
  systemTokens: number;
  /** Estimated tokens of tool and delegation declarations. */
  toolPromptTokens: number;
  /** Estimated tokens of prior conversation. */
  historyTokens: number;
  /** Estimated tokens of the current query. */
  userTokens: number;
  /** The model's context window in tokens, when known. Default `null`. */
  contextWindow?: number | null;
  contextItems?: ContextItem[];
}

const INIT_NAMES = optionNames<ContextManifestInit>({
  runId: true,
  sessionId: true,
  agentName: true,
  provider: true,
  model: true,
  systemTokens: true,
  toolPromptTokens: true,
  historyTokens: true,
  userTokens: true,
  contextWindow: true,
  contextItems: true,
});

function tokenCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ValueError(
      `ContextManifest.${name} must be a non-negative number, got ${JSON.stringify(value)}`,
      {
        data: { field: name },
      },
    );
  }
  return value;
}

function text(name: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new ValueError(`ContextManifest.${name} must be a string, got ${JSON.stringify(value)}`, {
      data: { field: name },
    });
  }
  return value;
}

function items(value: unknown): ContextItem[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new ValueError('ContextManifest.context_items must be an array', {
      data: { field: 'context_items' },
    });
  return value.map((item: unknown, index) => {
    if (!isRecord(item)) {
      throw new ValueError(`ContextManifest.context_items[${index}] must be an object`, {
        data: { field: 'context_items' },
      });
    }
    const record: ContextItem = {
      section: text(`context_items[${index}].section`, item.section),
      tokens: tokenCount(`context_items[${index}].tokens`, item.tokens),
    };
    if (item.name !== undefined && item.name !== null)
      record.name = text(`context_items[${index}].name`, item.name);
    return record;
  });
}

export class ContextManifest {
  readonly runId: string;
  readonly sessionId: string | null;
  readonly agentName: string;
  readonly provider: string;
  readonly model: string;
  readonly systemTokens: number;
  readonly toolPromptTokens: number;
  readonly historyTokens: number;
  readonly userTokens: number;
  readonly contextWindow: number | null;
  readonly contextItems: readonly ContextItem[];

  /** @throws ValueError when a count is not a finite non-negative number or an id is not a string. */
  constructor(init: ContextManifestInit) {
    if (!isRecord(init)) throw new ValueError('ContextManifest needs an init object');
    checkOptionNames('ContextManifest', init, INIT_NAMES);
    this.runId = text('runId', init.runId);
    this.sessionId =
      init.sessionId === undefined || init.sessionId === null ? null : text('sessionId', init.sessionId);
    this.agentName = text('agentName', init.agentName);
    this.provider = text('provider', init.provider);
    this.model = text('model', init.model);
    this.systemTokens = tokenCount('systemTokens', init.systemTokens);
    this.toolPromptTokens = tokenCount('toolPromptTokens', init.toolPromptTokens);
    this.historyTokens = tokenCount('historyTokens', init.historyTokens);
    this.userTokens = tokenCount('userTokens', init.userTokens);
    this.contextWindow =
      init.contextWindow === undefined || init.contextWindow === null
        ? null
        : tokenCount('contextWindow', init.contextWindow);
    this.contextItems = Object.freeze(items(init.contextItems));
  }

  /** The additive estimate the runtime checks against `max_input_tokens` before a call. */
  get totalEstimatedTokens(): number {
    return this.systemTokens + this.toolPromptTokens + this.historyTokens + this.userTokens;
  }

  /** Tokens left in the context window after this prompt; `null` when the window is unknown. */
  get remainingTokens(): number | null {
    return this.contextWindow === null ? null : this.contextWindow - this.totalEstimatedTokens;
  }

  toDict(): ContextManifestData {
    return {
      run_id: this.runId,
      session_id: this.sessionId,
      agent_name: this.agentName,
      provider: this.provider,
      model: this.model,
      system_tokens: this.systemTokens,
      tool_prompt_tokens: this.toolPromptTokens,
      history_tokens: this.historyTokens,
      user_tokens: this.userTokens,
      total_estimated_tokens: this.totalEstimatedTokens,
      context_window: this.contextWindow,
      context_items: this.contextItems.map((item) => ({ ...item })),
    };
  }

  toJSON(): ContextManifestData {
    return this.toDict();
  }

  /**
   * Restores a manifest from its dict form (an event's `manifest` entry). The total is recomputed
   * from the four sections, so a tampered `total_estimated_tokens` cannot hide tokens.
   * @throws ValueError on a malformed dict.
   */
  static fromDict(data: unknown): ContextManifest {
    if (!isRecord(data)) throw new ValueError('ContextManifest.fromDict needs an object');
    return new ContextManifest({
      runId: data.run_id as string,
      sessionId: (data.session_id ?? null) as string | null,
      agentName: data.agent_name as string,
      provider: data.provider as string,
      model: data.model as string,
      systemTokens: data.system_tokens as number,
      toolPromptTokens: data.tool_prompt_tokens as number,
      historyTokens: data.history_tokens as number,
      userTokens: data.user_tokens as number,
      contextWindow: (data.context_window ?? null) as number | null,
      contextItems: (data.context_items ?? []) as ContextItem[],
    });
  }
}
