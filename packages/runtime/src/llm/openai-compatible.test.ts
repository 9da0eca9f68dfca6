import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createTask,
  InternalError,
  TaskCanceledError,
  UnavailableError,
  ValueError,
  type JsonObject,
} from '@agent/core';
import { InMemoryEventSink } from '@agent/events';
import { Agent } from '../agent.js';
import { CancellationToken } from '../cancellation.js';
import { OpenAICompatibleLLM } from './openai-compatible.js';
import type { LLMChunk } from './types.js';

type Handler = (body: JsonObject, req: IncomingMessage, res: ServerResponse) => void;

/** A fake OpenAI-compatible endpoint on 127.0.0.1; each test queues its handlers. */
class FakeProvider {
  readonly requests: { body: JsonObject; headers: IncomingMessage['headers']; url: string }[] = [];
  readonly handlers: Handler[] = [];
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw) as JsonObject;
        this.requests.push({ body, headers: req.headers, url: req.url ?? '' });
        const handler = this.handlers.shift();
        if (!handler) {
          res.writeHead(500).end('no handler');
          return;
        }
        handler(body, req, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const json =
  (status: number, value: unknown): Handler =>
  (_body, _req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };

const sse =
  (chunks: unknown[]): Handler =>
  (_body, _req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    res.end('data: [DONE]\n\n');
  };

const completion = (
  message: JsonObject,
  usage = { prompt_tokens: 11, completion_tokens: 7 },
  finish = 'stop',
) => ({
  id: 'cmpl-1',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage,
});

describe('OpenAICompatibleLLM', () => {
  const provider = new FakeProvider();
  beforeAll(() => provider.start());
  afterAll(() => provider.stop());
  beforeEach(() => {
    provider.requests.length = 0;
    provider.handlers.length = 0;
  });
  const signal = () => new AbortController().signal;

  it('sends chat completions with tools and reads content, tool calls and usage', async () => {
    const llm = new OpenAICompatibleLLM({
      baseUrl: `${provider.baseUrl}/`,
      model: 'gpt-test',
      apiKey: 'sk-test',
      temperature: 0,
      maxTokens: 64,
    });
    provider.handlers.push(
      json(
        200,
        completion(
          {
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"word":"ok"}' } },
            ],
          },
          undefined,
          'tool_calls',
        ),
      ),
    );
    const response = await llm.generate(
      {
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'c0', name: 'lookup', arguments: { word: 'x' } }],
          },
          { role: 'tool', content: '{"r":1}', toolCallId: 'c0', name: 'lookup' },
        ],
        tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' } }],
      },
      { signal: signal() },
    );
    expect(response).toEqual({
      content: '',
      toolCalls: [{ id: 'call_a', name: 'lookup', arguments: { word: 'ok' } }],
      usage: { inputTokens: 11, outputTokens: 7 },
      finishReason: 'tool_calls',
    });
    const sent = provider.requests[0];
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({
      model: 'gpt-test',
      temperature: 0,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c0', type: 'function', function: { name: 'lookup', arguments: '{"word":"x"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c0', content: '{"r":1}' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object' } },
        },
      ],
    });
  });

  it('streams SSE chunks, assembling fragmented tool calls and reading usage', async () => {
    const llm = new OpenAICompatibleLLM({ baseUrl: provider.baseUrl, model: 'gpt-test' });
    provider.handlers.push(
      sse([
        { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
        { choices: [{ index: 0, delta: { content: 'lo' } }] },
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 0, id: 'call_z', function: { name: 'look', arguments: '{"wo' } }],
              },
            },
          ],
        },
        {
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, function: { name: 'up', arguments: 'rd":"a"}' } }] },
            },
          ],
        },
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 1, id: 'call_y', function: { name: 'bad', arguments: '{oops' } }],
              },
            },
          ],
        },
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
        { choices: [], usage: { prompt_tokens: 20, completion_tokens: 5 } },
      ]),
    );
    const chunks: LLMChunk[] = [];
    for await (const chunk of llm.stream(
      { messages: [{ role: 'user', content: 'hi' }], tools: [] },
      { signal: signal() },
    ))
      chunks.push(chunk);
    expect(provider.requests[0].body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(chunks.slice(0, 2)).toEqual([{ delta: 'Hel' }, { delta: 'lo' }]);
    expect(chunks.at(-1)).toEqual({
      toolCalls: [
        { id: 'call_z', name: 'lookup', arguments: { word: 'a' } },
        { id: 'call_y', name: 'bad', arguments: {}, argumentsError: expect.any(String) },
      ],
      usage: { inputTokens: 20, outputTokens: 5 },
      finishReason: 'tool_calls',
    });
  });

  it('maps provider failures to typed errors', async () => {
    const llm = new OpenAICompatibleLLM({ baseUrl: provider.baseUrl, model: 'm', provider: 'fake' });
    const request = { messages: [{ role: 'user' as const, content: 'x' }], tools: [] };
    provider.handlers.push(json(503, { error: { message: 'overloaded' } }));
    await expect(llm.generate(request, { signal: signal() })).rejects.toThrow(UnavailableError);
    provider.handlers.push(json(400, { error: { message: 'bad model' } }));
    const bad = (await llm.generate(request, { signal: signal() }).catch((e: unknown) => e)) as InternalError;
    expect(bad).toBeInstanceOf(InternalError);
    expect(bad.message).toBe('fake answered HTTP 400: bad model');
    expect(bad.data).toMatchObject({ status: 400 });
    provider.handlers.push((_b, _r, res) => res.writeHead(200).end('not json'));
    await expect(llm.generate(request, { signal: signal() })).rejects.toThrow(/not a JSON object/);
    provider.handlers.push(json(200, { choices: [] }));
    await expect(llm.generate(request, { signal: signal() })).rejects.toThrow(/malformed/);
    const unreachable = new OpenAICompatibleLLM({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm' });
    await expect(unreachable.generate(request, { signal: signal() })).rejects.toThrow(UnavailableError);
  });

  it('a provider that never answers hits timeoutMs; a caller abort is a cancel', async () => {
    const request = { messages: [{ role: 'user' as const, content: 'x' }], tools: [] };
    provider.handlers.push(() => undefined);
    const slow = new OpenAICompatibleLLM({ baseUrl: provider.baseUrl, model: 'm', timeoutMs: 50 });
    await expect(slow.generate(request, { signal: signal() })).rejects.toThrow(/did not answer within 50 ms/);

    provider.handlers.push((_b, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'partial' } }] })}\n\n`);
    });
    const token = new CancellationToken();
    const llm = new OpenAICompatibleLLM({ baseUrl: provider.baseUrl, model: 'm' });
    const iterator = llm.stream(request, { signal: token.signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ delta: 'partial' });
    const pending = iterator.next();
    token.cancel('stop');
    await expect(pending).rejects.toBeInstanceOf(TaskCanceledError);
  });

  it('validates its options', () => {
    expect(() => new OpenAICompatibleLLM({ baseUrl: 'ftp://x', model: 'm' })).toThrow(ValueError);
    expect(() => new OpenAICompatibleLLM({ baseUrl: 'http://x', model: '' })).toThrow(/model/);
    expect(() => new OpenAICompatibleLLM({ baseUrl: 'http://x', model: 'm', timeoutMs: 0 })).toThrow(
      /timeoutMs/,
    );
  });

  it('drives an agent: tool call, then a streamed answer with provider usage in the events', async () => {
    const llm = new OpenAICompatibleLLM({
      baseUrl: provider.baseUrl,
      model: 'gpt-test',
      contextWindow: 128000,
    });
    provider.handlers.push(
      sse([
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 0, id: 'c1', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
              },
              finish_reason: 'tool_calls',
            },
          ],
        },
        { choices: [], usage: { prompt_tokens: 30, completion_tokens: 4 } },
      ]),
      sse([
        { choices: [{ index: 0, delta: { content: 'It is ' } }] },
        { choices: [{ index: 0, delta: { content: '5.' }, finish_reason: 'stop' }] },
      ]),
    );
    const sink = new InMemoryEventSink();
    const agent = new Agent({ card: { name: 'calc' }, llm, eventSink: sink });
    agent.registerTool({
      name: 'add',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      handler: ({ a, b }) => (a as number) + (b as number),
    });
    const events = [];
    for await (const event of agent.handleTaskStreaming(createTask('2+3?'), undefined as never))
      events.push(event);
    const final = events.at(-1) as { task: { state: string; messages: { parts: { content: string }[] }[] } };
    expect(final.task.state).toBe('completed');
    expect(final.task.messages.at(-1)?.parts[0].content).toBe('It is 5.');
    expect(provider.requests[1].body.messages).toEqual(
      expect.arrayContaining([{ role: 'tool', tool_call_id: 'c1', content: '5' }]),
    );
    const completed = sink.toList().filter((event) => event.type === 'llm.call.completed');
    expect(completed[0].payload.usage).toEqual({ input_tokens: 30, output_tokens: 4, estimated: false });
    expect(completed[1].payload.usage).toMatchObject({ estimated: true });
    expect(sink.toList().find((event) => event.type === 'context.prepared')?.payload.manifest).toMatchObject({
      context_window: 128000,
      provider: 'openai-compatible',
      model: 'gpt-test',
    });
  });
});
