import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from './run-command.js';
import type { PackedPackage } from './pack-packages.js';

export type PackageManager = 'npm' | 'pnpm';

/**
 * The package.json of a user's project that installs the given tarballs. Every `@agent/*` name is
 * also mapped to its tarball in the overrides, so that the packages' dependencies on each other
 * resolve to the tarballs too: nothing named `@agent/*` is fetched from the registry, while every
 * third-party dependency is.
 */
export function projectManifest(
  manager: PackageManager,
  packages: readonly PackedPackage[],
): Record<string, unknown> {
  const tarballs = Object.fromEntries(packages.map((pkg) => [pkg.name, `file:${pkg.tarball}`]));
  return {
    name: `fresh-${manager}-project`,
    version: '1.0.0',
    private: true,
    dependencies: tarballs,
    ...(manager === 'npm' ? { overrides: tarballs } : { pnpm: { overrides: tarballs } }),
  };
}

const INSTALL_ARGS: Record<PackageManager, string[]> = {
  npm: ['install', '--no-audit', '--no-fund', '--loglevel=error'],
  // No lockfile exists yet, and none should be written back into a CI checkout.
  pnpm: ['install', '--no-frozen-lockfile', '--reporter=append-only'],
};

/** Creates `dir` as a fresh project of `manager` and installs the tarballs into it. */
export async function installIntoFreshProject(
  manager: PackageManager,
  dir: string,
  packages: readonly PackedPackage[],
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify(projectManifest(manager, packages), null, 2)}\n`,
  );
  await runCommand(manager, INSTALL_ARGS[manager], { cwd: dir });
}
