import { checkOptionNames, optionNames } from '@agent/core/internal';
import { ContextManifest } from '@agent/events';
import type { RunContext } from '../run-context.js';
import { estimateMessageTokens, estimateToolTokens } from './tokens.js';
import type { LLM, LLMMessage, LLMToolDeclaration } from './types.js';

export interface BuildManifestOptions {
  context: RunContext;
  agentName: string;
  llm: Pick<LLM, 'provider' | 'model' | 'contextWindow'>;
  messages: readonly LLMMessage[];
  tools: readonly LLMToolDeclaration[];
}

const OPTION_NAMES = optionNames<BuildManifestOptions>({
  context: true,
  agentName: true,
  llm: true,
  messages: true,
  tools: true,
});

/**
 * The ContextManifest of one prompt: system messages, tool declarations, prior conversation
 * (tool results included) and the current query (the last user message), each estimated with
 * the tokenizer, plus one `context_items` record per message and per tool.
 */
export function buildManifest(options: BuildManifestOptions): ContextManifest {
  checkOptionNames('buildManifest', options, OPTION_NAMES);
  const { messages, tools } = options;
  let lastUser = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    if (messages[index].role === 'user') {
      lastUser = index;
      break;
    }
  }
  let systemTokens = 0;
  let historyTokens = 0;
  let userTokens = 0;
  const items: { section: string; name?: string; tokens: number }[] = [];
  messages.forEach((message, index) => {
    const tokens = estimateMessageTokens(message);
    const section = message.role === 'system' ? 'system' : index === lastUser ? 'user' : 'history';
    if (section === 'system') systemTokens += tokens;
    else if (section === 'user') userTokens += tokens;
    else historyTokens += tokens;
    items.push({
      section,
      name: message.role === 'tool' && message.name ? `${message.role}:${message.name}` : message.role,
      tokens,
    });
  });
  let toolPromptTokens = 0;
  for (const tool of tools) {
    const tokens = estimateToolTokens(tool);
    toolPromptTokens += tokens;
    items.push({ section: 'tools', name: tool.name, tokens });
  }
  return new ContextManifest({
    runId: options.context.runId,
    sessionId: options.context.sessionId,
    agentName: options.agentName,
    provider: options.llm.provider,
    model: options.llm.model,
    systemTokens,
    toolPromptTokens,
    historyTokens,
    userTokens,
    contextWindow: options.llm.contextWindow ?? null,
    contextItems: items,
  });
}
