// A bare HTTP server in its own process, for client.sync retry tests (client.sync blocks the test's
// thread, so the server must live elsewhere). Env SCRIPT maps "<METHOD> <path>" to the error
// answers `{status, code, data?}` a route gives, in order, before it answers normally: the agent's
// card, or a completed task for `GET /tasks/{id}`. `GET /_attempts` tells how many requests each
// route received. Prints {"url"} once listening.
'use strict';
const http = require('node:http');
const { URL } = require('node:url');

const script = JSON.parse(process.env.SCRIPT || '{}');
const attempts = {};

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function answer(route, res) {
  if (route === 'GET /.well-known/agent.json') {
    return send(res, 200, { name: 'scripted', description: 'scripted agent', url: 'http://127.0.0.1' });
  }
  const task = /^GET \/tasks\/([^/]+)$/.exec(route);
  if (task) {
    const id = decodeURIComponent(task[1]);
    const created_at = new Date().toISOString();
    return send(res, 200, { id, state: 'completed', messages: [], artifacts: [], metadata: {}, created_at });
  }
  send(res, 404, { error: { code: 'NOT_FOUND', message: `No route ${route}` } });
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const route = `${req.method} ${new URL(req.url, 'http://x').pathname}`;
    if (route === 'GET /_attempts') return send(res, 200, attempts);
    attempts[route] = (attempts[route] || 0) + 1;
    const failure = (script[route] || []).shift();
    if (!failure) return answer(route, res);
    const error = { code: failure.code, message: `${failure.code} (scripted)` };
    if (failure.data) error.data = failure.data;
    send(res, failure.status, { error });
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
