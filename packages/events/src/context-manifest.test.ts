import { ValueError } from '@agent/core';
import { ContextManifest } from './context-manifest.js';

const init = {
  runId: 'run-1',
  agentName: 'writer',
  provider: 'openai',
  model: 'gpt-x',
  systemTokens: 100,
  toolPromptTokens: 40,
  historyTokens: 300,
  userTokens: 25,
};

describe('ContextManifest', () => {
  it('sums the four sections and serializes snake_case', () => {
    const manifest = new ContextManifest({
      ...init,
      contextWindow: 1000,
      contextItems: [{ section: 'tools', name: 'search', tokens: 40 }],
    });
    expect(manifest.totalEstimatedTokens).toBe(465);
    expect(manifest.remainingTokens).toBe(535);
    expect(manifest.toDict()).toEqual({
      run_id: 'run-1',
      session_id: null,
      agent_name: 'writer',
      provider: 'openai',
      model: 'gpt-x',
      system_tokens: 100,
      tool_prompt_tokens: 40,
      history_tokens: 300,
      user_tokens: 25,
      total_estimated_tokens: 465,
      context_window: 1000,
      context_items: [{ section: 'tools', name: 'search', tokens: 40 }],
    });
  });

  it('round-trips through fromDict, including through JSON', () => {
    const manifest = new ContextManifest({ ...init, sessionId: 's' });
    const restored = ContextManifest.fromDict(JSON.parse(JSON.stringify(manifest)));
    expect(restored).toBeInstanceOf(ContextManifest);
    expect(restored.toDict()).toEqual(manifest.toDict());
    expect(restored.remainingTokens).toBeNull();
  });

  it('recomputes the total instead of trusting a stored one', () => {
    const dict = { ...new ContextManifest(init).toDict(), total_estimated_tokens: 1 };
    expect(ContextManifest.fromDict(dict).totalEstimatedTokens).toBe(465);
  });

  it('rejects bad counts and shapes with a ValueError naming the field', () => {
    expect(() => new ContextManifest({ ...init, userTokens: -1 })).toThrow(
      /userTokens must be a non-negative number/,
    );
    expect(() => new ContextManifest({ ...init, systemTokens: Number.NaN })).toThrow(ValueError);
    expect(() => ContextManifest.fromDict({ ...new ContextManifest(init).toDict(), model: 3 })).toThrow(
      /model must be a string/,
    );
    expect(() => ContextManifest.fromDict('nope')).toThrow(ValueError);
    expect(() =>
      ContextManifest.fromDict({ ...new ContextManifest(init).toDict(), context_items: [{ tokens: 1 }] }),
    ).toThrow(/context_items\[0\]\.section/);
  });

  it('does not share its items with the caller', () => {
    const items = [{ section: 'history', tokens: 300 }];
    const manifest = new ContextManifest({ ...init, contextItems: items });
    items[0].tokens = 0;
    expect(manifest.toDict().context_items[0].tokens).toBe(300);
    manifest.toDict().context_items[0].tokens = 5;
    expect(manifest.contextItems[0].tokens).toBe(300);
  });
});
