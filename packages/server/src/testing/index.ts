// @agent/server/testing: the contract suite every transport package runs against itself (under jest).
export { describeTransport, RecordingLogger } from './describe-transport.js';
export { ContractHandler, SECRET_MESSAGE, contractCard } from './contract-handler.js';
export type {
  TransportHarness,
  ContractServerOptions,
  ContractClientOptions,
  ReadinessProbe,
} from './harness.js';
export {
  parsePrometheusText,
  sampleValue,
  type PrometheusFamily,
  type PrometheusSample,
  type MetricType,
} from './prometheus-text.js';
export { countingRelay, type CountingRelay } from './counting-relay.js';
