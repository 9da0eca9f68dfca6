/**
 * An in-process metrics registry and its Prometheus text exposition (format 0.0.4). Written here
 * rather than taken from prom-client: the pipeline needs counters, gauges and histograms with
 * fixed label sets and one text writer, a few dozen lines, where prom-client brings a global
 * default registry, default process collectors and its own dependency tree into every server.
 */

/** The `Content-Type` of {@link MetricRegistry.exposition}'s text. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Kind = 'counter' | 'gauge' | 'histogram';

/** One series' label values, in the order of its family's label names. */
export type LabelValues = readonly string[];

abstract class Family {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
    readonly labelNames: readonly string[],
  ) {}

  /** Appends the family's sample lines (without HELP and TYPE). */
  abstract samples(out: string[]): void;

  protected key(labels: LabelValues): string {
    if (labels.length !== this.labelNames.length) {
      throw new RangeError(`${this.name} takes ${this.labelNames.length} label values, got ${labels.length}`);
    }
    // A NUL cannot occur in the values the pipeline records, so the join is unambiguous.
    return labels.join('\u0000');
  }
}

export class Counter extends Family {
  private readonly series = new Map<string, { labels: LabelValues; value: number }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'counter', labelNames);
  }

  inc(labels: LabelValues, by = 1): void {
    const key = this.key(labels);
    const found = this.series.get(key);
    if (found) found.value += by;
    else this.series.set(key, { labels: [...labels], value: by });
  }

  /** The value of one series (0 when it was never incremented). */
  value(labels: LabelValues): number {
    return this.series.get(this.key(labels))?.value ?? 0;
  }

  samples(out: string[]): void {
    for (const { labels, value } of this.series.values()) {
      out.push(`${this.name}${labelText(this.labelNames, labels)} ${formatValue(value)}`);
    }
  }
}

/** A gauge whose series move up and down as things start and end. */
export class Gauge extends Family {
  private readonly series = new Map<string, { labels: LabelValues; value: number }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    super(name, help, 'gauge', labelNames);
  }

  add(labels: LabelValues, delta: number): void {
    const key = this.key(labels);
    const found = this.series.get(key);
    if (found) found.value += delta;
    else this.series.set(key, { labels: [...labels], value: delta });
  }

  value(labels: LabelValues): number {
    return this.series.get(this.key(labels))?.value ?? 0;
  }

  samples(out: string[]): void {
    for (const { labels, value } of this.series.values()) {
      out.push(`${this.name}${labelText(this.labelNames, labels)} ${formatValue(value)}`);
    }
  }
}

/** A gauge read when the registry is scraped (a queue's depth). */
export class CallbackGauge extends Family {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly read: () => Iterable<readonly [LabelValues, number]>,
  ) {
    super(name, help, 'gauge', labelNames);
  }

  samples(out: string[]): void {
    for (const [labels, value] of this.read()) {
      this.key(labels);
      out.push(`${this.name}${labelText(this.labelNames, labels)} ${formatValue(value)}`);
    }
  }
}

interface HistogramSeries {
  labels: LabelValues;
  /** Per bucket, the observations at or below its bound and above the previous one. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Family {
  private readonly series = new Map<string, HistogramSeries>();
  readonly buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, 'histogram', labelNames);
    if (labelNames.includes('le')) throw new RangeError(`${name}: "le" is the histogram's own label`);
    const sorted = [...buckets].sort((a, b) => a - b);
    if (sorted.some((bound, i) => !Number.isFinite(bound) || (i > 0 && bound === sorted[i - 1]))) {
      throw new RangeError(`${name}: bucket bounds must be finite and distinct`);
    }
    this.buckets = sorted;
  }

  observe(labels: LabelValues, value: number): void {
    const key = this.key(labels);
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: [...labels],
        counts: new Array<number>(this.buckets.length).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index !== -1) series.counts[index]! += 1;
    series.sum += value;
    series.count += 1;
  }

  /** How many observations one series has (0 when it has none). */
  count(labels: LabelValues): number {
    return this.series.get(this.key(labels))?.count ?? 0;
  }

  samples(out: string[]): void {
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i]!;
        out.push(this.bucketLine(series.labels, formatValue(bound), cumulative));
      });
      out.push(this.bucketLine(series.labels, '+Inf', series.count));
      const labels = labelText(this.labelNames, series.labels);
      out.push(`${this.name}_sum${labels} ${formatValue(series.sum)}`);
      out.push(`${this.name}_count${labels} ${formatValue(series.count)}`);
    }
  }

  private bucketLine(labels: LabelValues, le: string, value: number): string {
    return `${this.name}_bucket${labelText([...this.labelNames, 'le'], [...labels, le])} ${formatValue(value)}`;
  }
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Families by name, written out in the order they were registered. */
export class MetricRegistry {
  private readonly families = new Map<string, Family>();

  counter(name: string, help: string, labelNames: readonly string[]): Counter {
    return this.register(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[]): Gauge {
    return this.register(new Gauge(name, help, labelNames));
  }

  callbackGauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    read: () => Iterable<readonly [LabelValues, number]>,
  ): CallbackGauge {
    return this.register(new CallbackGauge(name, help, labelNames, read));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.register(new Histogram(name, help, labelNames, buckets));
  }

  /** The Prometheus text exposition (0.0.4) of every family, each with its HELP and TYPE lines. */
  exposition(): string {
    const out: string[] = [];
    for (const family of this.families.values()) {
      out.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
      out.push(`# TYPE ${family.name} ${family.kind}`);
      family.samples(out);
    }
    return out.length === 0 ? '' : `${out.join('\n')}\n`;
  }

  private register<T extends Family>(family: T): T {
    if (!NAME.test(family.name)) throw new RangeError(`Invalid metric name ${JSON.stringify(family.name)}`);
    for (const label of family.labelNames) {
      if (!LABEL.test(label) || label.startsWith('__')) {
        throw new RangeError(`Invalid label name ${JSON.stringify(label)} of ${family.name}`);
      }
    }
    if (this.families.has(family.name)) throw new RangeError(`Metric ${family.name} is registered already`);
    this.families.set(family.name, family);
    return family;
  }
}

function labelText(names: readonly string[], values: LabelValues): string {
  if (names.length === 0) return '';
  return `{${names.map((name, i) => `${name}="${escapeLabelValue(values[i] ?? '')}"`).join(',')}}`;
}

/** Label values escape backslash, double quote and line feed. */
function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text escapes backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
