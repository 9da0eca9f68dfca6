import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The directory of a package that the repository root installs as a devDependency, found the
 * way Node finds it (the nearest node_modules upwards) without going through its `exports`,
 * which may not expose package.json.
 */
export function rootToolDir(name: string, from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir)
      throw new Error(`${name} is not installed: run pnpm install at the repository root`);
  }
}

/** The script behind a package's command-line tool (its `bin` entry). */
export function rootToolBin(name: string, command: string): string {
  const dir = rootToolDir(name);
  const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin: string | Record<string, string>;
  };
  const file = typeof bin === 'string' ? bin : bin[command];
  if (!file) throw new Error(`${name} has no ${command} command`);
  return join(dir, file);
}
