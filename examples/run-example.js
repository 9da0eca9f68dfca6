// `pnpm --filter @agent/examples run example <name>`: builds the examples and the packages they use
// (with progress on stderr), then runs dist/<name>.js and exits with its exit code.
const { readdirSync } = require('node:fs');
const path = require('node:path');

const names = readdirSync(path.join(__dirname, 'src'))
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
  .map((file) => file.slice(0, -'.ts'.length));
const usage = `usage: pnpm example <name> (from the repository root)\nexamples: ${names.join(', ')}`;
const name = (process.argv[2] ?? '').replace(/^src\//, '').replace(/\.ts$/, '');
if (name === '') {
  console.log(usage);
  process.exit(0);
}
if (!names.includes(name)) {
  console.error(`unknown example "${name}"\n${usage}`);
  process.exit(2);
}
require('../scripts/build-and-run.js').main({
  target: '@agent/examples',
  entry: `examples/dist/${name}.js`,
  label: 'example',
  args: process.argv.slice(3),
  stoppedCode: 130,
});
