import type { GenAiCallAttributes, GenAiMetricsSink, TaskState, TransportKind } from '@agent/core';
import { ValueError } from '@agent/core';
import { checkOptionNames, optionNames } from '@agent/core/internal';
import { MetricRegistry, type Counter, type Gauge, type Histogram, type LabelValues } from './exposition.js';
import { registeredMeter, type MeterLike, type MetricAttributes } from './otel.js';

/** OpenTelemetry's recommended HTTP server buckets, in seconds, with room for long task runs. */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300,
];
/** The GenAI semantic conventions' buckets for `gen_ai.client.token.usage`. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** The GenAI semantic conventions' buckets for `gen_ai.client.operation.duration`, in seconds. */
const GEN_AI_DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

export interface PipelineMetricsOptions {
  /**
   * An OpenTelemetry meter to record every instrument through as well. Default: the meter of the
   * provider registered with `@opentelemetry/api` when the metrics are created, if any; `false`:
   * none, whatever is registered.
   */
  meter?: MeterLike | false;
  /** Bucket bounds of the request duration histogram, in seconds. Default {@link DEFAULT_DURATION_BUCKETS}. */
  durationBuckets?: readonly number[];
}

const OPTION_NAMES = optionNames<PipelineMetricsOptions>({ meter: true, durationBuckets: true });

/** What one finished request tells the metrics. */
export interface RequestSample {
  operation: string;
  transport: TransportKind;
  /** `ok`, or the error code the caller got. */
  outcome: string;
  seconds: number;
}

/** Something whose depth is read at scrape time: the task store's write queue of one ledger. */
export interface QueueSource {
  readonly pendingWrites: number;
}

/**
 * One instrument in both registries: the Prometheus family (always) and the OpenTelemetry one
 * (when a meter is there). OTel attribute keys are the label names with `.` where Prometheus has `_`.
 */
class Pair<TProm, TOtel> {
  constructor(
    readonly prom: TProm,
    readonly otel: TOtel | undefined,
    private readonly keys: readonly string[],
  ) {}

  attributes(labels: LabelValues): MetricAttributes {
    const attributes: MetricAttributes = {};
    this.keys.forEach((key, i) => {
      const value = labels[i];
      // An empty value is an absent attribute (Prometheus treats an empty label the same way).
      if (value !== undefined && value !== '') attributes[key] = value;
    });
    return attributes;
  }
}

type Adder = { add(value: number, attributes?: MetricAttributes): void };
type Recorder = { record(value: number, attributes?: MetricAttributes): void };

const REQUEST_LABELS = ['operation', 'transport', 'outcome'];
const GEN_AI_KEYS = [
  'gen_ai.operation.name',
  'gen_ai.provider.name',
  'gen_ai.request.model',
  'gen_ai.response.model',
];

/**
 * The server's metrics: what every pipeline given this object (the `metrics` option of a transport
 * or a `ServerPipeline`) records, in an in-process registry written out as Prometheus text by
 * {@link prometheus}, and through OpenTelemetry when a meter provider is registered. One instance
 * shared by a server's transports gives one scrape for all of them.
 *
 * | Prometheus | OpenTelemetry | labels |
 * |---|---|---|
 * | `agent_server_requests_total` | `agent.server.requests` | operation, transport, outcome |
 * | `agent_server_request_duration_seconds` | `agent.server.request.duration` (s) | operation, transport, outcome |
 * | `agent_server_tasks_finished_total` | `agent.server.tasks.finished` | transport, state |
 * | `agent_server_active_tasks` | `agent.server.active_tasks` | transport |
 * | `agent_server_active_streams` | `agent.server.active_streams` | transport |
 * | `agent_server_task_store_pending_writes` | `agent.server.task_store.pending_writes` | |
 * | `gen_ai_client_token_usage` | (the runtime's own) | gen_ai_* |
 * | `gen_ai_client_operation_duration_seconds` | (the runtime's own) | gen_ai_*, error_type |
 *
 * It is also a {@link GenAiMetricsSink}: the runtime's LLM calls report their token usage and
 * duration through it into the Prometheus text; their OpenTelemetry form is the runtime's own.
 *
 * OpenTelemetry's metrics API has no proxy provider: create this object after the SDK registered
 * its MeterProvider, or pass `meter`.
 */
export class PipelineMetrics implements GenAiMetricsSink {
  private readonly registry = new MetricRegistry();
  /** True when the instruments are recorded through an OpenTelemetry meter too. */
  readonly otel: boolean;
  private readonly requests: Pair<Counter, Adder>;
  private readonly durations: Pair<Histogram, Recorder>;
  private readonly finished: Pair<Counter, Adder>;
  private readonly tasks: Pair<Gauge, Adder>;
  private readonly streams: Pair<Gauge, Adder>;
  private readonly tokens: Histogram;
  private readonly llmDurations: Histogram;
  private readonly queues = new Set<QueueSource>();

  constructor(options: PipelineMetricsOptions = {}) {
    checkOptionNames('PipelineMetrics', options, OPTION_NAMES);
    if (
      options.meter !== undefined &&
      options.meter !== false &&
      typeof options.meter?.createCounter !== 'function'
    ) {
      throw new ValueError('PipelineMetrics: meter must be an OpenTelemetry Meter or false', {
        data: { option: 'meter' },
      });
    }
    const meter = options.meter === false ? undefined : (options.meter ?? registeredMeter('@agent/server'));
    this.otel = meter !== undefined;
    const r = this.registry;
    this.requests = new Pair(
      r.counter('agent_server_requests_total', 'Requests the server pipeline answered.', REQUEST_LABELS),
      meter?.createCounter('agent.server.requests', {
        description: 'Requests the server pipeline answered.',
      }),
      REQUEST_LABELS,
    );
    const buckets = options.durationBuckets ?? DEFAULT_DURATION_BUCKETS;
    this.durations = new Pair(
      r.histogram(
        'agent_server_request_duration_seconds',
        'How long requests took, from their arrival to their answer (a stream: to its end).',
        REQUEST_LABELS,
        buckets,
      ),
      meter?.createHistogram('agent.server.request.duration', {
        description: 'How long requests took, from their arrival to their answer (a stream: to its end).',
        unit: 's',
        advice: { explicitBucketBoundaries: [...buckets] },
      }),
      REQUEST_LABELS,
    );
    this.finished = new Pair(
      r.counter('agent_server_tasks_finished_total', 'Task runs that ended, by final state.', [
        'transport',
        'state',
      ]),
      meter?.createCounter('agent.server.tasks.finished', {
        description: 'Task runs that ended, by final state.',
      }),
      ['transport', 'state'],
    );
    this.tasks = new Pair(
      r.gauge('agent_server_active_tasks', 'Task runs in progress.', ['transport']),
      meter?.createUpDownCounter('agent.server.active_tasks', { description: 'Task runs in progress.' }),
      ['transport'],
    );
    this.streams = new Pair(
      r.gauge('agent_server_active_streams', 'Event streams open to callers.', ['transport']),
      meter?.createUpDownCounter('agent.server.active_streams', {
        description: 'Event streams open to callers.',
      }),
      ['transport'],
    );
    const pendingHelp = 'Task store writes (snapshots, event batches) waiting their turn.';
    r.callbackGauge('agent_server_task_store_pending_writes', pendingHelp, [], () => [
      [[], this.pendingWrites()],
    ]);
    meter
      ?.createObservableGauge('agent.server.task_store.pending_writes', { description: pendingHelp })
      .addCallback((result) => result.observe(this.pendingWrites()));
    // Prometheus only: the runtime records the GenAI metrics through OpenTelemetry itself
    // (@agent/events' telemetry), so a meter here would count every model call twice.
    const genAiLabels = GEN_AI_KEYS.map((key) => key.replace(/\./g, '_'));
    this.tokens = r.histogram(
      'gen_ai_client_token_usage',
      'Tokens used by LLM calls.',
      [...genAiLabels, 'gen_ai_token_type'],
      TOKEN_BUCKETS,
    );
    this.llmDurations = r.histogram(
      'gen_ai_client_operation_duration_seconds',
      'How long LLM calls took.',
      [...genAiLabels, 'error_type'],
      GEN_AI_DURATION_BUCKETS,
    );
  }

  /** The Prometheus text exposition (format 0.0.4; `PROMETHEUS_CONTENT_TYPE`). */
  prometheus(): string {
    return this.registry.exposition();
  }

  /** @internal One finished request (a stream: once it ended). */
  request(sample: RequestSample): void {
    const labels = [sample.operation, sample.transport, sample.outcome];
    count(this.requests, labels, 1);
    const { prom, otel } = this.durations;
    prom.observe(labels, sample.seconds);
    otel?.record(sample.seconds, this.durations.attributes(labels));
  }

  /** @internal A task run began on `transport`. */
  taskStarted(transport: TransportKind): void {
    count(this.tasks, [transport], 1);
  }

  /** @internal A task run that began on `transport` ended in `state`. */
  taskFinished(transport: TransportKind, state: TaskState): void {
    count(this.tasks, [transport], -1);
    count(this.finished, [transport, state], 1);
  }

  /** @internal A stream opened to a caller, or ended (`delta` -1). */
  stream(transport: TransportKind, delta: 1 | -1): void {
    count(this.streams, [transport], delta);
  }

  /** @internal Reads `source`'s depth at each scrape (a ledger, once however many pipelines serve it). */
  watchQueue(source: QueueSource): void {
    this.queues.add(source);
  }

  recordTokenUsage(tokens: number, tokenType: 'input' | 'output', call: GenAiCallAttributes): void {
    this.tokens.observe([...genAiLabelValues(call), tokenType], tokens);
  }

  recordOperationDuration(seconds: number, call: GenAiCallAttributes): void {
    this.llmDurations.observe([...genAiLabelValues(call), call.errorType ?? ''], seconds);
  }

  private pendingWrites(): number {
    let total = 0;
    for (const source of this.queues) total += source.pendingWrites;
    return total;
  }
}

function count(pair: Pair<Counter | Gauge, Adder>, labels: LabelValues, delta: number): void {
  const { prom, otel } = pair;
  if ('inc' in prom) prom.inc(labels, delta);
  else prom.add(labels, delta);
  otel?.add(delta, pair.attributes(labels));
}

function genAiLabelValues(call: GenAiCallAttributes): string[] {
  return [call.operation, call.provider ?? '', call.requestModel ?? '', call.responseModel ?? ''];
}
