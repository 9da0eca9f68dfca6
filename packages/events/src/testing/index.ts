// @agent/events/testing: the behaviour suites every store backend runs against itself (under jest),
// and the fixtures they use. A backend in another package (PostgreSQL) passes the same suites.
export { describeRunStore, describeTaskWrites, type StoreHarness } from './run-store-suite.js';
export { describeRegistryStore, type RegistryStoreHarness } from './registry-store-suite.js';
export { describeApprovalStore, type ApprovalStoreHarness } from './approval-store-suite.js';
export { completedRun, manualClock, runContext, type RunScript } from './fixtures.js';
