import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository this package lives in (tooling/package-checks → the root). */
export const REPO_ROOT = resolve(__dirname, '..', '..', '..');

export interface WorkspacePackage {
  name: string;
  version: string;
  dir: string;
  /** Its `@agent/*` runtime dependencies, direct only. */
  agentDependencies: string[];
  readmePath: string;
}

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
}

/** Every package under packages/* that is published: what the release checks run over. */
export function publishablePackages(root: string = REPO_ROOT): WorkspacePackage[] {
  const packagesDir = join(root, 'packages');
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(packagesDir, entry.name))
    .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson }))
    .filter(({ pkg }) => pkg.private !== true)
    .map(({ dir, pkg }) => ({
      name: pkg.name,
      version: pkg.version,
      dir,
      agentDependencies: Object.keys(pkg.dependencies ?? {}).filter((name) => name.startsWith('@agent/')),
      readmePath: join(dir, 'README.md'),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** `@agent/transport-http` → `agent-transport-http-0.1.0.tgz`, the name `pnpm pack` gives it. */
export function tarballName(pkg: Pick<WorkspacePackage, 'name' | 'version'>): string {
  return `${pkg.name.replace(/^@/, '').replace('/', '-')}-${pkg.version}.tgz`;
}
