import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from '@swc/core';
import * as core from '@agent/core';
import type { Task } from '@agent/core';
import * as runtime from './index.js';
import * as testing from './testing/index.js';

/** Runs the README's example block, so the documented code cannot rot. */
describe('README example', () => {
  it('runs and completes with an approved delete', async () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const block = /<!-- readme-example:start -->\s*```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const { code } = transformSync(`${block as string}\nexport { main };`, {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    const lines: string[] = [];
    const fakeConsole = {
      log: (...args: unknown[]) => lines.push(args.map(String).join(' ')),
      error: (...args: unknown[]) => lines.push(args.map(String).join(' ')),
    };
    const modules: Record<string, unknown> = {
      '@agent/runtime': runtime,
      '@agent/runtime/testing': testing,
      '@agent/core': core,
    };
    const fakeRequire = (name: string): unknown => {
      if (!(name in modules)) throw new Error(`example imports ${name}`);
      return modules[name];
    };
    const exports: { main?: () => Promise<Task> } = {};
    new Function('require', 'exports', 'module', 'console', code)(
      fakeRequire,
      exports,
      { exports },
      fakeConsole,
    );
    const task = await (exports.main as () => Promise<Task>)();
    expect(task.state).toBe('completed');
    expect(lines).toEqual(
      expect.arrayContaining(['approval.required', 'approval.decided', 'action.completed']),
    );
    expect(lines.at(-1)).toBe('completed - Deleted rec-42. - records left: rec-43');
  });
});
