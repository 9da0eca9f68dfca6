// Builds one workspace package and everything it depends on (turbo, so later runs reuse the cache),
// printing a line per package as its build starts instead of minutes of silence on a fresh clone.
// Turbo's own banner and summary are kept back and shown only when the build fails.
const { spawn } = require('node:child_process');
const path = require('node:path');
const { createInterface } = require('node:readline');

const ROOT = path.resolve(__dirname, '..');
// Turbo prefixes every line of a task with "<package>:build: ".
const TASK_LINE = /^(\S+):build: ?(.*)$/;

/**
 * @param {{ target: string, label: string, out: NodeJS.WritableStream }} options
 *   target: the package to build (with its dependencies); label: the prefix of the progress lines.
 * @returns {{ done: Promise<boolean>, stop(): void }} done: whether the build succeeded;
 *   stop: interrupts it (Ctrl-C in a terminal reaches turbo directly; this is for a stop sent to
 *   the calling process alone).
 */
function startBuild({ target, label, out }) {
  let turboBin;
  try {
    turboBin = require.resolve('turbo/bin/turbo');
  } catch {
    out.write(`${label}: turbo is not installed; run pnpm install --frozen-lockfile first\n`);
    return { done: Promise.resolve(false), stop() {} };
  }
  const started = Date.now();
  const turbo = spawn(
    process.execPath,
    [turboBin, 'run', 'build', `--filter=${target}...`, '--output-logs=new-only'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const heldBack = [];
  let built = 0;
  let cached = 0;
  let stopped = false;
  out.write(`${label}: building ${target} and the workspace packages it uses\n`);
  const onLine = (line) => {
    const task = TASK_LINE.exec(line);
    if (!task) return void heldBack.push(line);
    const [, name, rest] = task;
    if (/^cache (miss|bypass)/.test(rest)) {
      built++;
      out.write(`${label}:   building ${name}\n`);
    } else if (/^cache hit/.test(rest)) cached++;
    // The blank and "> command" lines pnpm prints around each build say nothing; compiler errors do.
    else if (rest.trim() !== '' && !rest.startsWith('> ')) out.write(`${name}: ${rest}\n`);
  };
  createInterface({ input: turbo.stdout }).on('line', onLine);
  createInterface({ input: turbo.stderr }).on('line', onLine);

  const done = new Promise((resolve) => {
    turbo.on('error', (error) => {
      out.write(`${label}: could not run turbo: ${error.message}\n`);
      resolve(false);
    });
    turbo.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (stopped) {
        out.write(`${label}: build interrupted\n`);
        resolve(false);
      } else if (code === 0) {
        const reused = cached ? ` (${cached} up to date)` : '';
        out.write(
          built
            ? `${label}: built ${built} packages in ${seconds} s${reused}\n`
            : `${label}: ${cached} packages up to date (${seconds} s)\n`,
        );
        resolve(true);
      } else {
        out.write(`${heldBack.filter((l) => l.trim() !== '').join('\n')}\n`);
        out.write(`${label}: the build failed (exit ${code}); the compiler's messages are above\n`);
        resolve(false);
      }
    });
  });
  return {
    done,
    stop() {
      stopped = true;
      turbo.kill('SIGTERM');
    },
  };
}

module.exports = { ROOT, startBuild };
