import { createTestAgent, type TestAgent } from '@agent/test-support';

/**
 * The shared test agent as these tests know it: it answers any text with `<name>: <text>` (streams
 * send one token per word), `wait` holds the task until it is canceled, and `boom` fails with a plain
 * Error, as a buggy handler would.
 */
export function createEchoAgent(name: string): TestAgent {
  return createTestAgent({
    card: { name, description: `${name} test agent`, url: `runtime://${name}` },
    reply: (text) => `${name}: ${text}`,
    echoStream: 'tokens',
    commands: {
      // eslint-disable-next-line require-yield
      async *boom() {
        throw new Error('handler exploded');
      },
    },
  });
}
