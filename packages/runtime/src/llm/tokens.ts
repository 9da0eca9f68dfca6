import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { LLMMessage, LLMToolDeclaration } from './types.js';

// Chat formats wrap every message in a few control tokens; OpenAI documents 3 per message.
const MESSAGE_OVERHEAD = 3;

/**
 * Token count of a text with the o200k_base BPE (GPT-4o family). For other models it is an
 * estimate, which is all budgets need before a call: providers report the real usage after.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return countTokens(text);
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
