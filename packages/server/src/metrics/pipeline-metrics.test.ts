import { metrics as otelMetrics, type Meter, type MeterProvider } from '@opentelemetry/api';
import { registeredMeter, type MeterLike, type MetricAttributes } from './otel.js';
import { PipelineMetrics } from './pipeline-metrics.js';

interface Recorded {
  instrument: string;
  kind: string;
  value: number;
  attributes: MetricAttributes | undefined;
}

/** A meter that keeps what is recorded through it, as an SDK's would export it. */
function recordingMeter(): { meter: MeterLike; recorded: Recorded[]; observe: () => void } {
  const recorded: Recorded[] = [];
  const callbacks: (() => void)[] = [];
  const adder = (instrument: string, kind: string) => ({
    add: (value: number, attributes?: MetricAttributes) =>
      recorded.push({ instrument, kind, value, attributes }),
  });
  const meter: MeterLike = {
    createCounter: (name) => adder(name, 'counter'),
    createUpDownCounter: (name) => adder(name, 'updown'),
    createHistogram: (name) => ({
      record: (value, attributes) =>
        recorded.push({ instrument: name, kind: 'histogram', value, attributes }),
    }),
    createObservableGauge: (name) => ({
      addCallback: (callback) =>
        callbacks.push(() =>
          callback({
            observe: (value, attributes) =>
              recorded.push({ instrument: name, kind: 'gauge', value, attributes }),
          }),
        ),
    }),
  };
  return { meter, recorded, observe: () => callbacks.forEach((collect) => collect()) };
}

describe('PipelineMetrics through OpenTelemetry', () => {
  afterEach(() => otelMetrics.disable());

  it('records every server instrument through the meter it is given, with the same labels', () => {
    const { meter, recorded, observe } = recordingMeter();
    const metrics = new PipelineMetrics({ meter });
    expect(metrics.otel).toBe(true);
    metrics.request({ operation: 'send_task', transport: 'grpc', outcome: 'ok', seconds: 0.25 });
    metrics.taskStarted('grpc');
    metrics.taskFinished('grpc', 'completed');
    metrics.stream('grpc', 1);
    observe();
    const attributes = { operation: 'send_task', transport: 'grpc', outcome: 'ok' };
    expect(recorded).toEqual([
      { instrument: 'agent.server.requests', kind: 'counter', value: 1, attributes },
      { instrument: 'agent.server.request.duration', kind: 'histogram', value: 0.25, attributes },
      {
        instrument: 'agent.server.active_tasks',
        kind: 'updown',
        value: 1,
        attributes: { transport: 'grpc' },
      },
      {
        instrument: 'agent.server.active_tasks',
        kind: 'updown',
        value: -1,
        attributes: { transport: 'grpc' },
      },
      {
        instrument: 'agent.server.tasks.finished',
        kind: 'counter',
        value: 1,
        attributes: { transport: 'grpc', state: 'completed' },
      },
      {
        instrument: 'agent.server.active_streams',
        kind: 'updown',
        value: 1,
        attributes: { transport: 'grpc' },
      },
      {
        instrument: 'agent.server.task_store.pending_writes',
        kind: 'gauge',
        value: 0,
        attributes: undefined,
      },
    ]);
    // The Prometheus registry has the same numbers.
    expect(metrics.prometheus()).toContain(
      'agent_server_requests_total{operation="send_task",transport="grpc",outcome="ok"} 1',
    );
  });

  it("uses the registered provider's meter, and none when no provider is registered", () => {
    expect(registeredMeter('@agent/server')).toBeUndefined();
    expect(new PipelineMetrics().otel).toBe(false);

    const { meter, recorded } = recordingMeter();
    const provider: MeterProvider = { getMeter: () => meter as unknown as Meter };
    otelMetrics.setGlobalMeterProvider(provider);
    expect(registeredMeter('@agent/server')).toBe(meter);
    const metrics = new PipelineMetrics();
    expect(metrics.otel).toBe(true);
    metrics.request({ operation: 'get_card', transport: 'http', outcome: 'ok', seconds: 0.001 });
    expect(recorded.map((r) => r.instrument)).toEqual([
      'agent.server.requests',
      'agent.server.request.duration',
    ]);

    // `meter: false` keeps to the in-process registry whatever is registered.
    expect(new PipelineMetrics({ meter: false }).otel).toBe(false);
  });

  it('refuses a meter that is not one', () => {
    expect(() => new PipelineMetrics({ meter: {} as MeterLike })).toThrow(
      expect.objectContaining({ code: 'VALUE_ERROR' }),
    );
  });
});
