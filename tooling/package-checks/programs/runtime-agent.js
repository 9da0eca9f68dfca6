// The @agent/runtime README example (one tool, a policy, an approval handler, a budget, ScriptedLLM
// playing the model), then the same kind of agent served by transport name ('http') and called
// through AgentClient: the runtime has to find @agent/transport-http beside this program.
const { createTask, messageText } = require('@agent/core');
const { Agent, CapabilityPolicy, approve, deny } = require('@agent/runtime');
const { ScriptedLLM } = require('@agent/runtime/testing');
const { AgentClient } = require('@agent/client');

const records = new Map([
  ['rec-42', { owner: 'alice' }],
  ['rec-43', { owner: 'bob' }],
]);

const agent = new Agent({
  card: { name: 'records-agent', description: 'Manages records' },
  instructions: 'You manage records. Use the tools.',
  llm: new ScriptedLLM([
    { content: '', toolCalls: [{ id: 'call_1', name: 'delete_record', arguments: { id: 'rec-42' } }] },
    { content: 'Deleted rec-42.', toolCalls: [] },
  ]),
  policy: new CapabilityPolicy({
    'records.read': 'allow',
    'records.delete': 'require_approval',
    'records.*': 'deny',
  }),
  approvalHandler: async (request) => {
    const { id } = request.action.payload.arguments;
    return records.get(id)?.owner === 'alice'
      ? approve(request, 'ops-bot')
      : deny(request, 'ops-bot', 'only alice may delete');
  },
  budget: { maxSteps: 5, maxLlmCalls: 4, maxToolCalls: 2, maxRuntimeSeconds: 30 },
});

agent.registerTool({
  name: 'delete_record',
  description: 'Deletes a record by id',
  parameters: {
    type: 'object',
    properties: { id: { type: 'string' } },
    required: ['id'],
    additionalProperties: false,
  },
  capabilities: ['records.delete'],
  handler: async ({ id }) => ({ deleted: records.delete(id) }),
});

async function runInProcess() {
  let final;
  for await (const event of agent.handleTaskStreaming(createTask('Please delete rec-42'))) {
    console.log(`event: ${event.type}`);
    if (event.type === 'task.status' && event.final) final = event.task;
  }
  console.log(
    `${final?.state} - ${messageText(final?.messages.at(-1))} - records left: ${[...records.keys()].join(',')}`,
  );
}

async function serveByName() {
  const served = new Agent({
    card: { name: 'echo-agent', url: 'http://127.0.0.1:0' },
    transport: 'http',
    execute: async (task, run) => {
      await run.progress(1, 'done');
      return { ...task, state: 'completed' };
    },
  });
  await served.start();
  try {
    // The transport holds the real address after a port-0 start.
    const client = new AgentClient({ transport: served.transport, baseUrl: served.transport.url });
    const done = await client.sendTask(createTask('hello'));
    console.log(`served over http: ${done.state}`);
    await client.close();
  } finally {
    await served.stop();
  }
}

async function main() {
  await runInProcess();
  await serveByName();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
