/**
 * The demo agent the reference server deploys, so that conformance and users have something real to
 * drive (its commands are documented in the README, "The demo agent"). The command is the first text
 * part: `echo <text>`, `count <name> [<ms>]`, `sleep <ms>`, `fail <text>`, `crash <text>`,
 * `stream <n>`, `tool <name> <json-args>`. It also plays the A2A TCK's scenarios (tck-scenarios.ts).
 */
import {
  AgentError,
  createArtifact,
  createMessage,
  messageText,
  newId,
  ValueError,
  type AgentCard,
  type Task,
} from '@agent/core';
import { Agent, CapabilityPolicy, type AgentOptions, type RunHandle } from '@agent/runtime';
import { runTckScenario, tckScenarioOf } from './tck-scenarios.js';

/** Longest accepted `sleep`, so one request cannot pin a task for hours. */
export const MAX_SLEEP_MS = 10 * 60 * 1000;
/** Largest accepted `stream` count. */
export const MAX_STREAM_CHUNKS = 10_000;
const PROGRESS_INTERVAL_MS = 100;
/** Most counters one agent keeps; the oldest is forgotten first. */
export const MAX_COUNTERS = 10_000;
/** Longest counter name. */
export const MAX_COUNTER_NAME = 128;

export const DEMO_FILES: Readonly<Record<string, string>> = Object.freeze({
  'readme.txt': 'agent-tasks reference server: a demo agent behind every transport.',
  'notes.txt': 'Tools run through capability policy; delete_record needs approval.',
});

/**
 * The demo agent's one side effect a caller can observe: named counters, each run of `count <name>`
 * adds one. A caller that resubmits a task id can tell whether it ran again (the counter moved) or
 * was answered from the stored task (it did not).
 */
export class DemoCounters {
  private readonly counts = new Map<string, number>();

  /** Adds one to the counter and returns its new value. */
  add(name: string): number {
    const value = (this.counts.get(name) ?? 0) + 1;
    // Re-inserted, so the map's order is least recently counted first.
    this.counts.delete(name);
    this.counts.set(name, value);
    if (this.counts.size > MAX_COUNTERS) this.counts.delete(this.counts.keys().next().value!);
    return value;
  }
}

export type DemoAgentOptions = Omit<AgentOptions, 'card' | 'execute' | 'policy'> & {
  card?: Partial<AgentCard>;
};

export function createDemoCard(overrides: Partial<AgentCard> = {}): AgentCard {
  return {
    name: 'reference-agent',
    description: 'Demo agent: echo, sleep, fail, stream and tool commands.',
    url: 'http://127.0.0.1:8080',
    version: '0.1.0',
    capabilities: { streaming: true, transports: ['http', 'sse', 'ws', 'grpc', 'memory'] },
    skills: [
      { id: 'echo', name: 'Echo', description: 'echo <text>: replies with the text and one text artifact' },
      {
        id: 'count',
        name: 'Count',
        description:
          'count <name> [<ms>]: adds one to the counter <name>, works ms milliseconds, replies with the new value',
      },
      {
        id: 'sleep',
        name: 'Sleep',
        description: 'sleep <ms>: works for ms milliseconds, reporting progress every 100 ms',
      },
      { id: 'fail', name: 'Fail', description: 'fail <text>: fails with the text' },
      {
        id: 'crash',
        name: 'Crash',
        description: 'crash <text>: throws an unexpected error; the caller sees only its error_id',
      },
      { id: 'stream', name: 'Stream', description: 'stream <n>: emits n artifact chunks' },
      {
        id: 'tool',
        name: 'Tool',
        description: 'tool <name> <json-args>: calls read_file or delete_record through policy',
      },
    ],
    ...overrides,
  };
}

function lastUserText(task: Task): string {
  const user = [...task.messages].reverse().find((m) => m.role === 'user');
  return messageText(user).trim();
}

function parseCount(raw: string, command: string, max: number): number {
  if (!/^\d+$/.test(raw)) throw new ValueError(`${command} needs a non-negative integer, got "${raw}"`);
  const value = Number(raw);
  if (value > max) throw new ValueError(`${command} accepts at most ${max}, got ${value}`);
  return value;
}

async function sleepCommand(run: RunHandle, ms: number): Promise<void> {
  let elapsed = 0;
  while (elapsed < ms) {
    const step = Math.min(PROGRESS_INTERVAL_MS, ms - elapsed);
    await run.sleep(step);
    elapsed += step;
    await run.emit({
      type: 'task.progress',
      progress: elapsed / ms,
      message: `slept ${elapsed} of ${ms} ms`,
    });
  }
  await run.addMessage(createMessage(`slept ${ms} ms`, { role: 'agent' }));
}

async function streamCommand(run: RunHandle, n: number): Promise<void> {
  const id = newId();
  for (let i = 1; i <= n; i++) {
    run.token.raiseIfCancelled();
    await run.addArtifact(createArtifact(`chunk ${i}`, { id, name: 'stream', metadata: { index: i } }), {
      append: i > 1,
      lastChunk: i === n,
    });
  }
  await run.addMessage(createMessage(`streamed ${n} chunks`, { role: 'agent' }));
}

async function countCommand(run: RunHandle, rest: string, counters: DemoCounters): Promise<void> {
  const [name = '', wait = '0', ...extra] = rest.split(/\s+/);
  if (name === '' || extra.length > 0)
    throw new ValueError('count needs a counter name: count <name> [<ms>]');
  if (name.length > MAX_COUNTER_NAME)
    throw new ValueError(`count accepts names of at most ${MAX_COUNTER_NAME} characters`);
  const ms = parseCount(wait, 'count', MAX_SLEEP_MS);
  // Counted first: a second run of the same task would show while the first one still works.
  const value = String(counters.add(name));
  if (ms > 0) await run.sleep(ms);
  await run.addMessage(createMessage(value, { role: 'agent' }));
  await run.addArtifact(createArtifact(value, { name: 'count', metadata: { counter: name } }));
}

async function toolCommand(run: RunHandle, rest: string): Promise<void> {
  const space = rest.indexOf(' ');
  const name = space === -1 ? rest : rest.slice(0, space);
  const rawArgs = space === -1 ? '{}' : rest.slice(space + 1).trim() || '{}';
  if (!name) throw new ValueError('tool needs a tool name: tool <name> <json-args>');
  let args: unknown;
  try {
    args = JSON.parse(rawArgs);
  } catch {
    throw new ValueError(`tool arguments must be JSON, got ${rawArgs}`);
  }
  const result = await run.callTool(name, args as Record<string, unknown>);
  await run.addMessage(createMessage(JSON.stringify(result), { role: 'agent' }));
  await run.addArtifact(createArtifact({ type: 'data', content: result as never }, { name: name }));
}

/**
 * Runs one demo command; `counters` are the agent's (see {@link DemoCounters}). A message whose id
 * starts with an A2A TCK prefix runs that scenario instead, whatever its text.
 */
export async function executeDemoCommand(
  task: Task,
  run: RunHandle,
  counters: DemoCounters,
): Promise<Task | void> {
  const scenario = tckScenarioOf(task);
  if (scenario !== undefined) return runTckScenario(task, run, scenario);
  const text = lastUserText(task);
  const space = text.search(/\s/);
  const command = (space === -1 ? text : text.slice(0, space)).toLowerCase();
  const rest = space === -1 ? '' : text.slice(space + 1).trim();
  switch (command) {
    case 'echo':
      await run.addMessage(createMessage(rest, { role: 'agent' }));
      await run.addArtifact(createArtifact(rest, { name: 'echo' }));
      return;
    case 'count':
      return countCommand(run, rest, counters);
    case 'sleep':
      return sleepCommand(run, parseCount(rest, 'sleep', MAX_SLEEP_MS));
    case 'fail':
      // The agent's own words for the caller: an AgentError keeps its message.
      throw new AgentError('INTERNAL', rest || 'failed on request');
    case 'crash':
      // An unexpected error: the caller sees only `Internal error` and an error_id; the log has this.
      throw new Error(rest || 'crashed on request');
    case 'stream':
      return streamCommand(run, parseCount(rest, 'stream', MAX_STREAM_CHUNKS));
    case 'tool':
      return toolCommand(run, rest);
    default:
      throw new ValueError(
        `Unknown command "${command}". Commands: echo <text>, count <name> [<ms>], sleep <ms>, fail <text>, crash <text>, stream <n>, tool <name> <json-args>`,
      );
  }
}

/**
 * The demo agent with its two tools, the default policy (records.* needs approval) and its own
 * counters.
 */
export function createDemoAgent(options: DemoAgentOptions = {}): Agent {
  const { card, ...rest } = options;
  const counters = new DemoCounters();
  const records = new Map<string, { id: string; title: string }>([
    ['r1', { id: 'r1', title: 'first record' }],
    ['r2', { id: 'r2', title: 'second record' }],
  ]);
  const agent = new Agent({
    ...rest,
    card: createDemoCard(card),
    policy: new CapabilityPolicy({ 'files.read': 'allow', 'records.*': 'require_approval' }),
    execute: (task, run) => executeDemoCommand(task, run, counters),
  });
  agent.registerTool({
    name: 'read_file',
    description: 'Reads one of the demo files (readme.txt, notes.txt).',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
    capabilities: ['files.read'],
    handler: async (args: Record<string, unknown>) => {
      const path = String(args.path);
      if (!Object.prototype.hasOwnProperty.call(DEMO_FILES, path))
        throw new ValueError(`No such demo file: ${path}`);
      return { path, content: DEMO_FILES[path] };
    },
  });
  agent.registerTool({
    name: 'delete_record',
    description: 'Deletes a demo record by id.',
    parameters: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1 } },
      required: ['id'],
      additionalProperties: false,
    },
    capabilities: ['records.delete'],
    handler: async (args: Record<string, unknown>) => {
      const id = String(args.id);
      const existed = records.delete(id);
      return { id, deleted: existed };
    },
  });
  return agent;
}
