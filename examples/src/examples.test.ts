import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expectSuccess, runNode } from './test-support/child-process.js';

const root = join(__dirname, '..');

/** Lines each example must print, in this order (other lines may come between them). */
const EXPECTED: Record<string, string[]> = {
  'serve-every-transport': [
    'grpc health: SERVING',
    'http: you said: hello over http | stream: status(working) > task.progress',
    'sse: you said: hello over sse',
    'ws: you said: hello over ws',
    'grpc: you said: hello over grpc',
    'memory: you said: hello over memory',
    'every transport answered',
  ],
  'sync-client': [
    'card: word-counter',
    'reply: 4 words',
    'task: completed - 6 words',
    'stream: 3 events, last task.status',
    'cancel of an unknown task: TASK_NOT_FOUND',
  ],
  'auth-modes': [
    'API key: good credential -> "hello api-key-sk-examp"; bad credential -> 401 UNAUTHENTICATED (Invalid API key)',
    'JWT bearer: good credential -> "hello alice"; bad credential -> 401 UNAUTHENTICATED',
    'Basic: good credential -> "hello alice"; bad credential -> 401 UNAUTHENTICATED',
    'OAuth2 token exchange: good credential -> "hello alice"; bad credential -> 401 UNAUTHENTICATED',
    'every mode accepted the good credential and refused the bad one',
  ],
  streaming: [
    'status working',
    'artifact 3',
    'status completed (final)',
    'cancelTask answered: canceled',
    'the stream ended with: status canceled (final)',
    'the client stopped reading: TASK_CANCELED',
    'the task was still running; cancelTask answered: canceled',
  ],
  approvals: [
    'reviewer: transfer of 40 -> approved',
    'agent: done, balance 960',
    'reviewer: transfer of 5000 -> denied',
    'refused: ACTION_DENIED (Action "transfer" denied: denied by reviewer-bot: over the 100 limit)',
    'refused: ACTION_DENIED (Action "close_account" denied: payments.close: rule "payments.*" is deny)',
    'events of an approved transfer: action.requested > action.policy > approval.required > approval.decided',
  ],
  'record-and-replay': [
    'task completed',
    'report: status completed, 2 model calls, 1 action(s): lookup_order=completed',
    'redacted arguments: {"order":1001,"api_key":"[REDACTED]","customer_email":"[REDACTED]"}',
    'replayed event types: task.status > context.prepared > llm.call.started',
    'tool result: {"order":1001,"status":"shipped"}',
    'replay assertions passed',
  ],
};

const examples = readdirSync(join(root, 'src'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => file.slice(0, -'.ts'.length));

describe('examples', () => {
  it('every example in src/ has its expected output here', () => {
    expect(examples.sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  // Each example is a child process of its own, so they can run side by side.
  it.concurrent.each(examples)(
    '%s runs, exits 0 and prints what it shows',
    async (name) => {
      expectSuccess(name, await runNode(join(root, 'dist', `${name}.js`)), EXPECTED[name] ?? []);
    },
    60_000,
  );
});
