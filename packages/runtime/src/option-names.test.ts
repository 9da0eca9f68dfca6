import { createTask, ValueError } from '@agent/core';
import { Agent } from './agent.js';
import { BudgetTracker } from './budget-tracker.js';
import { CapabilityPolicy } from './capability-policy.js';
import { buildManifest } from './llm/manifest.js';
import { OpenAICompatibleLLM } from './llm/openai-compatible.js';
import { RunAction } from './run-action.js';
import { RunBudget } from './run-budget.js';
import { RunContext } from './run-context.js';
import { ScriptedLLM } from './testing/scripted-llm.js';

/** The error a constructor throws, for a message checked whole. */
function thrown(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ValueError);
    return error as Error;
  }
  throw new Error('nothing was thrown');
}

describe('unknown option names are a ValueError naming the accepted ones', () => {
  it('new Agent', () => {
    expect(
      thrown(() => new Agent({ card: { name: 'a' }, budgets: {}, onError: () => {} } as never)).message,
    ).toBe(
      'Agent does not accept the options "budgets", "onError"; accepted: approvalHandler, approvalStore, authenticator, budget, card, ' +
        'credentials, eventSink, execute, finishedTaskRetentionMs, genAiMetrics, instructions, llm, logger, maxSteps, ' +
        'onObserverError, outbound, outboundLimit, policy, registry, reportMaxStreamedEvents, runStore, streamBufferSize, tools, tracing, transport, verbosity, warningRatio',
    );
  });

  it('policies, budgets and their trackers', () => {
    expect(thrown(() => new CapabilityPolicy({}, { default: 'deny' } as never)).message).toBe(
      'CapabilityPolicy does not accept the option "default"; accepted: defaultRule',
    );
    expect(thrown(() => new RunBudget({ maxStep: 3 } as never)).message).toMatch(
      /^RunBudget does not accept the option "maxStep"; accepted: maxInputTokens, maxLlmCalls, /,
    );
    expect(thrown(() => new BudgetTracker(null, { ratio: 0.5 } as never)).message).toBe(
      'BudgetTracker does not accept the option "ratio"; accepted: emit, now, warningRatio',
    );
  });

  it('an Agent budget with a misspelt limit is refused, not left unlimited', () => {
    expect(thrown(() => new Agent({ card: { name: 'a' }, budget: { maxStep: 3 } as never })).message).toMatch(
      /^budget does not accept the option "maxStep"; accepted: .*maxSteps.*max_steps/,
    );
    expect(thrown(() => RunBudget.from({ max_steps: 1, maxLlmCalls: 2 } as never)).message).toBe(
      'budget mixes snake_case and camelCase limits: max_steps, maxLlmCalls',
    );
    expect(RunBudget.from({ max_steps: 1 })?.maxSteps).toBe(1);
    expect(RunBudget.from({ maxLlmCalls: 2 })?.maxLlmCalls).toBe(2);
  });

  it('run contexts, actions and tool definitions', () => {
    expect(thrown(() => new RunContext({ sessionID: 's' } as never)).message).toMatch(
      /^RunContext does not accept the option "sessionID"; accepted: agentChain, budget, /,
    );
    expect(thrown(() => new RunAction({ kind: 'k', name: 'n', capability: ['x'] } as never)).message).toBe(
      'RunAction does not accept the option "capability"; accepted: actionId, artifacts, capabilities, ' +
        'description, kind, metadata, name, payload',
    );
    const agent = new Agent({ card: { name: 'a' } });
    expect(
      thrown(() => agent.registerTool({ name: 't', handler: () => 1, schema: {} } as never)).message,
    ).toBe(
      'Tool "t" does not accept the option "schema"; accepted: actionBuilder, capabilities, description, ' +
        'handler, kind, name, parameters',
    );
  });

  it('buildManifest and run.infer', async () => {
    expect(
      thrown(() =>
        buildManifest({
          context: new RunContext(),
          agentName: 'a',
          llm: { provider: 'p', model: 'm', contextWindow: null },
          messages: [],
          tools: [],
          system: 'x',
        } as never),
      ).message,
    ).toBe(
      'buildManifest does not accept the option "system"; accepted: agentName, context, llm, messages, tools',
    );
    const agent = new Agent({
      card: { name: 'a' },
      llm: new ScriptedLLM([{ content: 'hi', toolCalls: [] }]),
      execute: async (_task, run) => {
        await run.infer({ prompt: 'x' } as never);
      },
    });
    const task = await agent.handleTask(createTask('go'));
    expect(task.state).toBe('failed');
    expect(task.metadata.error).toMatchObject({
      code: 'VALUE_ERROR',
      message:
        'run.infer does not accept the option "prompt"; accepted: instructions, messages, stream, tools',
    });
  });

  it('models', () => {
    expect(
      thrown(
        () => new OpenAICompatibleLLM({ baseUrl: 'http://127.0.0.1:1', model: 'm', api_key: 'k' } as never),
      ).message,
    ).toBe(
      'OpenAICompatibleLLM does not accept the option "api_key"; accepted: apiKey, baseUrl, contextWindow, ' +
        'fetch, headers, maxTokens, model, provider, temperature, timeoutMs',
    );
    expect(thrown(() => new ScriptedLLM([], { name: 'x' } as never)).message).toBe(
      'ScriptedLLM does not accept the option "name"; accepted: contextWindow, model, provider',
    );
  });
});
