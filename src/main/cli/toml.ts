// The TOML config file as a source of option values (spec §11.2): keys are long option names without dashes
// (any alias), table headings are ignored (a key is matched by its last path element), values must have
// the option's TOML type and multi-value options must be arrays. Values come out as text, to be converted by
// the option's kind exactly like command-line and environment values.

import TOML from '@ltd/j-toml';
import { CliUsageError } from './errors.js';
import { OPTIONS_BY_TOML_KEY, type OptionSpec } from './options.js';

/** Text of a scalar option, or the entries of a multi-value option. */
export type RawValue = string | readonly string[];

export type ReadFile = (path: string) => string;

interface TomlLeaf {
  readonly key: string;
  readonly value: unknown;
}

const DATE_TIME_CLASSES = [TOML.OffsetDateTime, TOML.LocalDateTime, TOML.LocalDate, TOML.LocalTime];

function isTable(value: unknown): value is Readonly<Record<string, unknown>> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !DATE_TIME_CLASSES.some((dateTimeClass) => value instanceof dateTimeClass)
  );
}

/** Every key/value pair under any table, keyed by its last path element, in file order. */
function leaves(table: Readonly<Record<string, unknown>>): TomlLeaf[] {
  return Object.entries(table).flatMap(([key, value]) => (isTable(value) ? leaves(value) : [{ key, value }]));
}

function hasErrorCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && codes.includes(String(error.code));
}

function readConfigText(path: string, readFile: ReadFile): string {
  try {
    return readFile(path);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) {
      throw new CliUsageError(`Unable to read TOML configuration, file not found: ${path}`);
    }
    throw new CliUsageError(`Unable to read TOML configuration file ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function typeMismatch(spec: OptionSpec, expected: string): CliUsageError {
  return new CliUsageError(`Invalid value for option '${spec.longestName}' in TOML configuration file: expected ${expected}`);
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Applies §11.2's type rules and turns the TOML value into the option's text form. */
function toRawValue(spec: OptionSpec, value: unknown): RawValue {
  const kind = spec.row.kind;
  if (kind.shape === 'list') {
    if (!Array.isArray(value)) throw typeMismatch(spec, 'an array');
    return value.map((element: unknown) => {
      const text = scalarText(element);
      if (text === undefined) throw typeMismatch(spec, 'an array of values');
      return text;
    });
  }
  switch (kind.toml) {
    case 'boolean':
      if (typeof value !== 'boolean') throw typeMismatch(spec, 'a boolean');
      return String(value);
    case 'number':
      // Numbers as TOML numbers; strings are tolerated (needed for wei amounts beyond TOML's 64-bit integers).
      if (typeof value !== 'bigint' && typeof value !== 'number' && typeof value !== 'string') throw typeMismatch(spec, 'a number');
      return String(value);
    case 'string':
      if (typeof value !== 'string') throw typeMismatch(spec, 'a string');
      return value;
  }
}

/**
 * Reads the config file and returns the text value of every option it sets.
 * Throws CliUsageError with Besu's messages for a missing, empty or malformed file and unknown keys.
 */
export function readTomlConfig(path: string, readFile: ReadFile): Map<OptionSpec, RawValue> {
  const text = readConfigText(path, readFile);
  if (text.trim() === '') throw new CliUsageError('Unable to read from empty TOML configuration file.');

  let document: Readonly<Record<string, unknown>>;
  try {
    document = TOML.parse(text, { joiner: '\n', bigint: true });
  } catch (error) {
    throw new CliUsageError(`Invalid TOML configuration: ${error instanceof Error ? error.message : String(error)}`);
  }
  // A file of comments only is as empty as a zero-length one.
  if (Object.keys(document).length === 0) throw new CliUsageError('Unable to read from empty TOML configuration file.');
  const pairs = leaves(document);

  const unknownKeys = [...new Set(pairs.map(({ key }) => key).filter((key) => !OPTIONS_BY_TOML_KEY.has(key)))];
  if (unknownKeys.length > 0) {
    const noun = unknownKeys.length > 1 ? 'options' : 'option';
    throw new CliUsageError(`Unknown ${noun} in TOML configuration file: ${unknownKeys.join(', ')}`);
  }

  const values = new Map<OptionSpec, RawValue>();
  for (const { key, value } of pairs) {
    const spec = OPTIONS_BY_TOML_KEY.get(key)!;
    // The config file cannot name another config file; Besu ignores the key too.
    if (spec.row.key === 'configFile') continue;
    // The same option twice (under two headings, or by two aliases) is ambiguous.
    if (values.has(spec)) throw new CliUsageError(`Option '${spec.row.names[0]}' should be specified only once`);
    values.set(spec, toRawValue(spec, value));
  }
  return values;
}
