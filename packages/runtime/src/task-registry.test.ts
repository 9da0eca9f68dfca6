import { CancellationToken } from './cancellation.js';
import { TaskRegistry, type ActiveTask } from './task-registry.js';

const owner = { tenant: '', principal_id: 'anonymous' };

function entry(taskId: string): ActiveTask {
  return {
    taskId,
    owner,
    token: new CancellationToken(),
    task: { id: taskId, state: 'working', messages: [], artifacts: [], metadata: {}, created_at: '' },
    done: new Promise(() => undefined),
    finalState: null,
    delegations: new Set(),
  };
}

function finish(registry: TaskRegistry, taskId: string, state: 'completed' | 'failed' = 'completed'): void {
  const running = entry(taskId);
  registry.register(running);
  registry.complete(running, { ...running.task, state });
}

describe('TaskRegistry: finished tasks', () => {
  it('forgets the oldest first past maxFinished, however many came and went', () => {
    const registry = new TaskRegistry({ maxFinished: 100, keepTasks: false });
    for (let i = 0; i < 5_000; i++) finish(registry, `t${i}`);
    expect(registry.finishedState(owner, 't4899')).toBeUndefined();
    expect(registry.finishedState(owner, 't4900')).toBe('completed');
    expect(registry.finishedState(owner, 't4999')).toBe('completed');
    expect(registry.finishedTask(owner, 't4999')).toBeUndefined();
  });

  it('forgets by age, and a task finished again counts from its last finish', () => {
    let now = 0;
    const registry = new TaskRegistry({ retentionMs: 1_000, now: () => now });
    finish(registry, 'a');
    now = 500;
    finish(registry, 'b');
    finish(registry, 'a', 'failed');
    now = 1_200;
    expect(registry.finishedState(owner, 'a')).toBe('failed');
    expect(registry.finishedTask(owner, 'a')?.state).toBe('failed');
    expect(registry.finishedState(owner, 'b')).toBe('completed');
    now = 1_501;
    expect(registry.finishedState(owner, 'a')).toBeUndefined();
    expect(registry.finishedState(owner, 'b')).toBeUndefined();
  });

  it('forgets a finished task once it runs again', () => {
    const registry = new TaskRegistry();
    finish(registry, 'a');
    const again = entry('a');
    registry.register(again);
    expect(registry.finishedState(owner, 'a')).toBeUndefined();
    expect(registry.get(owner, 'a')).toBe(again);
  });
});
