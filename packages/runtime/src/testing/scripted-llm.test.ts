import { ScriptedLLM, ScriptExhaustedError } from './index.js';

describe('ScriptedLLM', () => {
  const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

  it('answers in script order, records requests and throws ScriptExhaustedError past the end', async () => {
    const llm = new ScriptedLLM(
      [
        { content: 'one', toolCalls: [] },
        (req) => ({ content: `echo ${req.messages[0].content}`, toolCalls: [] }),
      ],
      { model: 'm1', contextWindow: 100 },
    );
    const signal = new AbortController().signal;
    expect(await llm.generate(request, { signal })).toEqual({ content: 'one', toolCalls: [] });
    expect(await llm.generate(request, { signal })).toEqual({ content: 'echo hi', toolCalls: [] });
    expect(llm.calls).toEqual([request, request]);
    expect(llm.remaining).toBe(0);
    const error = await llm.generate(request, { signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptExhaustedError);
    expect((error as ScriptExhaustedError).code).toBe('INTERNAL');
    expect([llm.provider, llm.model, llm.contextWindow]).toEqual(['scripted', 'm1', 100]);
  });

  it('streams word chunks, then tool calls and usage; an aborted call does not start', async () => {
    const llm = new ScriptedLLM([
      {
        content: 'a b',
        toolCalls: [{ id: 'c', name: 't', arguments: {} }],
        usage: { inputTokens: 1, outputTokens: 2 },
        finishReason: 'tool_calls',
      },
    ]);
    const chunks = [];
    for await (const chunk of llm.stream(request, { signal: new AbortController().signal }))
      chunks.push(chunk);
    expect(chunks).toEqual([
      { delta: 'a ' },
      { delta: 'b' },
      {
        toolCalls: [{ id: 'c', name: 't', arguments: {} }],
        usage: { inputTokens: 1, outputTokens: 2 },
        finishReason: 'tool_calls',
      },
    ]);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(new ScriptedLLM([]).generate(request, { signal: controller.signal })).rejects.toThrow(
      'gone',
    );
  });
});
