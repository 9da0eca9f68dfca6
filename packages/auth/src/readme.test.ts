import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const packageDir = join(__dirname, '..');

describe('README', () => {
  it('the Example block runs against the built package and prints what its comments say', async () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Example'));
    const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBeDefined();
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', code!], { cwd: packageDir });
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^alice \d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
    expect(lines[1]).toBe('UNAUTHENTICATED 401 Missing credentials');
    expect(stdout).toContain("Authorization: 'Bearer eyJ");
    expect(stdout).toContain('"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"');
  });
});
