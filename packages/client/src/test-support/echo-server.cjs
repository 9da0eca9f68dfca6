// A task server in its own process, served by the real HTTPTransport: client.sync blocks the test's
// thread, so the agent it calls must live elsewhere. Prints {"url"} once listening.
// Env AUTH_KEYS=k1,k2 turns on API-key authentication.
'use strict';
const { createMessage, handlerFromFunction, messageText } = require('@agent/core');
const { APIKeyAuth } = require('@agent/auth');
const { HTTPTransport } = require('@agent/transport-http');

const keys = process.env.AUTH_KEYS ? process.env.AUTH_KEYS.split(',') : [];
const authenticator = keys.length
  ? new APIKeyAuth({ validKeys: Object.fromEntries(keys.map((key) => [key, []])) })
  : undefined;

async function onTask(task, ctx) {
  const text = messageText(task.messages[0]);
  if (text === 'hold') {
    // Answers only when the caller goes away.
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  }
  if (text.startsWith('fail ')) {
    const error = { code: 'ACTION_DENIED', message: text.slice(5) };
    return { ...task, state: 'failed', metadata: { ...task.metadata, error } };
  }
  const principal = ctx.security ? ` (${ctx.security.principalId})` : '';
  const reply = createMessage(`echo: ${text}${principal}`, { role: 'agent' });
  return { ...task, state: 'completed', messages: [...task.messages, reply] };
}

async function main() {
  const card = { name: 'echo-server', description: 'test echo agent', url: '' };
  const transport = new HTTPTransport({ url: 'http://127.0.0.1:0', authenticator });
  transport.bind(handlerFromFunction(onTask, { card }));
  await transport.start();
  process.stdout.write(`${JSON.stringify({ url: transport.url })}\n`);
  process.on('SIGTERM', () => transport.stop().then(() => process.exit(0)));
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
