import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// The README's example is this file; running it keeps the documentation honest.
describe('examples/record-redact-store-replay.js', () => {
  it('runs and prints what the README shows', async () => {
    const packageDir = join(__dirname, '..');
    const { stdout } = await run(
      process.execPath,
      [join(packageDir, 'examples', 'record-redact-store-replay.js')],
      { cwd: packageDir },
    );
    expect(stdout.trim().split('\n')).toEqual([
      'redacted api_key: [REDACTED]',
      'stored tasks: task-42=completed',
      'event types: task.status > llm.call.started > llm.call.completed > action.requested > action.started > action.completed > task.status',
      'output tokens: 18',
      'assertions passed',
    ]);
  });
});

describe('examples/task-store.js', () => {
  it('runs and prints what the README shows', async () => {
    const packageDir = join(__dirname, '..');
    const { stdout } = await run(process.execPath, [join(packageDir, 'examples', 'task-store.js')], {
      cwd: packageDir,
    });
    expect(stdout.trim().split('\n')).toEqual([
      'sequences: [ 1, 2 ]',
      'after 1: 2',
      'bob sees: null',
      'page sizes: 2, 2, 1',
      'default owner: ""/anonymous',
    ]);
  });
});

describe('examples/registry-store.js', () => {
  it('runs and prints what the README shows', async () => {
    const packageDir = join(__dirname, '..');
    const { stdout } = await run(process.execPath, [join(packageDir, 'examples', 'registry-store.js')], {
      cwd: packageDir,
    });
    expect(stdout.trim().split('\n')).toEqual([
      'registered: writer until 2026-01-01T00:00:30.000Z',
      'again: exists',
      "bob renews alice's entry: null",
      'text agents: reader, writer',
      'live: writer',
    ]);
  });
});
