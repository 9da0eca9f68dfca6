/**
 * The four authentication modes, each over HTTP: API key, JWT bearer (HS256), Basic, and OAuth2
 * token exchange (RFC 8693) against a small local HTTP server that plays the token endpoint. For
 * each mode an `AgentClient` with a good credential gets through (the agent answers with the
 * principal the server authenticated), and a request with a bad credential is rejected by the
 * server with 401 before the agent runs.
 *
 * Run it: pnpm --filter @agent/examples run example auth-modes
 */
import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  APIKeyAuth,
  BasicAuth,
  BearerTokenAuth,
  OAuth2DelegationAuth,
  type Authenticator,
} from '@agent/auth';
import { mintJwt } from '@agent/auth/testing';
import { AgentClient } from '@agent/client';
import { createMessage, messageText } from '@agent/core';
import { HTTPTransport } from '@agent/transport-http';

interface Mode {
  name: string;
  /** What the server checks every request with. */
  server: Authenticator;
  /** What the client authenticates its credential with (lazily, on the first call). */
  client: Authenticator;
  credential: string;
  /** The Authorization header of a request the server must refuse. */
  badAuthorization: string;
}

/**
 * A token endpoint: it exchanges a subject token it knows (a user's session, or a token it issued
 * itself) for a fresh access token of the same subject, and answers `invalid_grant` otherwise.
 */
async function startTokenEndpoint(clients: Record<string, string>): Promise<{ url: string; server: Server }> {
  const subjects = new Map([['alice-session-token', 'alice']]);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const answer = (status: number, json: object): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      };
      const request = JSON.parse(body) as Record<string, string>;
      if (clients[request.client_id] !== request.client_secret)
        return answer(401, { error: 'invalid_client' });
      const subject = subjects.get(request.subject_token);
      if (subject === undefined) return answer(400, { error: 'invalid_grant' });
      const accessToken = `at-${randomUUID()}`;
      subjects.set(accessToken, subject);
      answer(200, {
        access_token: accessToken,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: 300,
        sub: subject,
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`, server };
}

async function tryMode(mode: Mode): Promise<void> {
  const server = new HTTPTransport({ url: 'http://127.0.0.1:0', authenticator: mode.server });
  server.onTaskReceived(async (task, ctx) => ({
    ...task,
    state: 'completed',
    messages: [...task.messages, createMessage(`hello ${ctx.security?.principalId}`, { role: 'agent' })],
  }));
  await server.start();
  const transport = new HTTPTransport({
    url: server.url,
    authenticator: mode.client,
    credentials: mode.credential,
  });
  const client = new AgentClient({ transport, baseUrl: server.url });
  try {
    const reply = messageText(await client.sendMessage('hi'));

    // A request with a bad credential: the server answers 401 and the handler never runs.
    const refused = await fetch(`${server.url}/tasks/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: mode.badAuthorization },
      body: JSON.stringify({ id: 't1', messages: [] }),
    });
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    console.log(
      `${mode.name}: good credential -> "${reply}"; bad credential -> ${refused.status} ${error.code} (${error.message})`,
    );
    assert.equal(refused.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
  } finally {
    await transport.stop();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const jwtSecret = 'example-secret-at-least-32-bytes-long';
  const exp = Math.floor(Date.now() / 1000) + 600;
  const apiKey = new APIKeyAuth({ validKeys: { 'sk-example-key': [] } });
  const jwt = new BearerTokenAuth({ secret: jwtSecret, issuer: 'https://idp.example' });
  const basic = new BasicAuth({ validCredentials: { alice: 'correct horse' } });
  const endpoint = await startTokenEndpoint({
    'agent-server': 'server-secret',
    'agent-client': 'client-secret',
  });
  try {
    const modes: Mode[] = [
      {
        name: 'API key',
        server: apiKey,
        client: apiKey,
        credential: 'sk-example-key',
        badAuthorization: 'ApiKey sk-wrong-key',
      },
      {
        name: 'JWT bearer',
        server: jwt,
        client: jwt,
        // In production an identity provider issues this token; mintJwt plays it here.
        credential: mintJwt({ secret: jwtSecret, claims: { sub: 'alice', iss: 'https://idp.example', exp } }),
        badAuthorization: `Bearer ${mintJwt({ secret: 'some-other-secret', claims: { sub: 'mallory', exp } })}`,
      },
      {
        name: 'Basic',
        server: basic,
        client: basic,
        credential: Buffer.from('alice:correct horse').toString('base64'),
        badAuthorization: `Basic ${Buffer.from('alice:wrong').toString('base64')}`,
      },
      {
        name: 'OAuth2 token exchange',
        // Each side exchanges what it receives at the token endpoint with its own client id.
        server: new OAuth2DelegationAuth({
          exchangeEndpoint: endpoint.url,
          clientId: 'agent-server',
          clientSecret: 'server-secret',
          timeoutMs: 5000,
        }),
        client: new OAuth2DelegationAuth({
          exchangeEndpoint: endpoint.url,
          clientId: 'agent-client',
          clientSecret: 'client-secret',
          timeoutMs: 5000,
        }),
        credential: 'alice-session-token',
        badAuthorization: 'Bearer forged-0000',
      },
    ];
    for (const mode of modes) await tryMode(mode);
    console.log('every mode accepted the good credential and refused the bad one');
  } finally {
    endpoint.server.closeAllConnections();
    endpoint.server.close();
    await once(endpoint.server, 'close');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
