/** Minimal `--name=value` / `--flag` parsing for the benchmark scripts, with usage on error. */
import { parseArgs } from 'node:util';

export interface FlagSpec {
  /** Default value; the flag's type follows it (number, string or boolean). */
  default: number | string | boolean;
  description: string;
  /** For numbers: smallest accepted value. */
  min?: number;
  /** For numbers: accepted values are below this one. */
  below?: number;
}

export type FlagValues<T extends Record<string, FlagSpec>> = {
  [K in keyof T]: T[K]['default'] extends number ? number : T[K]['default'] extends boolean ? boolean : string;
};

export function usage(script: string, specs: Record<string, FlagSpec>): string {
  const lines = Object.entries(specs).map(([name, spec]) => {
    const form = typeof spec.default === 'boolean' ? `--${name}` : `--${name}=${String(spec.default)}`;
    return `  ${form.padEnd(28)} ${spec.description}`;
  });
  return `usage: node ${script} [flags]\n${lines.join('\n')}`;
}

/** Parses `argv` against `specs`; prints usage and exits on `--help` or a bad value. */
export function parseFlags<T extends Record<string, FlagSpec>>(script: string, specs: T, argv = process.argv.slice(2)): FlagValues<T> {
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  for (const [name, spec] of Object.entries(specs)) options[name] = { type: typeof spec.default === 'boolean' ? 'boolean' : 'string' };
  let parsed: Record<string, string | boolean | undefined>;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<string, string | boolean | undefined>;
  } catch (err) {
    fail(`${err instanceof Error ? err.message : String(err)}\n${usage(script, specs)}`);
  }
  if (parsed.help === true) {
    console.log(usage(script, specs));
    process.exit(0);
  }
  const values: Record<string, number | string | boolean> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const raw = parsed[name];
    if (raw === undefined) {
      values[name] = spec.default;
    } else if (typeof spec.default === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n) || (spec.min !== undefined && n < spec.min) || (spec.below !== undefined && n >= spec.below)) {
        fail(`--${name} must be a number ≥ ${spec.min ?? '-∞'}${spec.below === undefined ? '' : ` and < ${spec.below}`}, got ${String(raw)}`);
      }
      values[name] = n;
    } else {
      values[name] = raw;
    }
  }
  return values as FlagValues<T>;
}

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}
