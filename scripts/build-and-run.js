// Builds a workspace program with what it uses, then runs it in the foreground and exits with its
// exit code, so a command from the README works on a fresh clone without a separate build step.
// The package.json script that calls this starts with `exec`: without it a shell sits between pnpm
// and this process, dies of Ctrl-C's SIGINT, and pnpm reports a failure for a program that stopped
// cleanly.
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { constants } = require('node:os');
const path = require('node:path');
const { ROOT, startBuild } = require('./build-with-progress.js');

/**
 * @param {{ target: string, entry: string, label: string, args: string[], stoppedCode: number }} options
 *   target: the package to build; entry: the script to run, relative to the repository root;
 *   stoppedCode: the exit code when Ctrl-C or SIGTERM arrives before the program runs.
 */
async function buildAndRun({ target, entry, label, args, stoppedCode }) {
  let build;
  let child;
  let stopped = false;
  // Ctrl-C in a terminal signals the build or the program directly (one process group); a signal
  // sent to this process alone (a process manager, or pnpm passing one on) is forwarded.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      stopped = true;
      if (child) child.kill(signal);
      else build?.stop();
    });
  }
  // Progress goes to stderr so that stdout carries only what the program prints.
  build = startBuild({ target, label, out: process.stderr });
  const built = await build.done;
  if (stopped) return stoppedCode;
  if (!built) return 1;
  child = spawn(process.execPath, [path.join(ROOT, entry), ...args], { stdio: 'inherit' });
  const [code, signal] = await once(child, 'exit');
  return code ?? 128 + (constants.signals[signal] ?? 0);
}

/** Runs `buildAndRun` as the whole process. */
function main(options) {
  buildAndRun(options).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`${options.label}: ${error.message}\n`);
      process.exit(1);
    },
  );
}

module.exports = { main };
