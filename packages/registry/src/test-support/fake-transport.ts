/** A Transport whose `send` records each call and answers from a queue, for client-side unit tests. */
import type { ClientRequestSpec, SendOptions, Transport } from '@agent/core';

export interface SentCall {
  spec: ClientRequestSpec;
  baseUrl: string;
  data: unknown;
  params: Record<string, string> | undefined;
  options: SendOptions | undefined;
}

export interface FakeTransport extends Transport {
  readonly calls: SentCall[];
  /** Answers, in order; an Error is thrown instead of returned. */
  readonly answers: unknown[];
  stopped: number;
}

export function fakeTransport(answers: unknown[] = []): FakeTransport {
  const transport: FakeTransport = {
    kind: 'http',
    calls: [],
    answers,
    stopped: 0,
    start: () => Promise.resolve(),
    stop: () => {
      transport.stopped++;
      return Promise.resolve();
    },
    bind: () => undefined,
    onTaskReceived: () => undefined,
    send: <TResult>(
      spec: ClientRequestSpec,
      baseUrl: string,
      data?: unknown,
      params?: Record<string, string>,
      options?: SendOptions,
    ): Promise<TResult> => {
      transport.calls.push({ spec, baseUrl, data, params, options });
      const answer = transport.answers.shift();
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as TResult);
    },
    subscribe: () => {
      throw new Error('not used');
    },
    authenticate: () => Promise.reject(new Error('not used')),
    validateUrl: () => false,
  };
  return transport;
}
