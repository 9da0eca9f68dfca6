import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installIntoFreshProject, type PackageManager } from './fresh-project.js';
import { formatSize, installSize, parseSize } from './install-size.js';
import { packPackages, type PackedPackage } from './pack-packages.js';
import { statedInstallSize } from './readme-install-size.js';
import { runProgram, startServer } from './run-program.js';
import { typecheckConsumer } from './typecheck-consumer.js';
import { publishablePackages } from './workspace-packages.js';

// The README examples run as a user's programs, in fresh npm and pnpm projects that installed the
// packed tarballs (every @agent/* package; third-party dependencies come from the registry).
const PROGRAMS = join(__dirname, '..', 'programs');
const packages = publishablePackages();
const workDir = mkdtempSync(join(tmpdir(), 'agent-tarball-install-'));
let packed: PackedPackage[] = [];

beforeAll(async () => {
  const started = Date.now();
  packed = await packPackages(packages, join(workDir, 'tarballs'));
  console.log(`packed ${packed.length} packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 120_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe.each<PackageManager>(['npm', 'pnpm'])(
  'a fresh %s project with the tarballs installed',
  (manager) => {
    const project = join(workDir, manager);

    beforeAll(async () => {
      const started = Date.now();
      await installIntoFreshProject(manager, project, packed);
      console.log(
        `${manager} install of ${packed.length} tarballs took ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      cpSync(PROGRAMS, project, { recursive: true });
    }, 300_000);

    test('an HTTPTransport server and an AgentClient (async, streaming and client.sync) talk to each other', async () => {
      const server = await startServer(project, 'serve-http.js', /^listening on (\S+)$/);
      try {
        const output = await runProgram(project, 'call-http.js', [server.address]);
        expect(output.split('\n')).toEqual([
          'reply: you said: echo hello',
          'event: task.status',
          'sync: completed - you said: from sync code',
          '',
        ]);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }, 60_000);

    test('the @agent/runtime README agent runs its tool behind policy and approval, then serves by transport name', async () => {
      const output = await runProgram(project, 'runtime-agent.js');
      const lines = output.trimEnd().split('\n');
      expect(lines).toEqual(
        expect.arrayContaining([
          'event: action.policy',
          'event: approval.decided',
          'event: action.completed',
        ]),
      );
      expect(lines.slice(-2)).toEqual([
        'completed - Deleted rec-42. - records left: rec-43',
        'served over http: completed',
      ]);
    }, 60_000);

    test('a strict TypeScript file importing every entry point compiles against the installed declarations', async () => {
      await typecheckConsumer(project);
    }, 120_000);

    if (manager === 'npm') {
      // npm lays out one real directory per package, so the sizes are read there.
      test('every package README states its install size as measured here', () => {
        const wrong: string[] = [];
        for (const pkg of packages) {
          const measured = installSize(project, pkg.name);
          const line = `Install size: ${formatSize(measured.own)} for the package itself, ${formatSize(measured.total)} with everything it pulls in`;
          console.log(`${pkg.name}: ${line}`);
          const stated = statedInstallSize(pkg.readmePath);
          // Third-party releases move the numbers a little; a README is wrong when it is off by more.
          const close = (text: string, bytes: number) =>
            Math.abs(parseSize(text) - bytes) <= Math.max(bytes * 0.2, 100_000);
          if (!stated || !close(stated.own, measured.own) || !close(stated.total, measured.total))
            wrong.push(`${pkg.readmePath}: say "${line}"`);
        }
        expect(wrong).toEqual([]);
      });
    }
  },
);
