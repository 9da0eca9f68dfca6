/**
 * Runs many finished echo tasks through the demo agent's full serving path (the server pipeline with
 * its task store, the runtime) and prints the heap once the store is full and again at the end, as
 * JSON on stdout. It shows that the in-memory task store and the runtime's finished-task window are
 * bounded: the second number stays near the first however many tasks run.
 *
 *   node --expose-gc dist/heap-probe.js [--tasks 200000] [--base 10000] [--max-tasks 10000]
 *
 * It runs in a process of its own, so nothing else in the heap moves the numbers. Tasks go through
 * the in-process transport: a network wire keeps nothing per finished task, so it would only add time.
 */
import { CLIENT_OPERATIONS, createTask } from '@agent/core';
import { InMemoryRunStore } from '@agent/events';
import { RuntimeTransport } from '@agent/transport-memory';
import { createDemoAgent } from './demo-agent.js';

interface ProbeOptions {
  tasks: number;
  base: number;
  maxTasks: number;
}

const CONCURRENCY = 100;

function readOptions(argv: string[]): ProbeOptions {
  const options: ProbeOptions = { tasks: 200_000, base: 10_000, maxTasks: 10_000 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    const value = Number(argv[i + 1]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} needs a positive integer`);
    if (name === '--tasks') options.tasks = value;
    else if (name === '--base') options.base = value;
    else if (name === '--max-tasks') options.maxTasks = value;
    else throw new Error(`Unknown option ${name}; options: --tasks, --base, --max-tasks`);
  }
  if (
    options.base % CONCURRENCY !== 0 ||
    options.tasks % CONCURRENCY !== 0 ||
    options.base >= options.tasks
  ) {
    throw new Error(`--base and --tasks must be multiples of ${CONCURRENCY}, --base below --tasks`);
  }
  return options;
}

function settledHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const agent = createDemoAgent({ runStore: new InMemoryRunStore({ maxTasks: options.maxTasks }) });
  const transport = new RuntimeTransport({});
  transport.registerAgent(agent, { name: 'demo' });
  await transport.start();
  let heapAtBase = 0;
  const started = Date.now();
  for (let done = 0; done < options.tasks; done += CONCURRENCY) {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) =>
        transport.send(CLIENT_OPERATIONS.send_task, 'demo', createTask(`echo task ${done + i}`)),
      ),
    );
    if (done + CONCURRENCY === options.base) heapAtBase = settledHeap();
  }
  const heapAtEnd = settledHeap();
  await transport.stop();
  process.stdout.write(
    `${JSON.stringify({
      tasks: options.tasks,
      base_tasks: options.base,
      max_tasks: options.maxTasks,
      heap_at_base: heapAtBase,
      heap_at_end: heapAtEnd,
      ratio: Number((heapAtEnd / heapAtBase).toFixed(4)),
      seconds: Math.round((Date.now() - started) / 1000),
    })}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`heap-probe: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
