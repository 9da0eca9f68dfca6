// Sums every workspace's jest JSON results into the one plain line CI reads: "tests: N passed, N failed",
// after the failures themselves: a CI log is read from its end, where turbo's interleaved output of
// the packages would otherwise bury them.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
/** Lines of each failure shown: the assertion and the test's own frame, not the whole stack. */
const FAILURE_LINES = 25;
let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
const failures = [];
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
    for (const suite of r.testResults) {
      const where = path.relative(root, suite.name);
      const failedTests = suite.assertionResults.filter((test) => test.status === 'failed');
      for (const test of failedTests)
        failures.push({ where, title: test.fullName, message: test.failureMessages.join('\n') });
      // A file that failed to run at all (a syntax error, a hook that threw) has no failed test.
      if (suite.status === 'failed' && failedTests.length === 0)
        failures.push({ where, title: '(the file did not run)', message: suite.message });
    }
  }
}
for (const failure of failures) {
  const lines = (failure.message || '').split('\n').filter((line) => line.trim() !== '');
  console.error(`\nFAILED ${failure.where} › ${failure.title}`);
  for (const line of lines.slice(0, FAILURE_LINES)) console.error(`  ${line}`);
  if (lines.length > FAILURE_LINES) console.error(`  … ${lines.length - FAILURE_LINES} more lines`);
}
if (files === 0 || passed + failed === 0) {
  console.error('no jest results found: no test ran');
  process.exit(1);
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
