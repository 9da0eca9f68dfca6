// `pnpm start`: builds the reference server and the packages it uses, then serves until Ctrl-C or
// SIGTERM. A stop is not a failure: the exit code is 0, also when it comes during the build.
require('./build-and-run.js').main({
  target: '@agent/reference-server',
  entry: 'apps/reference-server/dist/main.js',
  label: 'start',
  args: process.argv.slice(2),
  stoppedCode: 0,
});
