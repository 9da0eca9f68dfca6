/**
 * `pnpm conformance -- --url URL [options]` (the usage is in cli-args.ts). With `--transport memory`
 * the suite runs against an in-process reference agent configured from the same environment
 * variables as the reference server (AGENT_AUTH, AGENT_API_KEYS, ...).
 * Exit codes: 0 every case passed, 1 a case failed, 2 the run could not start or write its report;
 * the reason for 2 is one line.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AgentError } from '@agent/core';
import {
  createAuthenticator,
  createDemoAgent,
  createDemoHandler,
  createRunStore,
  loadConfig,
} from '@agent/reference-server';
import { ALL_CASES } from './cases/index.js';
import { parseArgs, USAGE, type CliArgs } from './cli-args.js';
import { presentedToken } from './presented-credentials.js';
import { junitXml, progressLine, resultTable } from './report.js';
import {
  runConformance,
  servesA2A,
  servesRegistry,
  summarize,
  type CaseResult,
  type ConformanceOptions,
} from './runner.js';
import { checkReachable } from './server-reachable.js';

const CONNECT_TIMEOUT_MS = 10_000;

/** A reason the run cannot start or finish, said in one line without a stack. */
class CliError extends Error {}

/** The run's options, and what to close once it is over (the in-process agent's run store). */
async function runOptions(args: CliArgs): Promise<{ options: ConformanceOptions; close(): Promise<void> }> {
  const options: ConformanceOptions = {
    transport: args.transport,
    url: args.url,
    httpUrl: args.httpUrl,
    credentials: args.credentials,
    otherCredentials: args.otherCredentials,
    filter: args.filter,
    caseTimeoutMs: args.timeoutMs,
    onResult: (result) => process.stdout.write(`${progressLine(result)}\n`),
  };
  for (const url of [args.url, args.httpUrl]) if (url) await checkReachable(url, CONNECT_TIMEOUT_MS);
  if (args.registry) options.registry = true;
  else options.registry = await registryServed(args);
  if (args.a2a) options.a2a = true;
  else options.a2a = await a2aServed(args);
  if (args.transport !== 'memory') return { options, close: () => Promise.resolve() };
  const config = loadConfig();
  const authenticator = createAuthenticator(config);
  // The store the reference server would record its tasks in (AGENT_RUN_STORE and its limits).
  const runStore = createRunStore(config.runStore, config.runStoreLimits);
  options.inProcess = {
    agent: createDemoHandler(createDemoAgent({ authenticator, runStore })),
    authenticator,
  };
  return { options, close: async () => await runStore.close() };
}

/**
 * Without `--registry`, whether the server serves the registry, asked before the run when a
 * registry case could run; said in one line when it does not, since its cases are then left out.
 */
async function registryServed(args: CliArgs): Promise<boolean> {
  const httpUrl = args.httpUrl ?? args.url;
  const eligible = ALL_CASES.some((c) => c.registry && (!args.filter || args.filter.test(c.id)));
  if (args.transport !== 'http' || !httpUrl || !eligible) return false;
  const { credentials } = args;
  const auth = credentials
    ? { kind: credentials.kind, token: presentedToken(credentials.kind, credentials.value) }
    : undefined;
  if (await servesRegistry(httpUrl, auth)) return true;
  process.stdout.write(
    'SKIP registry.* : the server serves no registry (GET /registry/agents answered 404); --registry runs them anyway\n',
  );
  return false;
}

/**
 * Without `--a2a`, whether the server serves A2A 1.0, asked before the run when an A2A case could
 * run; said in one line when it does not, since its cases are then left out.
 */
async function a2aServed(args: CliArgs): Promise<boolean> {
  const httpUrl = args.httpUrl ?? args.url;
  const eligible = ALL_CASES.some((c) => c.a2a && (!args.filter || args.filter.test(c.id)));
  if (args.transport !== 'http' || !httpUrl || !eligible) return false;
  if (await servesA2A(httpUrl)) return true;
  process.stdout.write(
    'SKIP a2a.* : the server serves no A2A card (GET /.well-known/agent-card.json answered no card with supportedInterfaces); --a2a runs them anyway\n',
  );
  return false;
}

/** Called once before the run (an unwritable path then stops it before any case) and once after. */
function writeJunit(file: string, xml: string): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, xml);
  } catch (error) {
    throw new CliError(`cannot write the JUnit XML to ${file}: ${(error as Error).message}`);
  }
}

async function main(): Promise<number> {
  // pnpm runs the script in the repository root and says in INIT_CWD where the user ran it.
  const args = parseArgs(process.argv.slice(2), process.env.INIT_CWD ?? process.cwd());
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.junit) writeJunit(args.junit, '');
  const run = await runOptions(args);
  let results: CaseResult[];
  try {
    results = await runConformance(run.options);
  } finally {
    await run.close();
  }
  const { passed, failed } = summarize(results);
  process.stdout.write(`\n${resultTable(results)}\n\n`);
  if (args.junit) {
    writeJunit(args.junit, junitXml(results));
    process.stdout.write(`JUnit XML written to ${args.junit}\n`);
  }
  process.stdout.write(`conformance: ${passed} passed, ${failed} failed\n`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      // Bad arguments, an unreachable server, a bad AGENT_* setting, an unwritable report: the
      // user's to fix, so one line. Anything else is a bug in the suite and keeps its stack.
      if (error instanceof AgentError || error instanceof CliError) {
        process.stderr.write(`conformance: ${error.message}\n`);
        process.exit(2);
      }
      process.stderr.write(`conformance crashed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
