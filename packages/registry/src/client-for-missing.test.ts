/** clientFor when an optional transport package is not installed. */
import { ValueError } from '@agent/core';
import { clientFor } from './client-for.js';
import { card } from './test-support/cards.js';

jest.mock('@agent/transport-grpc', () => {
  const error = new Error("Cannot find module '@agent/transport-grpc'") as Error & { code: string };
  error.code = 'MODULE_NOT_FOUND';
  throw error;
});

it('names the package to install when a card asks for a transport that is not installed', () => {
  let thrown: unknown;
  try {
    clientFor(card('a', { url: 'grpc://127.0.0.1:50051' }));
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ValueError);
  expect((thrown as ValueError).message).toMatch(/needs the @agent\/transport-grpc package/);
  expect((thrown as ValueError).data).toEqual({ package: '@agent/transport-grpc' });
});
