// Test helpers shared by the workspace's packages (private; never published).
export { createTestPki, type TestPki } from './pki.js';
export { rawRequest, type RawRequestOptions, type RawResponse } from './raw-request.js';
export {
  createTestAgent,
  type CommandRun,
  type TestAgent,
  type TestAgentCounts,
  type TestAgentOptions,
  type TestCommand,
} from './test-agent.js';
export {
  describeTenantOption,
  type TenantOptionHarness,
  type TenantTransport,
} from './tenant-option-suite.js';
export { startServerProcess, type ListeningLine, type ServerProcess } from './server-process.js';
export { requestBytes, socketRequest, type SocketAnswer } from './socket-request.js';
export {
  describeTraceContext,
  TRACE_PARENT,
  OTHER_TRACE_PARENT,
  type TraceContextHarness,
} from './trace-context-suite.js';
export { describeRetryAfterHeader, type RetryAfterHarness } from './retry-after-suite.js';
