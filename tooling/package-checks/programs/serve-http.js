// The server half of the @agent/transport-http README example: an API-key protected echo agent
// on a free port. It prints the URL it listens on and stops on SIGTERM or when stdin closes.
const { APIKeyAuth } = require('@agent/auth');
const { createMessage, messageText } = require('@agent/core');
const { HTTPTransport } = require('@agent/transport-http');

async function main() {
  const server = new HTTPTransport({
    url: 'http://127.0.0.1:0',
    authenticator: new APIKeyAuth({ validKeys: { 'sk-demo-key': [] } }),
  });
  server.onTaskReceived(async (task) => ({
    ...task,
    state: 'completed',
    messages: [
      ...task.messages,
      createMessage(`you said: ${messageText(task.messages[0])}`, { role: 'agent' }),
    ],
  }));
  await server.start();
  console.log(`listening on ${server.url}`);
  const stop = () => void server.stop();
  process.once('SIGTERM', stop);
  process.stdin.once('end', stop).resume();
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
