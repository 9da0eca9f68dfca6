import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface InstallSize {
  /** Bytes of the package's own files. */
  own: number;
  /** Bytes of the package and of every package it pulls in, each counted once. */
  total: number;
}

/** Bytes of the files in a package directory, without its nested node_modules (other packages). */
function directoryBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += directoryBytes(path);
    else if (entry.isFile()) bytes += lstatSync(path).size;
  }
  return bytes;
}

/** Where Node would find `name` from a package in `fromDir`: the nearest node_modules upwards. */
function findInstalled(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * What installing `name` costs, measured in a project where it is installed (an npm project:
 * one real directory per package). Its dependencies are followed the way Node resolves them;
 * optional dependencies and peers count only where they were installed.
 */
export function installSize(projectDir: string, name: string): InstallSize {
  const root = findInstalled(name, projectDir);
  if (!root) throw new Error(`${name} is not installed in ${projectDir}`);
  const seen = new Set<string>();
  const queue = [root];
  let total = 0;
  while (queue.length > 0) {
    const dir = queue.pop() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    total += directoryBytes(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    const required = Object.keys(manifest.dependencies ?? {});
    const optional = [
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ];
    for (const dependency of required) {
      const found = findInstalled(dependency, dir);
      if (!found) throw new Error(`${dependency}, a dependency of ${dir}, is not installed`);
      queue.push(found);
    }
    for (const dependency of optional) {
      const found = findInstalled(dependency, dir);
      if (found) queue.push(found);
    }
  }
  return { own: directoryBytes(root), total };
}

/** Bytes as the README states them: `840 kB`, `4.1 MB` (decimal units, as npm prints sizes). */
export function formatSize(bytes: number): string {
  if (bytes < 1_000_000) return `${Math.max(1, Math.round(bytes / 1000))} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** `840 kB` / `4.1 MB` back to bytes. */
export function parseSize(text: string): number {
  const match = /^([\d.]+) (kB|MB)$/.exec(text.trim());
  if (!match) throw new Error(`not a size: ${text}`);
  return Number(match[1]) * (match[2] === 'MB' ? 1_000_000 : 1000);
}
