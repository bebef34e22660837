// Value kinds of command-line options: how many words an option takes, which TOML type it accepts, and how
// its text becomes a typed value. Every source (command line, environment, TOML) hands the kind plain text
// (TOML values are type-checked and stringified first, as Besu's TOML default provider does), so a value is
// converted — and rejected — the same way wherever it came from. Conversion messages reproduce picocli's
// and Besu's converters, including the Java exception text where Besu lets it through.

import { CliUsageError, invalidValue } from './errors.js';
import { LOG_LEVELS } from '../../shared/util/log.js';
import type { LogLevel } from '../../shared/util/log.js';
import { isApiGroup, type ApiGroup } from '../../shared/rpc/api-groups.js';
import type { TxType } from '../../shared/ethereum/decoded-tx.js';
import { isMetricCategory, type MetricCategory } from '../metrics/categories.js';

/** How an option is named in messages. */
export interface OptionLabel {
  /** The name Besu's own validation messages use (the first name of the option). */
  readonly name: string;
  /** picocli's messages use the longest name (`--rpc-http-apis` rather than `--rpc-http-api`). */
  readonly longestName: string;
  readonly paramLabel: string;
}

/**
 * Words taken on the command line:
 * - `flag`: none (`--x`), an attached `--x=true|false` is accepted; a separate `false` word is NOT consumed.
 * - `optional`: a boolean with an optional value: bare means true, a following `true`/`false` word is consumed.
 * - `one`: exactly one value, attached (`--x=v`) or as the next word.
 */
export type ScalarArity = 'flag' | 'optional' | 'one';

/** The TOML value type an option accepts (numeric options also accept TOML strings). */
export type TomlType = 'boolean' | 'number' | 'string';

export interface ScalarKind<T> {
  readonly shape: 'scalar';
  readonly arity: ScalarArity;
  readonly toml: TomlType;
  readonly paramLabel: string;
  convert(text: string, option: OptionLabel): T;
}

export interface ListKind<T> {
  readonly shape: 'list';
  /** Whether the option may be given bare with no value at all (picocli arity `0..*` vs `1..*`). */
  readonly allowsNoValue: boolean;
  /** How one word is split into entries. */
  readonly separator: RegExp;
  readonly paramLabel: string;
  /** Turns all entries given for the option in one source (in order) into its value. */
  convert(entries: readonly string[], option: OptionLabel): T;
}

export type Kind<T> = ScalarKind<T> | ListKind<T>;

// ---------------------------------------------------------------------------------------------------------
// Java number parsing, as picocli's and Besu's converters do it.

const DECIMAL_INTEGER = /^[+-]?\d+$/;
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const UNSIGNED_LONG_MAX = 2n ** 64n - 1n;

function parseJavaInteger(text: string, min: bigint, max: bigint): bigint | undefined {
  if (!DECIMAL_INTEGER.test(text)) return undefined;
  const value = BigInt(text);
  return value < min || value > max ? undefined : value;
}

/** picocli's message when a converter throws something other than its own TypeConversionException. */
function cannotConvert(option: OptionLabel, text: string, javaType: string, javaException: string): CliUsageError {
  return invalidValue(option.longestName, `cannot convert '${text}' to ${javaType} (${javaException})`);
}

function forInputString(text: string): string {
  return `java.lang.NumberFormatException: For input string: "${text}"`;
}

// ---------------------------------------------------------------------------------------------------------
// Booleans

function convertBoolean(text: string, option: OptionLabel): boolean {
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw invalidValue(option.longestName, `'${text}' is not a boolean`);
}

function booleanKind(arity: ScalarArity): ScalarKind<boolean> {
  return { shape: 'scalar', arity, toml: 'boolean', paramLabel: '<Boolean>', convert: convertBoolean };
}

/** Besu's usual flag: `--x` or `--x=true|false`. */
export const booleanFlag = booleanKind('flag');
/** `--x`, `--x=false` or `--x false` (e.g. `--tx-pool-no-local-priority`). */
export const booleanWithOptionalValue = booleanKind('optional');
/** A value is required: `--p2p-enabled=false` or `--p2p-enabled false`; bare `--p2p-enabled` is an error. */
export const booleanWithRequiredValue = booleanKind('one');

// ---------------------------------------------------------------------------------------------------------
// Numbers

/** A Java `int` (picocli: `'abc' is not an int`), optionally bounded (Basalt's own range message). */
export function int(options: { paramLabel?: string; min?: number; max?: number } = {}): ScalarKind<number> {
  const { paramLabel = '<INTEGER>', min, max } = options;
  return {
    shape: 'scalar',
    arity: 'one',
    toml: 'number',
    paramLabel,
    convert(text, option) {
      const value = parseJavaInteger(text, INT_MIN, INT_MAX);
      if (value === undefined) throw invalidValue(option.longestName, `'${text}' is not an int`);
      const n = Number(value);
      if (min !== undefined && max !== undefined && (n < min || n > max)) {
        throw invalidValue(option.longestName, `'${text}' must be between ${min} and ${max}`);
      }
      if (min !== undefined && n < min) throw invalidValue(option.longestName, `'${text}' must be at least ${min}`);
      if (max !== undefined && n > max) throw invalidValue(option.longestName, `'${text}' must be at most ${max}`);
      return n;
    },
  };
}

export const port = int({ paramLabel: '<PORT>', min: 0, max: 65535 });

/**
 * A Java `long` used for sizes, counts and ranges, delivered as a `number`. Values beyond 2^53 are rejected
 * with the same message: no such size or range is meaningful, and a silently rounded one would be wrong.
 */
export function long(paramLabel = '<LONG>'): ScalarKind<number> {
  return {
    shape: 'scalar',
    arity: 'one',
    toml: 'number',
    paramLabel,
    convert(text, option) {
      const value = parseJavaInteger(text, BigInt(Number.MIN_SAFE_INTEGER), BigInt(Number.MAX_SAFE_INTEGER));
      if (value === undefined) throw invalidValue(option.longestName, `'${text}' is not a long`);
      return Number(value);
    },
  };
}

/** A Java `long` delivered as a `bigint` (gas amounts, which the EVM handles as bigint). */
export function bigLong(paramLabel = '<LONG>'): ScalarKind<bigint> {
  return {
    shape: 'scalar',
    arity: 'one',
    toml: 'number',
    paramLabel,
    convert(text, option) {
      const value = parseJavaInteger(text, LONG_MIN, LONG_MAX);
      if (value === undefined) throw invalidValue(option.longestName, `'${text}' is not a long`);
      return value;
    },
  };
}

/** Besu registers `Wei.of(Long.parseUnsignedLong(arg))` as the Wei converter: an unsigned 64-bit decimal. */
export const wei: ScalarKind<bigint> = {
  shape: 'scalar',
  arity: 'one',
  toml: 'number',
  paramLabel: '<Wei>',
  convert(text, option) {
    if (text.startsWith('-') && text.length > 1) {
      throw cannotConvert(option, text, 'Wei', `java.lang.NumberFormatException: Illegal leading minus sign on unsigned string ${text}.`);
    }
    if (!/^\+?\d+$/.test(text)) throw cannotConvert(option, text, 'Wei', forInputString(text));
    const value = BigInt(text);
    if (value > UNSIGNED_LONG_MAX) {
      throw cannotConvert(option, text, 'Wei', `java.lang.NumberFormatException: String value ${text} exceeds range of unsigned long.`);
    }
    return value;
  },
};

/** A Java `BigInteger` (picocli's converter lets `new BigInteger(text)`'s exception through). */
export const bigInteger: ScalarKind<bigint> = {
  shape: 'scalar',
  arity: 'one',
  toml: 'number',
  paramLabel: '<BIG INTEGER>',
  convert(text, option) {
    if (text === '' || text === '+' || text === '-') {
      throw cannotConvert(option, text, 'BigInteger', 'java.lang.NumberFormatException: Zero length BigInteger');
    }
    if (!DECIMAL_INTEGER.test(text)) throw cannotConvert(option, text, 'BigInteger', forInputString(text));
    return BigInt(text);
  },
};

/** Besu's `Percentage` (an int 0..100) through its `PercentageConverter`. */
export const percentage: ScalarKind<number> = {
  shape: 'scalar',
  arity: 'one',
  toml: 'number',
  paramLabel: '<Percentage>',
  convert(text, option) {
    const value = parseJavaInteger(text, INT_MIN, INT_MAX);
    if (value === undefined || value < 0n || value > 100n) {
      throw cannotConvert(
        option,
        text,
        'Percentage',
        `org.hyperledger.besu.cli.converter.exception.PercentageConversionException: Invalid value: ${text}, should be a number between 0 and 100 inclusive.`,
      );
    }
    return Number(value);
  },
};

/** Besu's `Fraction` (a float 0.0..1.0) through its `FractionConverter`. */
export const fraction: ScalarKind<number> = {
  shape: 'scalar',
  arity: 'one',
  toml: 'number',
  paramLabel: '<Fraction>',
  convert(text, option) {
    const value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN;
    if (!(value >= 0 && value <= 1)) {
      throw cannotConvert(
        option,
        text,
        'Fraction',
        `org.hyperledger.besu.cli.converter.exception.FractionConversionException: Invalid value: ${text}, should be a number between 0.0 and 1.0 inclusive.`,
      );
    }
    return value;
  },
};

// ---------------------------------------------------------------------------------------------------------
// Text

export function text(paramLabel = '<STRING>'): ScalarKind<string> {
  return { shape: 'scalar', arity: 'one', toml: 'string', paramLabel, convert: (value) => value };
}

export const host = text('<HOST>');
/** A file or directory path, kept as written (relative paths are relative to the working directory). */
export const path = text('<PATH>');
export const file = text('<FILE>');

/**
 * An enum, case-insensitive like all of Besu's enum options. `lenientSeparators` also equates `-` and `_`
 * (`--network=linea-mainnet`). Values are returned in the spelling given here.
 */
export function enumeration<const V extends string>(
  values: readonly V[],
  options: { paramLabel: string; lenientSeparators?: boolean },
): ScalarKind<V> {
  const normalize = (value: string): string => {
    const upper = value.toUpperCase();
    return options.lenientSeparators === true ? upper.replace(/-/g, '_') : upper;
  };
  const byNormalized = new Map(values.map((value) => [normalize(value), value]));
  const expected = `[${values.map((value) => value.toUpperCase()).join(', ')}]`;
  return {
    shape: 'scalar',
    arity: 'one',
    toml: 'string',
    paramLabel: options.paramLabel,
    convert(text, option) {
      const value = byNormalized.get(normalize(text));
      if (value === undefined) {
        throw invalidValue(option.longestName, `expected one of ${expected} (case-insensitive) but was '${text}'`);
      }
      return value;
    },
  };
}

export { LOG_LEVELS };
export type { LogLevel };

/** Besu's `--logging` setter: its own message for bad values, and the deprecated FATAL read as ERROR. */
export const logLevel: ScalarKind<LogLevel> = {
  shape: 'scalar',
  arity: 'one',
  toml: 'string',
  paramLabel: '<LOG VERBOSITY LEVEL>',
  convert(text) {
    const upper = text.toUpperCase();
    if (upper === 'FATAL') return 'ERROR';
    const level = LOG_LEVELS.find((candidate) => candidate === upper);
    if (level === undefined) throw new CliUsageError(`Unknown logging value: ${text}`);
    return level;
  },
};

/** Hex bytes, `0x` optional and an odd digit count left-padded (as Besu's lenient Bytes parsing). */
export function hexBytes(maxLength: number): ScalarKind<Uint8Array> {
  return {
    shape: 'scalar',
    arity: 'one',
    toml: 'string',
    paramLabel: '<Bytes>',
    convert(text, option) {
      const digits = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
      if (!/^[0-9a-fA-F]*$/.test(digits)) throw invalidValue(option.longestName, `'${text}' is not a hex string`);
      const even = digits.length % 2 === 0 ? digits : `0${digits}`;
      const bytes = Uint8Array.from(even.match(/../g) ?? [], (pair) => parseInt(pair, 16));
      if (bytes.length > maxLength) {
        throw invalidValue(option.longestName, `'${text}' is longer than ${maxLength} bytes`);
      }
      return bytes;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Lists

export function stringList(options: { paramLabel: string; allowsNoValue?: boolean; separator?: RegExp }): ListKind<readonly string[]> {
  return {
    shape: 'list',
    allowsNoValue: options.allowsNoValue ?? false,
    separator: options.separator ?? /,/,
    paramLabel: options.paramLabel,
    convert: (entries) => [...entries],
  };
}

/** Besu's `TransactionType` names, by EIP-2718 type number. */
const TRANSACTION_TYPE_NAMES: Readonly<Record<string, TxType>> = { FRONTIER: 0, ACCESS_LIST: 1, EIP1559: 2, BLOB: 3, DELEGATE_CODE: 4 };

/**
 * A picocli map option of transaction types to ints (`BLOB=72,EIP1559=100`): type names as Besu's enum
 * spells them (case-sensitive), delivered by type number. Given at all, it replaces the default map.
 */
export const transactionTypeLimits: ListKind<Readonly<Partial<Record<TxType, number>>>> = {
  shape: 'list',
  allowsNoValue: false,
  separator: /,/,
  paramLabel: 'MAP<TYPE,INTEGER>',
  convert(entries, option) {
    const limits: Partial<Record<TxType, number>> = {};
    for (const entry of entries) {
      const [name, value, ...rest] = entry.split('=');
      if (value === undefined || rest.length > 0) {
        throw new CliUsageError(
          `Value for option option '${option.longestName}' (MAP<TYPE,INTEGER>) should be in KEY=VALUE format but was ${entry}`,
        );
      }
      const type = Object.hasOwn(TRANSACTION_TYPE_NAMES, name!) ? TRANSACTION_TYPE_NAMES[name!] : undefined;
      if (type === undefined) {
        throw invalidValue(
          option.longestName,
          `expected one of [${Object.keys(TRANSACTION_TYPE_NAMES).join(', ')}] (case-sensitive) but was '${name}'`,
        );
      }
      const limit = parseJavaInteger(value, INT_MIN, INT_MAX);
      if (limit === undefined) throw invalidValue(option.longestName, `'${value}' is not an int`);
      limits[type] = Number(limit);
    }
    return limits;
  },
};

/** JSON-RPC API groups: uppercase-exact names, Besu's `invalid entries found [A, B]` for anything else. */
export const apiList: ListKind<readonly ApiGroup[]> = {
  shape: 'list',
  allowsNoValue: false,
  // Besu's split regex for API lists is ` {0,1}, {0,1}`: one optional space on each side of the comma.
  separator: / ?, ?/,
  paramLabel: '<api name>',
  convert(entries, option) {
    const invalid = entries.filter((entry) => !isApiGroup(entry));
    if (invalid.length > 0) {
      throw invalidValue(option.name, `invalid entries found [${invalid.join(', ')}]`);
    }
    return [...new Set(entries.filter(isApiGroup))];
  },
};

/**
 * `--metrics-category`: Besu's category names (case-insensitive here), each checked as Besu's converter
 * does, which picocli reports as a conversion failure.
 */
export const metricCategoryList: ListKind<readonly MetricCategory[]> = {
  shape: 'list',
  allowsNoValue: false,
  separator: /,/,
  paramLabel: '<category name>',
  convert(entries, option) {
    const categories = entries.map((entry) => {
      const category = entry.trim().toUpperCase();
      if (!isMetricCategory(category)) {
        throw cannotConvert(option, entry, 'MetricCategory', `java.lang.IllegalArgumentException: Unknown category: ${entry}`);
      }
      return category;
    });
    return [...new Set(categories)];
  },
};

/**
 * Besu's host allow-list property: `*`/`all` = any host (returned as `['*']`), `none` = no host (`[]`),
 * neither combinable with other names.
 */
export const hostAllowlist: ListKind<readonly string[]> = {
  shape: 'list',
  allowsNoValue: false,
  separator: /,/,
  paramLabel: '<hostname>',
  convert(entries) {
    if (entries.some((entry) => entry === '')) throw new CliUsageError('Hostname cannot be empty string or null string.');
    const hosts = entries.map((entry) => (entry === 'all' ? '*' : entry));
    if (hosts.includes('*') && hosts.length > 1) {
      throw new CliUsageError("Values '*' or 'all' can't be used with other hostnames");
    }
    if (hosts.includes('none')) {
      if (hosts.length > 1) throw new CliUsageError("Value 'none' can't be used with other hostnames");
      return [];
    }
    return hosts;
  },
};

/**
 * Besu's CORS origins property: entries are regular expressions; `all` = `*`; `none` = no origin; `*` and
 * `none` not combinable; the joined pattern must compile.
 */
export const corsOrigins: ListKind<readonly string[]> = {
  shape: 'list',
  allowsNoValue: false,
  separator: /,/,
  paramLabel: '<url>',
  convert(entries) {
    if (entries.some((entry) => entry === '')) throw new CliUsageError('Domain cannot be empty string or null string.');
    const origins = entries.map((entry) => (entry === 'all' ? '*' : entry));
    if (origins.includes('none')) {
      if (origins.length > 1) throw new CliUsageError("Value 'none' can't be used with other domains");
      return [];
    }
    if (origins.includes('*')) {
      if (origins.length > 1) throw new CliUsageError("Values '*' or 'all' can't be used with other domains");
      return origins;
    }
    try {
      new RegExp(origins.join('|'));
    } catch {
      throw new CliUsageError('Domain values result in invalid regex pattern');
    }
    return origins;
  },
};
