// `pnpm conformance -- --url …`: builds the conformance CLI and what it uses, then runs it with the
// given arguments. Build progress goes to stderr, so stdout is the report alone.
require('./build-and-run.js').main({
  target: '@agent/conformance',
  entry: 'apps/conformance/dist/cli.js',
  label: 'conformance',
  args: process.argv.slice(2),
  stoppedCode: 130,
});
