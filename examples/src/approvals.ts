/**
 * Approvals: a `CapabilityPolicy` that lets reads through, asks a human (`require_approval`)
 * before a payment, and refuses everything else, plus an approval handler that approves one
 * payment and denies another. A denied action never runs: the task ends `failed` with
 * `ActionDeniedError`, which `sendMessage` rethrows as the typed error.
 *
 * Run it: pnpm --filter @agent/examples run example approvals
 */
import { strict as assert } from 'node:assert';
import { AgentClient } from '@agent/client';
import { ActionDeniedError, createMessage, createTask, messageText } from '@agent/core';
import { Agent, approve, CapabilityPolicy, deny } from '@agent/runtime';
import { RuntimeTransport } from '@agent/transport-memory';

const balances = new Map([['alice', 1000]]);
const APPROVAL_LIMIT = 100;

const agent = new Agent({
  card: { name: 'payments-agent' },
  policy: new CapabilityPolicy({
    'payments.read': 'allow',
    'payments.transfer': 'require_approval',
    'payments.*': 'deny',
  }),
  // Stands in for a human reviewer: small payments are approved, large ones denied.
  approvalHandler: async (request) => {
    const { amount } = request.action.payload.arguments as { amount: number };
    const decision =
      amount <= APPROVAL_LIMIT
        ? approve(request, 'reviewer-bot')
        : deny(request, 'reviewer-bot', `over the ${APPROVAL_LIMIT} limit`);
    console.log(`  reviewer: transfer of ${amount} -> ${decision.approved ? 'approved' : 'denied'}`);
    return decision;
  },
  tools: [
    {
      name: 'balance',
      description: 'Reads the balance of an account',
      parameters: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
      capabilities: ['payments.read'],
      handler: async ({ account }) => ({ balance: balances.get(account as string) ?? 0 }),
    },
    {
      name: 'transfer',
      description: 'Moves money out of an account',
      parameters: {
        type: 'object',
        properties: { account: { type: 'string' }, amount: { type: 'number' } },
        required: ['account', 'amount'],
      },
      capabilities: ['payments.transfer'],
      handler: async ({ account, amount }) => {
        balances.set(account as string, (balances.get(account as string) ?? 0) - (amount as number));
        return { ok: true };
      },
    },
    {
      name: 'close_account',
      description: 'Closes an account',
      parameters: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
      capabilities: ['payments.close'],
      handler: async ({ account }) => ({ closed: balances.delete(account as string) }),
    },
  ],
  // `transfer <amount>` or `close`: every tool call goes through the policy and the reviewer.
  execute: async (task, run) => {
    const [command, amount] = messageText(task.messages.at(-1)).split(' ');
    if (command === 'close') await run.callTool('close_account', { account: 'alice' });
    else await run.callTool('transfer', { account: 'alice', amount: Number(amount) });
    const { balance } = (await run.callTool('balance', { account: 'alice' })) as { balance: number };
    await run.addMessage(createMessage(`done, balance ${balance}`, { role: 'agent' }));
  },
});

async function ask(client: AgentClient, text: string): Promise<string> {
  console.log(`> ${text}`);
  try {
    const answer = messageText(await client.sendMessage(text));
    console.log(`  agent: ${answer}`);
    return answer;
  } catch (error) {
    if (!(error instanceof ActionDeniedError)) throw error;
    console.log(`  refused: ${error.code} (${error.message})`);
    return error.code;
  }
}

async function main(): Promise<void> {
  const runtime = new RuntimeTransport();
  runtime.registerAgent(agent);
  await runtime.start();
  const client = new AgentClient({ transport: runtime, baseUrl: 'runtime://payments-agent' });
  try {
    assert.equal(await ask(client, 'transfer 40'), 'done, balance 960');
    assert.equal(await ask(client, 'transfer 5000'), 'ACTION_DENIED');
    assert.equal(await ask(client, 'close'), 'ACTION_DENIED');

    // The events show each step of the decision.
    const types: string[] = [];
    for await (const event of client.streamTask(createTask('transfer 10'))) types.push(event.type);
    console.log(
      `events of an approved transfer: ${types.filter((type) => /^(action|approval)\./.test(type)).join(' > ')}`,
    );
    assert.equal(balances.get('alice'), 950);
  } finally {
    await runtime.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
