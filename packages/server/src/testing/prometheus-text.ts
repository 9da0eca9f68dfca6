/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests of a `/metrics`
 * answer: it throws on anything the format does not allow (a malformed name, label or value, a
 * bad escape, a sample before its TYPE, a family split in two, a repeated series, a histogram
 * whose buckets are not cumulative or whose `+Inf` bucket is not its count).
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface PrometheusSample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusFamily {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: PrometheusSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly MetricType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Parses `text`; throws an Error naming the line for anything outside the format. */
export function parsePrometheusText(text: string): Map<string, PrometheusFamily> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, PrometheusFamily>();
  const finished = new Set<string>();
  let current: PrometheusFamily | undefined;
  const seen = new Set<string>();
  const lines = text === '' ? [] : text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    const enter = (name: string): PrometheusFamily => {
      if (current?.name === name) return current;
      if (current) finished.add(current.name);
      if (finished.has(name)) throw new Error(`${where}: family ${name} appears in two places`);
      const family = families.get(name) ?? {
        name,
        type: 'untyped' as MetricType,
        help: undefined,
        samples: [],
      };
      families.set(name, family);
      current = family;
      return family;
    };
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!match) return; // an ordinary comment
      const [, keyword, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: invalid metric name ${name}`);
      const family = enter(name);
      if (keyword === 'HELP') {
        if (family.help !== undefined) throw new Error(`${where}: second HELP for ${name}`);
        family.help = unescape(rest, false, where);
      } else {
        if (!TYPES.includes(rest as MetricType)) throw new Error(`${where}: unknown type ${rest}`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE of ${name} after its samples`);
        family.type = rest as MetricType;
      }
      return;
    }
    if (line.trim() === '') return;
    const sample = parseSample(line, where);
    const familyName = familyOf(sample.name, current);
    const family = enter(familyName);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: series ${sample.name} repeated`);
    seen.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) checkFamily(family);
  return families;
}

/** A `_bucket`, `_sum` or `_count` sample belongs to the histogram (or summary) being read. */
function familyOf(name: string, current: PrometheusFamily | undefined): string {
  if (current && (current.type === 'histogram' || current.type === 'summary')) {
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (name === `${current.name}${suffix}`) return current.name;
    }
  }
  return name;
}

function parseSample(line: string, where: string): PrometheusSample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`${where}: no metric name in ${JSON.stringify(line)}`);
  const name = nameMatch[0];
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(rest);
      if (!label || !LABEL_NAME.test(label[1]!)) throw new Error(`${where}: malformed label in ${line}`);
      rest = rest.slice(label[0].length);
      let raw = '';
      for (;;) {
        const ch = rest[0];
        if (ch === undefined) throw new Error(`${where}: unterminated label value`);
        if (ch === '"') break;
        if (ch === '\\') {
          raw += rest.slice(0, 2);
          rest = rest.slice(2);
        } else {
          raw += ch;
          rest = rest.slice(1);
        }
      }
      rest = rest.slice(1);
      if (label[1]! in labels) throw new Error(`${where}: label ${label[1]} repeated`);
      labels[label[1]!] = unescape(raw, true, where);
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`${where}: expected , or } in ${line}`);
    }
    rest = rest.slice(1);
  }
  const parts = rest.split(' ');
  if (parts[0] !== '' || parts.length < 2 || parts.length > 3) {
    throw new Error(`${where}: expected " value [timestamp]" in ${line}`);
  }
  const value = parseValue(parts[1]!, where);
  if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2])) throw new Error(`${where}: bad timestamp`);
  return { name, labels, value };
}

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: bad value ${text}`);
  return Number(text);
}

function unescape(text: string, label: boolean, where: string): string {
  return text.replace(/\\(.?)/g, (_, ch: string) => {
    if (ch === '\\') return '\\';
    if (ch === 'n') return '\n';
    if (ch === '"' && label) return '"';
    throw new Error(`${where}: invalid escape \\${ch}`);
  });
}

function checkFamily(family: PrometheusFamily): void {
  if (family.type === 'counter') {
    for (const sample of family.samples) {
      if (!(sample.value >= 0)) throw new Error(`counter ${sample.name} is ${sample.value}`);
    }
  }
  if (family.type !== 'histogram') return;
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${sample.name} without le`);
      entry.buckets.push([parseValue(le, sample.name), sample.value]);
    } else if (sample.name === `${family.name}_count`) entry.count = sample.value;
    else if (sample.name === `${family.name}_sum`) entry.sum = sample.value;
    else throw new Error(`histogram ${family.name} has a sample ${sample.name}`);
  }
  for (const entry of series.values()) {
    const bounds = entry.buckets.map(([bound]) => bound);
    if (bounds.at(-1) !== Infinity) throw new Error(`histogram ${family.name} lacks its +Inf bucket`);
    for (let i = 1; i < entry.buckets.length; i++) {
      const [bound, value] = entry.buckets[i]!;
      const [previousBound, previous] = entry.buckets[i - 1]!;
      if (bound <= previousBound || value < previous) {
        throw new Error(`histogram ${family.name}: buckets are not increasing and cumulative`);
      }
    }
    if (entry.count === undefined || entry.sum === undefined) {
      throw new Error(`histogram ${family.name} lacks _count or _sum`);
    }
    if (entry.buckets.at(-1)![1] !== entry.count) {
      throw new Error(`histogram ${family.name}: the +Inf bucket is not the count`);
    }
  }
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there are none). */
export function sampleValue(
  families: Map<string, PrometheusFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  let total = 0;
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue;
      if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) total += sample.value;
    }
  }
  return total;
}
