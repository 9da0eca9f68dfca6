import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attwCheck, publintMessages } from './lint-tarball.js';
import { packPackages, type PackedPackage } from './pack-packages.js';
import { publishablePackages } from './workspace-packages.js';

// What is linted is what would be published: the tarball `pnpm pack` makes of the built package.
const packages = publishablePackages();
const destination = mkdtempSync(join(tmpdir(), 'agent-release-lint-'));
let packed: PackedPackage[] = [];

beforeAll(async () => {
  packed = await packPackages(packages, destination);
}, 120_000);

afterAll(() => rmSync(destination, { recursive: true, force: true }));

function tarballOf(name: string): string {
  const pkg = packed.find((p) => p.name === name);
  if (!pkg) throw new Error(`${name} was not packed`);
  return pkg.tarball;
}

test('every package under packages/ is published under @agent/ with the same version', () => {
  expect(packages.length).toBeGreaterThan(0);
  for (const pkg of packages) expect(pkg.name).toMatch(/^@agent\//);
  expect(new Set(packages.map((p) => p.version)).size).toBe(1);
});

describe.each(packages.map((p) => p.name))('%s', (name) => {
  test('publint finds nothing, not even a suggestion', async () => {
    expect(await publintMessages(tarballOf(name))).toEqual([]);
  }, 60_000);

  test('its types resolve in every TypeScript resolution mode (arethetypeswrong, strict profile)', async () => {
    const result = await attwCheck(tarballOf(name));
    if (!result.ok) throw new Error(`attw found problems in ${name}:\n${result.report}`);
  }, 60_000);
});
