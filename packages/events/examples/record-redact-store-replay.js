// Record a run, redact it, store it in SQLite, read it back and replay it.
// Run with: pnpm --filter @agent/events build && node packages/events/examples/record-redact-store-replay.js
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { createTask } = require('@agent/core');
const {
  RunRecorder,
  SqliteRunStore,
  RunReplay,
  assertRunEvents,
  assertNoDeniedActions,
  assertBudgetUnder,
} = require('@agent/events');

async function main() {
  // 1. Record: feed the task events a runtime yields (here written out by hand).
  const context = {
    run_id: 'run-42',
    session_id: 'session-7',
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    workspace_uri: null,
    parent_run_id: null,
    agent_chain: ['support-bot'],
    permissions: {},
    budget: null,
    canceled: false,
    metadata: {},
  };
  const task = createTask('look up order 1001', { id: 'task-42', metadata: { run_context: context } });
  const action = {
    action_id: 'act-1',
    kind: 'tool.call',
    name: 'lookup_order',
    payload: { arguments: { order: 1001, api_key: 'sk-live-do-not-log' } },
    capabilities: ['orders.read'],
    artifacts: [],
  };
  const at = (ms) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0, ms)).toISOString();
  const recorder = new RunRecorder({ context });
  for (const event of [
    { type: 'task.status', task_id: task.id, state: 'working', final: false, timestamp: at(0) },
    {
      type: 'llm.call.started',
      task_id: task.id,
      timestamp: at(10),
      provider: 'openai',
      model: 'gpt-4o-mini',
    },
    {
      type: 'llm.call.completed',
      task_id: task.id,
      timestamp: at(400),
      provider: 'openai',
      model: 'gpt-4o-mini',
      usage: { input_tokens: 120, output_tokens: 18 },
      latency_ms: 390,
    },
    { type: 'action.requested', task_id: task.id, timestamp: at(410), action },
    { type: 'action.started', task_id: task.id, timestamp: at(420), action },
    { type: 'action.completed', task_id: task.id, timestamp: at(480), action, result: { status: 'shipped' } },
    {
      type: 'task.status',
      task_id: task.id,
      state: 'completed',
      final: true,
      timestamp: at(500),
      task: { ...task, state: 'completed' },
    },
  ]) {
    recorder.recordTaskEvent(event);
  }
  const report = recorder.toReport({ metadata: { release: '2026.01' } });

  // 2. Redact: toDict() masks secrets with the default policy.
  const redacted = report.toDict();
  console.log('redacted api_key:', redacted.actions[0].action.payload.arguments.api_key);

  // 3. Store: one SQLite file; the report and the task snapshot are saved redacted.
  const dir = mkdtempSync(join(tmpdir(), 'agent-events-example-'));
  const store = new SqliteRunStore({ path: join(dir, 'runs.db') });
  try {
    await store.saveTaskSnapshot({ ...task, state: 'completed' });
    await store.saveRunReport(report);
    const records = await store.listTaskRecords({ sessionId: 'session-7' });
    console.log('stored tasks:', records.map((r) => `${r.task_id}=${r.state}`).join(', '));

    // 4. Replay: a read-only view over the stored report; nothing is re-run.
    const stored = await store.getRunReport('run-42');
    const replay = new RunReplay(stored);
    console.log('event types:', replay.eventTypes.join(' > '));
    console.log('output tokens:', replay.findEvents('llm.call.completed')[0].payload.usage.output_tokens);
    assertRunEvents(replay, ['llm.call.started', 'llm.call.completed', 'action.completed'], {
      mode: 'subsequence',
    });
    assertNoDeniedActions(replay);
    assertBudgetUnder(stored, { maxInputTokens: 1000, maxOutputTokens: 100, maxRuntimeSeconds: 5 });
    console.log('assertions passed');
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
