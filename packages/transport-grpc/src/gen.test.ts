import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const packageDir = path.resolve(__dirname, '..');

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory()
        ? listFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`)
        : [`${prefix}${entry.name}`],
    ),
  );
  return nested.flat().sort();
}

describe('committed generated code', () => {
  it('is exactly what buf + ts-proto generate from proto/ today', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'grpc-gen-'));
    try {
      await run(path.join(packageDir, 'node_modules/.bin/buf'), ['generate', '--output', out], {
        cwd: packageDir,
      });
      const committed = path.join(packageDir, 'src/gen');
      const fresh = path.join(out, 'src/gen');
      const files = await listFiles(committed);
      expect(await listFiles(fresh)).toEqual(files);
      expect(files).toContain('agent/v1/agent.ts');
      for (const file of files) {
        const [left, right] = await Promise.all([
          readFile(path.join(committed, file), 'utf8'),
          readFile(path.join(fresh, file), 'utf8'),
        ]);
        expect({ file, content: right }).toEqual({ file, content: left });
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('passes buf lint', async () => {
    await expect(
      run(path.join(packageDir, 'node_modules/.bin/buf'), ['lint'], { cwd: packageDir }),
    ).resolves.toBeDefined();
  });
});
