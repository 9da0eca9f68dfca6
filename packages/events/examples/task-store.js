// Owners, the task event log and keyset pages over a bounded in-memory run store.
// Run with: pnpm --filter @agent/events build && node packages/events/examples/task-store.js
const { createTask } = require('@agent/core');
const { InMemoryRunStore } = require('@agent/events');

async function main() {
  const store = new InMemoryRunStore({ maxTasks: 5000, taskRetentionMs: 60 * 60 * 1000 });
  const alice = { tenant: 'acme', principal_id: 'alice' };
  const bob = { tenant: 'acme', principal_id: 'bob' };

  // One owner's task and its event log; each event gets the next sequence.
  const task = createTask('summarize the report', { id: 'task-1', state: 'working' });
  await store.saveTaskSnapshot(task, { owner: alice });
  const status = (state) => ({
    type: 'task.status',
    task_id: task.id,
    state,
    final: false,
    timestamp: new Date().toISOString(),
  });
  const sequences = await store.appendTaskEvents(alice, task.id, [status('working'), status('working')]);
  console.log('sequences:', sequences);
  const after1 = await store.listTaskEvents(alice, task.id, { after: 1 });
  console.log('after 1:', after1.map((e) => e.sequence).join(', '));

  // Another owner sees nothing, exactly as for an unknown id.
  console.log('bob sees:', await store.getTaskRecord(task.id, bob));

  // Keyset pages, newest first; an empty token ends the walk.
  for (let i = 0; i < 5; i += 1) {
    const done = createTask('done', { id: `done-${i}`, state: 'completed' });
    await store.saveTaskSnapshot(done, { owner: alice });
  }
  let pageToken = '';
  const pages = [];
  do {
    const page = await store.pageTaskRecords({ owner: alice, state: 'completed', pageSize: 2, pageToken });
    pages.push(page.records.length);
    pageToken = page.next_page_token;
  } while (pageToken !== '');
  console.log('page sizes:', pages.join(', '));

  // Code without owners keeps working, under DEFAULT_OWNER.
  await store.saveTaskSnapshot(createTask('legacy', { id: 'task-1' }));
  const record = await store.getTaskRecord('task-1');
  console.log('default owner:', `${JSON.stringify(record.tenant)}/${record.principal_id}`);
  store.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
