// Command-line tokenizer following picocli's rules as Besu configures them: `--opt=value` and `--opt value`,
// booleans by arity (see kinds.ts), multi-value options consuming every following word that is not an
// option name, repeats of single-value options rejected, unknown words collected and reported together.

import { CliUsageError } from './errors.js';
import type { OptionLabel } from './kinds.js';
import { OPTION_SPECS, OPTIONS_BY_NAME, type OptionSpec } from './options.js';

export const HELP_NAMES = ['-h', '--help'] as const;
export const VERSION_NAMES = ['-V', '--version'] as const;

export interface UnmatchedArgument {
  readonly arg: string;
  /** Position in argv (picocli's "at index N"). */
  readonly index: number;
}

export interface ParsedCommandLine {
  /** Converted values of the options given, in the table's value types. */
  readonly values: ReadonlyMap<OptionSpec, unknown>;
  readonly helpRequested: boolean;
  readonly versionRequested: boolean;
  /** Words that are neither known options nor their values (reported by `unmatchedArgumentsError`). */
  readonly unmatched: readonly UnmatchedArgument[];
  /** Index in argv of the subcommand word, when one was found; parsing stops there. */
  readonly subcommandIndex: number | undefined;
}

type MatchedName =
  | { readonly target: 'option'; readonly spec: OptionSpec; readonly attached: string | undefined }
  | { readonly target: 'help' }
  | { readonly target: 'version' };

function matchName(word: string): MatchedName | undefined {
  if ((HELP_NAMES as readonly string[]).includes(word)) return { target: 'help' };
  if ((VERSION_NAMES as readonly string[]).includes(word)) return { target: 'version' };
  if (word.startsWith('--')) {
    const equals = word.indexOf('=');
    const name = equals < 0 ? word : word.slice(0, equals);
    const spec = OPTIONS_BY_NAME.get(name);
    return spec === undefined ? undefined : { target: 'option', spec, attached: equals < 0 ? undefined : word.slice(equals + 1) };
  }
  if (word.startsWith('-') && word.length >= 2) {
    // Short options: `-l DEBUG`, `-l=DEBUG` or `-lDEBUG`.
    const spec = OPTIONS_BY_NAME.get(word.slice(0, 2));
    if (spec === undefined) return undefined;
    if (word.length === 2) return { target: 'option', spec, attached: undefined };
    const rest = word.slice(2);
    return { target: 'option', spec, attached: rest.startsWith('=') ? rest.slice(1) : rest };
  }
  return undefined;
}

/** A word that would be read as an option name, so it cannot be an option's value. */
function isOptionName(word: string): boolean {
  return word === '--' || matchName(word) !== undefined;
}

export function labelOf(spec: OptionSpec): OptionLabel {
  return { name: spec.row.names[0], longestName: spec.longestName, paramLabel: spec.row.kind.paramLabel };
}

/** picocli's option description: multi-value options are described "at index N". */
function describeOption(spec: OptionSpec, index: number): string {
  const at = spec.row.kind.shape === 'list' ? ` at index ${index}` : '';
  return `option '${spec.longestName}'${at} (${spec.row.kind.paramLabel})`;
}

export function isBooleanWord(word: string): boolean {
  const lower = word.toLowerCase();
  return lower === 'true' || lower === 'false';
}

/**
 * Parses the command line (picocli order: conversion and arity errors are thrown where they occur; unknown
 * words are collected). Parsing stops at the first free word that names a subcommand.
 */
export function parseCommandLine(argv: readonly string[], subcommands: ReadonlySet<string> = new Set()): ParsedCommandLine {
  const values = new Map<OptionSpec, unknown>();
  const listEntries = new Map<OptionSpec, string[]>();
  const unmatched: UnmatchedArgument[] = [];
  let helpRequested = false;
  let versionRequested = false;
  let subcommandIndex: number | undefined;
  let afterDoubleDash = false;

  let i = 0;
  while (i < argv.length) {
    const word = argv[i]!;
    if (afterDoubleDash) {
      unmatched.push({ arg: word, index: i });
      i++;
      continue;
    }
    if (word === '--') {
      afterDoubleDash = true;
      i++;
      continue;
    }
    const matched = matchName(word);
    if (matched === undefined) {
      if (subcommands.has(word)) {
        subcommandIndex = i;
        break;
      }
      unmatched.push({ arg: word, index: i });
      i++;
      continue;
    }
    i++;
    if (matched.target === 'help') {
      helpRequested = true;
      continue;
    }
    if (matched.target === 'version') {
      versionRequested = true;
      continue;
    }

    const { spec, attached } = matched;
    const kind = spec.row.kind;
    const label = labelOf(spec);
    if (kind.shape === 'list') {
      const words = attached === undefined ? [] : [attached];
      while (i < argv.length && !isOptionName(argv[i]!) && !subcommands.has(argv[i]!)) {
        words.push(argv[i]!);
        i++;
      }
      if (words.length === 0 && !kind.allowsNoValue) {
        throw new CliUsageError(`Missing required parameter for ${describeOption(spec, 0)}`);
      }
      const entries = listEntries.get(spec) ?? [];
      for (const w of words) entries.push(...w.split(kind.separator));
      listEntries.set(spec, entries);
      continue;
    }

    let valueText: string;
    if (attached !== undefined) {
      valueText = attached;
    } else if (kind.arity === 'flag') {
      valueText = 'true';
    } else if (kind.arity === 'optional') {
      const next = argv[i];
      if (next !== undefined && isBooleanWord(next)) {
        valueText = next;
        i++;
      } else {
        valueText = 'true';
      }
    } else {
      const next = argv[i];
      if (next === undefined) throw new CliUsageError(`Missing required parameter for ${describeOption(spec, 0)}`);
      if (isOptionName(next)) {
        throw new CliUsageError(`Expected parameter for option '${spec.longestName}' but found '${next}'`);
      }
      valueText = next;
      i++;
    }
    if (values.has(spec)) throw new CliUsageError(`${describeOption(spec, 0)} should be specified only once`);
    values.set(spec, kind.convert(valueText, label));
  }

  for (const [spec, entries] of listEntries) {
    if (spec.row.kind.shape === 'list') values.set(spec, spec.row.kind.convert(entries, labelOf(spec)));
  }
  // Keep the table's order so later checks report problems in a stable order.
  const ordered = new Map(OPTION_SPECS.filter((spec) => values.has(spec)).map((spec) => [spec, values.get(spec)]));
  return { values: ordered, helpRequested, versionRequested, unmatched, subcommandIndex };
}

/** picocli's "leading non-alphanumeric characters removed". */
function stripPrefix(name: string): string {
  const start = name.search(/[\p{L}\p{N}]/u);
  return start < 0 ? '' : name.slice(start);
}

/** picocli suggests every visible option name sharing the first two characters (after the dashes). */
function suggestOptionNames(arg: string): string[] {
  const prefix = stripPrefix(arg).slice(0, 2);
  const allNames = [...OPTION_SPECS.flatMap((spec) => spec.row.names), ...HELP_NAMES, ...VERSION_NAMES];
  return allNames.filter((name) => stripPrefix(name).startsWith(prefix));
}

function resemblesOption(arg: string): boolean {
  return arg.length > 1 && arg.startsWith('-');
}

/** The error for unknown options / stray words, in picocli's wording with its suggestion line. */
export function unmatchedArgumentsError(unmatched: readonly UnmatchedArgument[]): CliUsageError {
  const first = unmatched[0];
  if (first === undefined) throw new Error('unmatchedArgumentsError needs at least one argument');
  const plural = unmatched.length > 1;
  const quoted = unmatched.map(({ arg }) => `'${arg}'`).join(', ');
  if (resemblesOption(first.arg)) {
    const suggestions = suggestOptionNames(first.arg);
    return new CliUsageError(
      `Unknown option${plural ? 's' : ''}: ${quoted}`,
      suggestions.length > 0 ? `Possible solutions: ${suggestions.join(', ')}` : undefined,
    );
  }
  return new CliUsageError(`Unmatched argument${plural ? 's from' : ' at'} index ${first.index}: ${quoted}`);
}
