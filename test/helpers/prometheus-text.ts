/**
 * A strict reader of the Prometheus text format (0.0.4), for tests that scrape /metrics: every line
 * must be a `# HELP`, a `# TYPE`, a blank line or a sample of the family last declared (a summary's
 * `_sum` and `_count` included), with well-formed labels and a number; anything else throws. So a
 * test that reads a value also checks that the exposition around it is valid.
 */

export interface Sample {
  /** The sample's own name (`x_count` for a summary's count). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.trim() !== '') {
    const match = LABEL.exec(rest);
    if (!match) throw new Error(`malformed labels in: ${line}`);
    const [whole, name, escaped] = match;
    if (Object.hasOwn(labels, name!)) throw new Error(`label ${name} twice in: ${line}`);
    labels[name!] = escaped!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(whole.length);
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  const value = Number(text);
  if (text.trim() === '' || Number.isNaN(value)) throw new Error(`not a number in: ${line}`);
  return value;
}

/** The families of a scrape, by name. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const family = (name: string): Family => {
    if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
    let found = families.get(name);
    if (found === undefined) {
      found = { name, help: '', type: 'untyped', samples: [] };
      families.set(name, found);
    }
    return found;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      current = family(meta[2]!);
      if (meta[1] === 'HELP') current.help = meta[3] ?? '';
      else current.type = meta[3] ?? '';
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`malformed sample line: ${line}`);
    const name = sample[1]!;
    const suffixes = current?.type === 'summary' || current?.type === 'histogram' ? ['', '_sum', '_count', '_bucket'] : [''];
    if (current === undefined || !suffixes.some((suffix) => name === current!.name + suffix)) {
      throw new Error(`sample ${name} outside its family's declaration`);
    }
    current.samples.push({ name, labels: parseLabels(sample[2] ?? '', line), value: parseValue(sample[3]!, line) });
  }
  return families;
}

/** The one sample of `name` (a family or a summary's `_sum`/`_count`) whose labels include `labels`; throws unless exactly one. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const matches = [...families.values()]
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length !== 1) throw new Error(`${matches.length} samples of ${name} ${JSON.stringify(labels)}`);
  return matches[0]!.value;
}
