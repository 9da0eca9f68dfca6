// Test helpers shared by the workspace's packages (private; never published).
export { createTestPki, type TestPki } from './pki.js';
