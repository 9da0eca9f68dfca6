/**
 * A CPU profile of the reference server's runtime path: the server child runs under
 * `node --cpu-prof` while autocannon drives the HTTP echo, and the .cpuprofile it writes on exit is
 * reduced to self time per function and per package, counting only the samples of the load window.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ServerChild, type ServerSpec } from './child.js';
import { httpLoad } from './load.js';
import { ECHO_TEXT, taskBodyTemplate } from './tasks.js';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  share: number;
  selfMs: number;
}

export interface ProfileSummary {
  /** Sampled non-idle time in the load window. */
  busyMs: number;
  /** `load`: only the samples taken while the load ran; `whole run` if those could not be told apart. */
  window: 'load' | 'whole run';
  functions: ProfileEntry[];
  owners: ProfileEntry[];
}

const REPO = path.resolve(__dirname, '../..');
const TOP = 15;

/** The package (or runtime part) a sampled function belongs to. */
function ownerOf(frame: CpuProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName.startsWith('RegExp:')) return 'regular expressions';
    // ajv compiles its validators with new Function: they have no script URL.
    if (/^validate\d*$/.test(functionName)) return 'ajv (compiled validators)';
    return 'V8 builtins and native code';
  }
  if (url.startsWith('node:')) return 'Node.js core';
  const workspace = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (workspace && !url.includes('/node_modules/'))
    return workspace[1] === 'packages' ? `@agent/${workspace[2]}` : `${workspace[2]} (app)`;
  const dependency = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dependency) return dependency[1]!;
  const file = url.replace(/^file:\/\//, '');
  return file.startsWith(`${REPO}/`) ? path.relative(REPO, file).split('/')[0]! : 'other';
}

function locationOf(frame: CpuProfileNode['callFrame']): string {
  if (frame.url === '') return '';
  const file = frame.url.replace(/^file:\/\//, '');
  const shown = file.startsWith(REPO) ? path.relative(REPO, file) : file.replace(/^.*\/node_modules\//, '');
  // lineNumber is 0-based in the profile.
  return `${shown.replace(/(^|\/)node_modules\/\.pnpm\/[^/]+\/node_modules\//, '$1')}:${frame.lineNumber + 1}`;
}

function top(map: Map<string, number>, total: number, count: number): ProfileEntry[] {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => ({ name, share: micros / total, selfMs: micros / 1000 }));
}

/**
 * Self time per function and per owner over samples between `from` and `to` (µs on the monotonic
 * clock the profile's timestamps use, the same as process.hrtime's). `(idle)` and `(program)` time
 * is left out: it is the process waiting, or V8 work no function owns.
 */
export function summarizeProfile(
  profile: CpuProfile,
  window: { from: number; to: number } | undefined,
): ProfileSummary {
  const from = window?.from ?? -Infinity;
  const to = window?.to ?? Infinity;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at < from || at > to) continue;
    const frame = frames.get(profile.samples[i]!);
    if (!frame || frame.functionName === '(idle)' || frame.functionName === '(program)') continue;
    busy += delta;
    const location = locationOf(frame);
    const name = `${frame.functionName || '(anonymous)'}${location ? ` ${location}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const owner = ownerOf(frame);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + delta);
  }
  return {
    busyMs: busy / 1000,
    window: window ? 'load' : 'whole run',
    functions: top(byFunction, busy, TOP),
    owners: top(byOwner, busy, TOP),
  };
}

const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

export async function profileReferenceServer(
  spec: ServerSpec,
  settings: { connections: number; seconds: number; warmupSeconds: number },
): Promise<ProfileSummary> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-bench-prof-'));
  try {
    const server = await ServerChild.start(spec, { extraNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
    let from: number;
    let to: number;
    try {
      const body = taskBodyTemplate(`echo ${ECHO_TEXT}`);
      const load = (seconds: number) =>
        httpLoad({
          url: server.urls.http,
          path: '/tasks/',
          body,
          connections: settings.connections,
          seconds,
        });
      if (settings.warmupSeconds > 0) await load(settings.warmupSeconds);
      from = monotonicMicros();
      await load(settings.seconds);
      to = monotonicMicros();
    } finally {
      // The profile is written when the child exits, which a graceful stop lets it do.
      await server.stop();
    }
    const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the profiled server wrote no .cpuprofile');
    const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
    const windowed = summarizeProfile(profile, { from, to });
    // Should the clocks ever disagree, the whole profile (start-up included, and said so) is better
    // than nothing.
    return windowed.busyMs > 0 ? windowed : summarizeProfile(profile, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
