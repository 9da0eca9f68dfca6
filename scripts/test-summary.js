// Sums every workspace's jest JSON results into the one plain line CI reads: "tests: N passed, N failed".
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
for (const group of ['packages', 'apps', 'tooling', '.']) {
  const dir = path.join(root, group);
  const names = group === '.' ? ['bench', 'examples', 'fuzz'] : fs.readdirSync(dir);
  for (const name of names) {
    const file = path.join(dir, name, '.jest-results.json');
    if (!fs.existsSync(file)) continue;
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    files++;
    passed += r.numPassedTests;
    failed += r.numFailedTests + (r.numRuntimeErrorTestSuites || 0);
    skipped += r.numPendingTests + (r.numTodoTests || 0);
  }
}
if (files === 0 || passed + failed === 0) {
  console.error('no jest results found: no test ran');
  process.exit(1);
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
