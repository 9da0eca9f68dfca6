#!/usr/bin/env node
/**
 * pnpm conformance -- --url http://127.0.0.1:8080 [--transport http|memory|sse|ws|grpc]
 *   [--api-key K | --bearer JWT | --basic user:pass] [--junit file.xml] [--filter regex] [--timeout-ms N]
 * With --transport memory the suite runs against an in-process reference agent configured from the
 * same environment variables as the reference server (AGENT_AUTH, AGENT_API_KEYS, ...).
 */
import { writeFileSync } from 'node:fs';
import { createAuthenticator, createDemoAgent, createDemoHandler, loadConfig } from '@agent/reference-server';
import { TRANSPORT_NAMES, type TransportName } from './context.js';
import type { CredentialKind } from './presented-credentials.js';
import { junitXml, progressLine, resultTable } from './report.js';
import { runConformance, summarize, type ConformanceOptions } from './runner.js';

interface CliArgs {
  url?: string;
  httpUrl?: string;
  transport: TransportName;
  credentials?: { kind: CredentialKind; value: string };
  junit?: string;
  filter?: RegExp;
  timeoutMs?: number;
}

const USAGE =
  'usage: conformance --url URL [--transport http|memory|sse|ws|grpc] [--api-key K | --bearer JWT | --basic user:pass] [--junit FILE] [--filter REGEX] [--timeout-ms N]';

export function parseArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = { transport: 'http' };
  const rest = argv.filter((a) => a !== '--');
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i]!;
    const value = rest[i + 1];
    const need = (): string => {
      if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`);
      i++;
      return value;
    };
    switch (flag) {
      case '--url':
        args.url = need();
        break;
      case '--http-url':
        args.httpUrl = need();
        break;
      case '--transport': {
        const t = need();
        if (!(TRANSPORT_NAMES as readonly string[]).includes(t))
          throw new Error(`unknown transport ${t}\n${USAGE}`);
        args.transport = t as TransportName;
        break;
      }
      case '--api-key':
        args.credentials = { kind: 'apikey', value: need() };
        break;
      case '--bearer':
        args.credentials = { kind: 'bearer', value: need() };
        break;
      case '--basic':
        args.credentials = { kind: 'basic', value: need() };
        break;
      case '--junit':
        args.junit = need();
        break;
      case '--filter':
        args.filter = new RegExp(need());
        break;
      case '--timeout-ms':
        args.timeoutMs = Number(need());
        break;
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  if (!args.url && args.transport !== 'memory') throw new Error(`--url is required\n${USAGE}`);
  return args;
}

async function main(): Promise<number> {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const options: ConformanceOptions = {
    transport: args.transport,
    url: args.url,
    httpUrl: args.httpUrl,
    credentials: args.credentials,
    filter: args.filter,
    caseTimeoutMs: args.timeoutMs,
    onResult: (result) => process.stdout.write(`${progressLine(result)}\n`),
  };
  if (args.transport === 'memory') {
    const config = loadConfig();
    const authenticator = createAuthenticator(config);
    options.inProcess = { agent: createDemoHandler(createDemoAgent({ authenticator })), authenticator };
  }
  const results = await runConformance(options);
  const { passed, failed } = summarize(results);
  process.stdout.write(`\n${resultTable(results)}\n\nconformance: ${passed} passed, ${failed} failed\n`);
  if (args.junit) writeFileSync(args.junit, junitXml(results));
  return failed === 0 && passed > 0 ? 0 : 1;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`conformance crashed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
