import { parsePrometheusText, sampleValue } from '../testing/prometheus-text.js';
import { MetricRegistry } from './exposition.js';

describe('Prometheus text exposition', () => {
  it('writes counters, gauges and cumulative histograms a strict reader accepts', () => {
    const registry = new MetricRegistry();
    const counter = registry.counter('jobs_total', 'Jobs done.', ['kind']);
    const gauge = registry.gauge('jobs_active', 'Jobs running.', []);
    const histogram = registry.histogram('job_seconds', 'Job time.', ['kind'], [0.1, 1, 10]);
    registry.callbackGauge('queue_depth', 'Waiting.', [], () => [[[], 3]]);
    counter.inc(['a']);
    counter.inc(['a'], 2);
    counter.inc(['b']);
    gauge.add([], 1);
    gauge.add([], 1);
    gauge.add([], -1);
    for (const seconds of [0.05, 0.5, 0.5, 20]) histogram.observe(['a'], seconds);

    const text = registry.exposition();
    const families = parsePrometheusText(text);
    expect(families.get('jobs_total')?.type).toBe('counter');
    expect(sampleValue(families, 'jobs_total', { kind: 'a' })).toBe(3);
    expect(sampleValue(families, 'jobs_active')).toBe(1);
    expect(sampleValue(families, 'queue_depth')).toBe(3);
    expect(sampleValue(families, 'job_seconds_bucket', { kind: 'a', le: '0.1' })).toBe(1);
    expect(sampleValue(families, 'job_seconds_bucket', { kind: 'a', le: '1' })).toBe(3);
    expect(sampleValue(families, 'job_seconds_bucket', { kind: 'a', le: '10' })).toBe(3);
    expect(sampleValue(families, 'job_seconds_bucket', { kind: 'a', le: '+Inf' })).toBe(4);
    expect(sampleValue(families, 'job_seconds_count', { kind: 'a' })).toBe(4);
    expect(sampleValue(families, 'job_seconds_sum', { kind: 'a' })).toBeCloseTo(21.05);
    expect(text).toContain('# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\n');
  });

  it('escapes label values and help text as the format requires', () => {
    const registry = new MetricRegistry();
    registry
      .counter('odd_total', 'A \\ help\nover two lines.', ['value'])
      .inc(['quote " slash \\ line\nend']);
    const text = registry.exposition();
    expect(text).toContain('# HELP odd_total A \\\\ help\\nover two lines.');
    expect(text).toContain('odd_total{value="quote \\" slash \\\\ line\\nend"} 1');
    const families = parsePrometheusText(text);
    expect(families.get('odd_total')?.help).toBe('A \\ help\nover two lines.');
    expect(families.get('odd_total')?.samples[0]?.labels.value).toBe('quote " slash \\ line\nend');
  });

  it('writes an empty registry as empty text, and refuses invalid or repeated names', () => {
    const registry = new MetricRegistry();
    expect(registry.exposition()).toBe('');
    expect(() => registry.counter('bad-name', 'x', [])).toThrow(RangeError);
    expect(() => registry.counter('ok_total', 'x', ['__reserved'])).toThrow(RangeError);
    expect(() => registry.histogram('h', 'x', ['le'], [1])).toThrow(RangeError);
    registry.counter('ok_total', 'x', []);
    expect(() => registry.counter('ok_total', 'x', [])).toThrow(RangeError);
    expect(() => registry.counter('two_total', 'x', ['a']).inc([])).toThrow(RangeError);
  });
});

describe('the strict reader', () => {
  it('refuses what the format does not allow', () => {
    const bad = [
      'x 1', // no final line feed
      'x{a="1} 1\n',
      'x{a="\\t"} 1\n',
      'x one\n',
      '# TYPE x counter\nx -1\n',
      '# TYPE x counter\nx 1\n# TYPE y gauge\ny 1\nx{a="b"} 2\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
      'x 1\nx 2\n',
    ];
    for (const text of bad) expect(() => parsePrometheusText(text)).toThrow();
  });
});
