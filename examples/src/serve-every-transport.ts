/**
 * One agent served over every transport (HTTP, SSE, WebSocket, gRPC and in-process), called over
 * each with the same `AgentClient` code: a message, a streamed task and the agent card.
 *
 * Run it: pnpm --filter @agent/examples run example serve-every-transport
 */
import { strict as assert } from 'node:assert';
import { AgentClient } from '@agent/client';
import { createMessage, createTask, messageText, type Transport } from '@agent/core';
import { Agent } from '@agent/runtime';
import { checkHealth, GRPCTransport } from '@agent/transport-grpc';
import { HTTPTransport } from '@agent/transport-http';
import { RuntimeTransport } from '@agent/transport-memory';
import { SSETransport } from '@agent/transport-sse';
import { WebSocketTransport } from '@agent/transport-ws';

const agent = new Agent({
  card: { name: 'echo-agent', description: 'Replies with what it was told' },
  execute: async (task, run) => {
    const said = messageText(task.messages.at(-1));
    await run.progress(0.5, 'thinking');
    await run.addMessage(createMessage(`you said: ${said}`, { role: 'agent' }));
  },
});

async function main(): Promise<void> {
  // Port 0 everywhere: each server picks a free port; `url` holds the real one after start().
  const servers = {
    http: new HTTPTransport({ url: 'http://127.0.0.1:0' }),
    sse: new SSETransport({ url: 'http://127.0.0.1:0' }),
    ws: new WebSocketTransport({ url: 'ws://127.0.0.1:0' }),
    grpc: new GRPCTransport({ url: 'grpc://127.0.0.1:0', health: true }), // + grpc.health.v1
  };
  const inProcess = new RuntimeTransport();
  const started: Transport[] = [];
  try {
    for (const server of Object.values(servers)) {
      server.bind(agent);
      await server.start();
      started.push(server);
    }
    // A gRPC port has no /readyz: its health service answers instead.
    console.log(`grpc health: ${await checkHealth(servers.grpc.url)}`);
    inProcess.registerAgent(agent); // reachable as runtime://echo-agent
    await inProcess.start();
    started.push(inProcess);

    // The client side of each wire: a transport instance pointed at the server's URL.
    const clients = [
      { name: 'http', transport: new HTTPTransport({ url: servers.http.url }), baseUrl: servers.http.url },
      { name: 'sse', transport: new SSETransport({ url: servers.sse.url }), baseUrl: servers.sse.url },
      { name: 'ws', transport: new WebSocketTransport({ url: servers.ws.url }), baseUrl: servers.ws.url },
      { name: 'grpc', transport: new GRPCTransport({ url: servers.grpc.url }), baseUrl: servers.grpc.url },
      { name: 'memory', transport: inProcess, baseUrl: 'runtime://echo-agent' },
    ];
    for (const { name, transport, baseUrl } of clients) {
      const client = new AgentClient({ transport, baseUrl });
      try {
        const reply = await client.sendMessage(`hello over ${name}`);
        const types: string[] = [];
        for await (const event of client.streamTask(createTask('stream please'))) {
          types.push(event.type === 'task.status' ? `status(${event.state})` : event.type);
        }
        const card = await client.getAgentCard();
        console.log(`${name}: ${messageText(reply)} | stream: ${types.join(' > ')} | card: ${card.name}`);
        assert.equal(messageText(reply), `you said: hello over ${name}`);
        assert.equal(types.at(-1), 'status(completed)');
      } finally {
        await client.close();
        if (transport !== inProcess) await transport.stop(); // closes the client's connections
      }
    }
    console.log('every transport answered');
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
