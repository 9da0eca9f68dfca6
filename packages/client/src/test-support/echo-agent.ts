import { createTestAgent, type TestAgent } from '@agent/test-support';

/**
 * The shared test agent as the client tests know it, reading the last message: `wait` holds the task
 * until canceled, `fail <text>` fails it with an ACTION_DENIED error, `silent` completes without a
 * reply, anything else is answered `echo: <text>`. Streams send one artifact per word.
 */
export function createEchoAgent(): TestAgent {
  return createTestAgent({
    card: { name: 'echo', description: 'echo test agent', url: 'runtime://echo' },
    commandFrom: 'last',
    reply: (text) => `echo: ${text}`,
    failCode: 'ACTION_DENIED',
    echoStream: 'artifacts',
    commands: {
      // eslint-disable-next-line require-yield
      async *silent(run) {
        return { ...run.task, state: 'completed' };
      },
    },
  });
}
