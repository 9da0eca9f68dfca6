/* global setInterval */
// A replica in a process of its own, for tests that kill it: starts a PostgresCoordination (from
// the TypeScript sources, compiled on load by @swc/core), claims the tasks named in argv, prints
// `{"replica_id"}` and then only renews its lease until it is killed.
// argv: <connection string> <coordination options JSON> <tasks JSON: [{owner, task_id}]>
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    module: { type: 'commonjs' },
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
  });
  module._compile(code, filename);
};
// The sources import './x.js' (NodeNext); the file on disk is ./x.ts.
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  try {
    return resolve.call(this, request, ...rest);
  } catch (error) {
    if (request.startsWith('.') && request.endsWith('.js')) {
      return resolve.call(this, `${request.slice(0, -3)}.ts`, ...rest);
    }
    throw error;
  }
};

const { PostgresDatabase } = require('../../database.ts');
const { PostgresCoordination } = require('../postgres-coordination.ts');

async function main() {
  const [url, options, tasks] = process.argv.slice(2);
  const db = new PostgresDatabase({ connectionString: url });
  const coordination = new PostgresCoordination(db, JSON.parse(options));
  await coordination.start();
  for (const { owner, task_id } of JSON.parse(tasks)) await coordination.claimTask(owner, task_id);
  process.stdout.write(`${JSON.stringify({ replica_id: coordination.replicaId })}\n`);
  // The coordination's timers do not hold the process; this does, until the test kills it.
  setInterval(() => undefined, 60_000);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
