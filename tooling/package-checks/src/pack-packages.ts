import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from './run-command.js';
import { tarballName, type WorkspacePackage } from './workspace-packages.js';

export interface PackedPackage extends WorkspacePackage {
  tarball: string;
}

/**
 * `pnpm pack` each package into `destination`: pnpm, not npm, because it rewrites the
 * `workspace:*` ranges to the real versions, as `pnpm publish` will. The packages must be built.
 */
export async function packPackages(
  packages: readonly WorkspacePackage[],
  destination: string,
): Promise<PackedPackage[]> {
  mkdirSync(destination, { recursive: true });
  const packed: PackedPackage[] = [];
  for (const pkg of packages) {
    await runCommand('pnpm', ['pack', '--pack-destination', destination], { cwd: pkg.dir });
    packed.push({ ...pkg, tarball: join(destination, tarballName(pkg)) });
  }
  return packed;
}
