import { createTask, ValueError } from '@agent/core';
import { describeRunStore } from '../test-support/run-store-suite.js';
import { InMemoryRunStore } from './in-memory-run-store.js';

describeRunStore('InMemoryRunStore', { open: () => new InMemoryRunStore() });

describe('InMemoryRunStore options', () => {
  it('stores raw data with redactionPolicy null', async () => {
    const store = new InMemoryRunStore({ redactionPolicy: null });
    await store.saveTaskSnapshot(createTask('x', { id: 't', metadata: { api_key: 'k' } }));
    expect((await store.getTaskRecord('t'))!.task.metadata.api_key).toBe('k');
  });

  it('stores what a database would: JSON only', async () => {
    const store = new InMemoryRunStore({ redactionPolicy: null });
    const task = createTask('x', { id: 'c', metadata: { gone: undefined } });
    await store.saveTaskSnapshot(task);
    expect((await store.getTaskRecord('c'))!.task.metadata).not.toHaveProperty('gone');
    task.metadata.self = task;
    await expect(store.saveTaskSnapshot(task)).rejects.toThrow(ValueError);
  });
});
