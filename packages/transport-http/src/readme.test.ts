/**
 * The README's "Extra routes" block, type-checked against this package's sources and run in
 * process, so the documented code cannot rot.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import * as auth from '@agent/auth';
import * as core from '@agent/core';
import * as transport from './index.js';

const root = join(__dirname, '..');
const dir = join(root, 'node_modules', '.cache', 'readme-extra-routes');

function block(): string {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const start = text.indexOf('## Extra routes');
  const match = /^```ts\n([\s\S]*?)^```$/m.exec(text.slice(start));
  if (start === -1 || !match) throw new Error('README.md has no ts block after "## Extra routes"');
  return match[1]!;
}

const OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  esModuleInterop: true,
  skipLibCheck: true,
  types: ['node'],
  noEmit: true,
};

describe('the README example of extra routes', () => {
  const code = block();

  it('type-checks', () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"type": "commonjs"}\n');
    const file = join(dir, 'example.ts');
    // The package itself through its sources: the check needs no build.
    writeFileSync(file, code.replace(`'@agent/transport-http'`, `'../../../src/index.js'`));
    const errors = ts
      .getPreEmitDiagnostics(ts.createProgram([file], OPTIONS))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
  }, 60_000);

  it('runs and prints what its comments say', async () => {
    const source = code.replace(/^void main\(\);\s*$/m, 'exports.main = main;');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { ...OPTIONS, module: ts.ModuleKind.CommonJS, noEmit: false },
    });
    const modules: Record<string, unknown> = {
      '@agent/auth': auth,
      '@agent/core': core,
      '@agent/transport-http': transport,
    };
    const fakeRequire = (name: string): unknown => {
      if (!(name in modules)) throw new Error(`the example imports ${name}`);
      return modules[name];
    };
    const lines: string[] = [];
    const fakeConsole = { log: (...args: unknown[]) => lines.push(args.map(String).join(' ')) };
    const exports: { main?: () => Promise<void> } = {};
    new Function('require', 'exports', 'module', 'console', outputText)(
      fakeRequire,
      exports,
      { exports },
      fakeConsole,
    );
    await exports.main!();
    expect(lines).toEqual(['buy milk', 'true Note todo/today not found']);
  });
});
