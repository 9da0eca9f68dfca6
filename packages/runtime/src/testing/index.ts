// Test helpers of @agent/runtime (`@agent/runtime/testing`).
export {
  ScriptedLLM,
  ScriptExhaustedError,
  type ScriptStep,
  type ScriptedLLMOptions,
} from './scripted-llm.js';
