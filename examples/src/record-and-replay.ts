/**
 * Recording and replay: a run of a real agent (`ScriptedLLM` plays the model, so it runs offline)
 * is observed through one `FanOutEventSink` by a `RunRecorder` and a `LocalTraceTelemetry`; the
 * recorder turns it into a `RunReport`, whose JSON masks secrets
 * (`RedactionPolicy`); the agent's run store keeps a redacted copy; `RunReplay` reads a stored
 * report back (nothing is re-run) and the assertions check what the run did.
 *
 * Run it: pnpm --filter @agent/examples run example record-and-replay
 */
import { strict as assert } from 'node:assert';
import { createTask } from '@agent/core';
import {
  assertBudgetUnder,
  assertNoDeniedActions,
  assertRunEvents,
  FanOutEventSink,
  InMemoryRunStore,
  LocalTraceTelemetry,
  RedactionPolicy,
  RunRecorder,
  RunReplay,
  type RunReportData,
} from '@agent/events';
import { Agent } from '@agent/runtime';
import { ScriptedLLM } from '@agent/runtime/testing';

async function main(): Promise<void> {
  const recorder = new RunRecorder();
  const telemetry = new LocalTraceTelemetry(); // spans in memory; listeners can forward them (OpenTelemetry)
  // One sink fans out to every observer; an observer that throws never changes the run.
  const sink = new FanOutEventSink([recorder, (event) => telemetry.observe(event)], {
    onError: (error, event) => console.error(`an observer failed on event ${event.sequence}:`, error),
  });
  // Stored reports are masked with the default keys (api_key, password, token, ...) plus ours.
  const redaction = new RedactionPolicy({ keys: ['customer_email'] });
  const runStore = new InMemoryRunStore({ redactionPolicy: redaction });
  const agent = new Agent({
    card: { name: 'orders-agent' },
    instructions: 'Look orders up with the tool.',
    llm: new ScriptedLLM([
      {
        content: '',
        toolCalls: [
          {
            id: 'call_1',
            name: 'lookup_order',
            arguments: { order: 1001, api_key: 'sk-live-do-not-log', customer_email: 'ann@example.com' },
          },
        ],
      },
      { content: 'Order 1001 has shipped.', toolCalls: [] },
    ]),
    tools: [
      {
        name: 'lookup_order',
        description: 'Finds an order',
        parameters: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] },
        capabilities: ['orders.read'],
        handler: async ({ order }) => ({ order, status: 'shipped' }),
      },
    ],
    eventSink: sink, // every event of every run
    runStore, // the task's snapshots and the run report, saved redacted at the end of the run
  });

  const task = await agent.handleTask(createTask('Where is order 1001?'));
  console.log(`task ${task.state}: ${recorder.events.length} events recorded`);
  console.log(
    `trace: ${telemetry
      .spans()
      .map((span) => span.name)
      .join(', ')}`,
  );

  // The report: a summary of the run built from its events.
  const report = recorder.toReport({ metadata: { release: '2026.01' } });
  console.log(
    `report: status ${report.status}, ${report.llmMetrics.calls} model calls, ` +
      `${report.actions.length} action(s): ${report.actions.map((a) => `${a.action?.name}=${a.status}`).join(', ')}`,
  );

  // Redaction: toDict() (and JSON.stringify) mask secrets; `redactionPolicy: null` is the raw data.
  const argumentsOf = (data: RunReportData): Record<string, unknown> =>
    data.actions[0]?.action?.payload.arguments as Record<string, unknown>;
  const masked = argumentsOf(report.toDict({ redactionPolicy: redaction }));
  console.log(`redacted arguments: ${JSON.stringify(masked)}`);
  assert.equal(masked.api_key, '[REDACTED]');
  assert.equal(masked.customer_email, '[REDACTED]');
  assert.equal(argumentsOf(report.toDict({ redactionPolicy: null })).api_key, 'sk-live-do-not-log');

  // Replay: the stored report read back; a read-only view, nothing runs again.
  const stored = await runStore.getRunReport(report.runId!);
  assert.ok(stored, 'the run store holds the report');
  assert.ok(!JSON.stringify(stored).includes('sk-live-do-not-log'), 'the stored report holds no secret');
  const replay = new RunReplay(stored);
  console.log(`replayed event types: ${replay.eventTypes.join(' > ')}`);
  const completed = replay.findEvent('action.completed');
  console.log(`tool result: ${JSON.stringify(completed?.payload.result)}`);
  assertRunEvents(replay, ['llm.call.started', 'action.requested', 'action.completed', 'task.status'], {
    mode: 'subsequence',
  });
  assertNoDeniedActions(replay);
  assertBudgetUnder(stored, { maxInputTokens: 10_000, maxOutputTokens: 1_000, maxRuntimeSeconds: 30 });
  console.log('replay assertions passed');
  await runStore.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
