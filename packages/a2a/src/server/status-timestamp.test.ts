import { createMessage, createTask, type Task } from '@agent/core';
import { statusTimestampOf } from './a2a-operations.js';

function taskAt(created: string, messages: string[], artifacts: string[]): Task {
  const task = createTask('x');
  task.created_at = created;
  task.messages = messages.map((timestamp) => ({ ...createMessage('m'), timestamp }));
  task.artifacts = artifacts.map((created_at, index) => ({
    id: `a${index}`,
    parts: [],
    metadata: {},
    created_at,
  }));
  return task;
}

describe('statusTimestampOf', () => {
  it('is the latest of the task, message and artifact timestamps, in the form toISOString writes', () => {
    const cases: [Task, string][] = [
      [taskAt('2026-01-01T00:00:00.000Z', [], []), '2026-01-01T00:00:00.000Z'],
      [
        taskAt('2026-01-01T00:00:00.000Z', ['2026-01-01T00:00:01.500Z', '2026-01-01T00:00:01.250Z'], []),
        '2026-01-01T00:00:01.500Z',
      ],
      [
        taskAt('2026-01-01T00:00:00.000Z', ['2026-01-01T00:00:01.000Z'], ['2026-01-02T00:00:00.000Z']),
        '2026-01-02T00:00:00.000Z',
      ],
      // Other ISO forms are compared by time, not text, and answered in the canonical form.
      [
        taskAt('2025-12-31T00:00:00.000Z', ['2026-01-01T01:50:00+02:00', '2025-12-31T23:45:00.000Z'], []),
        '2025-12-31T23:50:00.000Z',
      ],
      [taskAt('2026-01-01T00:00:00Z', ['2026-01-01T00:00:00.001Z'], []), '2026-01-01T00:00:00.001Z'],
      [taskAt('2026-01-01T00:00:00.000Z', ['not a time'], []), '2026-01-01T00:00:00.000Z'],
      [taskAt('2026-01-01T00:00:00.000Z', ['2026-13-01T00:00:00.000Z'], []), '2026-01-01T00:00:00.000Z'],
    ];
    for (const [task, expected] of cases) expect(statusTimestampOf(task)).toBe(expected);
  });
});
