import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { RunContext } from '../run-context.js';
import { buildManifest } from './manifest.js';
import { estimateMessageTokens, estimateTokens, estimateToolTokens } from './tokens.js';

describe('token estimates', () => {
  it('load the encoding on the first estimate, not when the runtime is imported', async () => {
    const runtime = resolve(__dirname, '..', '..', 'dist', 'index.js');
    const program = `
      const loaded = () => Object.keys(require.cache).filter((path) => path.includes('gpt-tokenizer')).length;
      const { Agent, estimateTokens } = require(${JSON.stringify(runtime)});
      new Agent({ card: { name: 'a' }, execute: () => undefined });
      const atImport = loaded();
      const tokens = estimateTokens('hello world');
      console.log(JSON.stringify({ atImport, tokens, afterFirstEstimate: loaded() }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', program]);
    const seen = JSON.parse(stdout) as { atImport: number; tokens: number; afterFirstEstimate: number };
    expect(seen.atImport).toBe(0);
    expect(seen.tokens).toBe(2);
    expect(seen.afterFirstEstimate).toBeGreaterThan(0);
  });

  it('count BPE tokens with a real tokenizer, not characters / 4', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('hello world')).toBe(2);
    // A length / 4 heuristic would say 5, 100 and 2 here.
    expect(estimateTokens('internationalization')).toBe(2);
    expect(estimateTokens('0'.repeat(400))).toBe(134);
    expect(estimateTokens('日本語のテキスト')).toBe(6);
    expect(estimateMessageTokens({ role: 'user', content: 'hello world' })).toBe(5);
    expect(
      estimateToolTokens({ name: 't', description: 'd', parameters: { type: 'object' } }),
    ).toBeGreaterThan(5);
  });

  it('buildManifest splits system, tools, history and the current query', () => {
    const context = new RunContext({ sessionId: 's' });
    const manifest = buildManifest({
      context,
      agentName: 'a',
      llm: { provider: 'p', model: 'm', contextWindow: 1000 },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'second question' },
        { role: 'tool', content: '{"r":1}', toolCallId: 'c', name: 'lookup' },
      ],
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' } }],
    });
    const dict = manifest.toDict();
    expect(dict).toMatchObject({
      run_id: context.runId,
      session_id: 's',
      agent_name: 'a',
      provider: 'p',
      model: 'm',
      context_window: 1000,
    });
    expect(dict.user_tokens).toBe(estimateMessageTokens({ role: 'user', content: 'second question' }));
    expect(dict.system_tokens).toBe(estimateMessageTokens({ role: 'system', content: 'Be brief.' }));
    expect(dict.context_items.map((item) => `${item.section}:${item.name ?? ''}`)).toEqual([
      'system:system',
      'history:user',
      'history:assistant',
      'user:user',
      'history:tool:lookup',
      'tools:lookup',
    ]);
    expect(dict.total_estimated_tokens).toBe(
      dict.system_tokens + dict.tool_prompt_tokens + dict.history_tokens + dict.user_tokens,
    );
  });
});
