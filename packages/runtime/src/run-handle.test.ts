import { setFlagsFromString } from 'node:v8';
import { createTask } from '@agent/core';
import { InMemoryRunStore } from '@agent/events';
import { Agent } from './agent.js';
import type { RunContext } from './run-context.js';
import type { RunHandle } from './task-run.js';

// `%HaveSameMap` reads V8's hidden class of two objects; the flag must be set before it is parsed.
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

async function handlesOf(count: number): Promise<RunHandle[]> {
  const handles: RunHandle[] = [];
  const agent = new Agent({
    card: { name: 'handles' },
    runStore: new InMemoryRunStore(),
    execute: (_task, run) => {
      handles.push(run);
    },
  });
  for (let i = 0; i < count; i++) await agent.handleTask(createTask(`task ${i}`));
  return handles;
}

describe('the RunHandle given to execute', () => {
  it('reads context and signal live, and destructured methods keep working', async () => {
    let seen: { context: RunContext; aborted: boolean } | undefined;
    const agent = new Agent({
      card: { name: 'live' },
      execute: async (_task, run) => {
        const { emit, signal } = run;
        await emit({ type: 'task.progress', progress: 0.5, message: 'half' });
        seen = { context: run.context, aborted: signal.aborted };
      },
    });
    const done = await agent.handleTask(createTask('x'));
    expect(done.state).toBe('completed');
    expect(seen?.aborted).toBe(false);
    expect(seen?.context.runId).toBe((done.metadata.run_context as { run_id: string }).run_id);
  });

  it('of every run has fast properties and one shared hidden class', async () => {
    // An object literal whose getters are new closures per run cannot keep a fast shape: each handle
    // was a dictionary-mode object, and each finished run's graph behind it then survived the young
    // generation's collections until a full one (measured: ~8 KB copied to the old generation per run).
    const [first, second, third] = await handlesOf(3);
    for (const handle of [first!, second!, third!]) expect(hasFastProperties(handle)).toBe(true);
    expect(haveSameMap(first!, second!)).toBe(true);
    expect(haveSameMap(second!, third!)).toBe(true);
  });
});
