// The conformance suite as a library: run it against any server from a test or a script.
export {
  runConformance,
  servesA2A,
  servesRegistry,
  summarize,
  type ConformanceOptions,
  type CaseResult,
} from './runner.js';
export { ALL_CASES } from './cases/index.js';
export {
  TRANSPORT_NAMES,
  STREAMING_TRANSPORTS,
  type TransportName,
  type ConformanceCase,
  type CaseContext,
  type ServerControl,
} from './context.js';
export { PresentedCredentials, presentedToken, type CredentialKind } from './presented-credentials.js';
export { junitXml, progressLine, resultTable } from './report.js';
export { parseArgs, USAGE, type CliArgs } from './cli-args.js';
