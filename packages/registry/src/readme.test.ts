/**
 * The README's example, run as the program a user would write: the block is type-checked against
 * the built declarations and run with node. It lives below node_modules/.cache so that it resolves
 * the same `@agent/*` packages as this one does (the package itself through its built entry).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
const dir = join(root, 'node_modules', '.cache', 'readme-block');

function exampleBlock(): string {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const start = text.indexOf('## Example');
  const match = /^```ts\n([\s\S]*?)^```$/m.exec(text.slice(start));
  if (start === -1 || !match) throw new Error('README.md has no ts block after "## Example"');
  return match[1]!;
}

/** Imports stay on top; the rest runs in an async function, so the block may await at its top level. */
function program(code: string): string {
  const imports: string[] = [];
  const body = code.replace(/^import\s[\s\S]*?from\s+'[^']+';[ \t]*$/gm, (statement) => {
    imports.push(statement.replace(`'@agent/registry'`, `'../../..'`));
    return '';
  });
  return `${imports.join('\n')}\nvoid (async () => {\n${body}\n})().catch((error) => {\n  console.error(error);\n  process.exitCode = 1;\n});\nexport {};\n`;
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

describe('the README example', () => {
  const source = program(exampleBlock());
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"type": "commonjs"}\n');

  it('type-checks', () => {
    const file = join(dir, 'example.ts');
    writeFileSync(file, source);
    const errors = ts
      .getPreEmitDiagnostics(ts.createProgram([file], OPTIONS))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
  }, 60_000);

  it('runs and prints what its comments say', async () => {
    const file = join(dir, 'example.js');
    const output = ts.transpileModule(source, {
      compilerOptions: { ...OPTIONS, module: ts.ModuleKind.CommonJS, noEmit: false },
    });
    writeFileSync(file, output.outputText);
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [file], { timeout: 30_000 }, (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'translator true',
      'bonjour',
      'Agent translator is not registered',
    ]);
  }, 45_000);
});
