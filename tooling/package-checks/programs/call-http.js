// The @agent/client README example against the server that serve-http.js started: async calls,
// a stream, and client.sync (which blocks this thread, so the server lives in another process).
const { APIKeyAuth } = require('@agent/auth');
const { createTask, messageText } = require('@agent/core');
const { HTTPTransport } = require('@agent/transport-http');
const { AgentClient } = require('@agent/client');

async function main() {
  const url = process.argv[2];
  const transport = new HTTPTransport({
    url,
    authenticator: new APIKeyAuth({ validKeys: { 'sk-demo-key': [] } }),
    credentials: 'sk-demo-key',
  });
  const client = new AgentClient({ transport, baseUrl: url });

  const reply = await client.sendMessage('echo hello');
  console.log(`reply: ${messageText(reply)}`);
  for await (const event of client.streamTask(createTask('stream'))) console.log(`event: ${event.type}`);
  const done = client.sync.sendTask(createTask('from sync code'));
  console.log(`sync: ${done.state} - ${messageText(done.messages.at(-1))}`);

  await client.close();
  await transport.stop();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
