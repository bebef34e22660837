/**
 * The few byte helpers of @ethereumjs/util that threads without any ethereumjs object need (the log
 * index, the transports), on Node's Buffer. Importing @ethereumjs/util builds a table of 65,536
 * BigInts and loads noble's curves: ~7 MB of RSS in every thread that does (bench/node-memory.ts).
 * Same results as @ethereumjs/util's functions of the same names.
 */
import { unprefixedHexOf } from './hex-builtins.js';

function view(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function equalsBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && view(a).equals(b);
}

/** `0x`-prefixed lowercase hex; `0x` when empty. */
export function bytesToHex(bytes: Uint8Array): string {
  return `0x${unprefixedHexOf(bytes)}`;
}

/** Big-endian; 0n when empty. */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(bytesToHex(bytes));
}

/** Big-endian without leading zeros; empty for 0n. */
export function bigIntToUnpaddedBytes(value: bigint): Uint8Array {
  if (value === 0n) return new Uint8Array(0);
  const hex = value.toString(16);
  return Uint8Array.from(Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex'));
}

/** The bytes of `0x`-prefixed hex this node made (bytesToHex: map keys of the pool and the QBFT tally): no validation, for trusted input only. */
export function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
}
