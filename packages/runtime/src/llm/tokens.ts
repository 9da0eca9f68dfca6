import type * as O200kBase from 'gpt-tokenizer/encoding/o200k_base';
import type { LLMMessage, LLMToolDeclaration } from './types.js';

let countTokens: typeof O200kBase.countTokens | undefined;

/**
 * The encoding's ranks are megabytes of tables that take a few hundred milliseconds to load, so they
 * are loaded on the first estimate, not when the runtime is imported: an agent that never estimates
 * (no `llm`) never pays for them.
 */
function encoding(): typeof O200kBase.countTokens {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  countTokens ??= (require('gpt-tokenizer/encoding/o200k_base') as typeof O200kBase).countTokens;
  return countTokens;
}

// Chat formats wrap every message in a few control tokens; OpenAI documents 3 per message.
const MESSAGE_OVERHEAD = 3;

/**
 * Token count of a text with the o200k_base BPE (GPT-4o family). For other models it is an
 * estimate, which is all budgets need before a call: providers report the real usage after.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return encoding()(text);
}

/** Tokens of one chat message, its tool calls included. */
export function estimateMessageTokens(message: LLMMessage): number {
  let tokens = MESSAGE_OVERHEAD + estimateTokens(message.content);
  for (const call of message.toolCalls ?? [])
    tokens += estimateTokens(call.name) + estimateTokens(JSON.stringify(call.arguments));
  if (message.name) tokens += estimateTokens(message.name);
  return tokens;
}

/** Tokens of one tool declaration as it is sent in the prompt. */
export function estimateToolTokens(tool: LLMToolDeclaration): number {
  return estimateTokens(
    JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }),
  );
}
