/**
 * Besu's GraphQL scalars (rpc-auth-cli.md §10.1): how each reads a literal or a variable and prints
 * a value. Inside Basalt a `Long` or `BigInt` is a bigint and every byte scalar a Uint8Array; out
 * they are `0x` hex (quantities for the numbers, fixed width for hashes and addresses).
 *
 * A value a scalar refuses throws `ScalarError` with Besu's text, which validation puts after
 * graphql-java's `... is not a valid 'Bytes' - `.
 */
import { Kind, type ValueNode } from 'graphql';
import { javaAstText } from './java-text.js';

/** A literal or variable value a scalar refuses, with the reason Besu gives. */
export class ScalarError extends Error {}

export interface ScalarImplementation {
  /** A literal in the query (variables are resolved before this is asked). */
  parseLiteral(node: ValueNode): unknown;
  /** A variable's JSON value. */
  parseValue(value: unknown): unknown;
  /** A resolved value as the answer shows it. */
  serialize(value: unknown): string;
}

const HEX_DIGITS = /^[0-9a-fA-F]*$/;

/** Tuweni's lenient hex: `0x` then hex digits, odd counts padded with a leading zero nibble. */
function lenientHex(text: string): Uint8Array | undefined {
  const digits = text.slice(2);
  if (!HEX_DIGITS.test(digits)) return undefined;
  return Uint8Array.from(Buffer.from(digits.length % 2 === 1 ? `0${digits}` : digits, 'hex'));
}

function hexOf(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

function leftPad(bytes: Uint8Array, size: number): Uint8Array {
  if (bytes.length >= size) return bytes;
  const padded = new Uint8Array(size);
  padded.set(bytes, size - bytes.length);
  return padded;
}

/** What a refused literal is called in the message: graphql-java's printing of the AST value. */
function notAny(name: string, shown: string): ScalarError {
  return new ScalarError(`Value is not any ${name} : '${shown}'`);
}

/**
 * Byte scalars: a `0x` string of hex digits, at most `maxBytes` long (left-padded to it when
 * `pad`), exactly `exactBytes` long when given.
 */
function bytesScalar(name: string, width: { maxBytes?: number; exactBytes?: number; pad?: boolean }): ScalarImplementation {
  const fromString = (text: string, shown: string): Uint8Array => {
    if (!text.startsWith('0x') && !text.startsWith('0X')) throw new ScalarError(`${name} value '${text}' is not prefixed with 0x`);
    const bytes = lenientHex(text);
    if (bytes === undefined) throw notAny(name, shown);
    if (width.exactBytes !== undefined && bytes.length !== width.exactBytes) throw notAny(name, shown);
    if (width.maxBytes !== undefined && bytes.length > width.maxBytes) throw notAny(name, shown);
    return width.pad && width.maxBytes !== undefined ? leftPad(bytes, width.maxBytes) : bytes;
  };
  const size = width.exactBytes ?? (width.pad ? width.maxBytes : undefined);
  return {
    parseLiteral(node) {
      if (node.kind !== Kind.STRING) throw notAny(name, javaAstText(node));
      return fromString(node.value, javaAstText(node));
    },
    parseValue(value) {
      if (value instanceof Uint8Array) return value;
      if (typeof value !== 'string') throw notAny(name, String(value));
      return fromString(value, value);
    },
    serialize(value) {
      if (typeof value === 'string') return value;
      if (!(value instanceof Uint8Array)) throw new TypeError(`Unable to serialize ${String(value)} as ${name}`);
      return hexOf(size === undefined ? value : leftPad(value, size));
    },
  };
}

/** Java `Long`: signed 64 bits. */
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/**
 * Number scalars: an integer literal, or a string in hex (`0x`) or decimal; a variable may also be
 * a JSON number. `Long` must fit a Java long; `BigInt` is any size.
 */
function numberScalar(name: string, fitsLong: boolean): ScalarImplementation {
  const checked = (value: bigint, shown: string): bigint => {
    if (fitsLong && (value < LONG_MIN || value > LONG_MAX)) throw notAny(name, shown);
    return value;
  };
  const fromString = (text: string, shown: string): bigint => {
    const lower = text.toLowerCase();
    if (lower.startsWith('0x')) {
      const bytes = lenientHex(lower);
      if (bytes === undefined || lower.length === 2) throw notAny(name, shown);
      return checked(BigInt(lower), shown);
    }
    if (!/^[+-]?\d+$/.test(lower)) throw notAny(name, shown);
    return checked(BigInt(lower), shown);
  };
  return {
    parseLiteral(node) {
      if (node.kind === Kind.INT) return checked(BigInt(node.value), javaAstText(node));
      if (node.kind === Kind.STRING) return fromString(node.value, javaAstText(node));
      throw notAny(name, javaAstText(node));
    },
    parseValue(value) {
      if (typeof value === 'bigint') return checked(value, String(value));
      if (typeof value === 'number' && Number.isInteger(value)) return checked(BigInt(value), String(value));
      if (typeof value === 'string') return fromString(value, value);
      throw notAny(name, String(value));
    },
    serialize(value) {
      if (typeof value === 'bigint') return `0x${value.toString(16)}`;
      if (typeof value === 'number') return `0x${value.toString(16)}`;
      if (typeof value === 'string' && value.startsWith('0x')) return value;
      throw new TypeError(`Unable to serialize ${String(value)} as ${name}`);
    },
  };
}

/** Every custom scalar of Besu's schema, by name. */
export const SCALARS: Readonly<Record<string, ScalarImplementation>> = {
  Address: bytesScalar('Address', { exactBytes: 20 }),
  Bytes: bytesScalar('Bytes', {}),
  Bytes32: bytesScalar('Bytes32', { maxBytes: 32, pad: true }),
  Hash: bytesScalar('Hash', { maxBytes: 32, pad: true }),
  LogTopic: bytesScalar('LogTopic', { maxBytes: 32, pad: true }),
  VersionedHash: bytesScalar('VersionedHash', { maxBytes: 32, pad: true }),
  Long: numberScalar('Long', true),
  BigInt: numberScalar('BigInt', false),
};
