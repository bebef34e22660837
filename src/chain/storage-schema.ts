/**
 * Every key prefix Basalt writes to the chain's RocksDB, in one place. The chain actor is the only owner
 * of the database; nothing else opens it. The log index keeps its own database beside it
 * (`<data-path>/log-index`), whose prefixes are in src/logindex/index-schema.ts. A prefix is one byte so keys stay short and ranges stay apart.
 *
 * | prefix | key after prefix            | value                                         |
 * |--------|-----------------------------|-----------------------------------------------|
 * | `m`    | metadata name (ASCII)       | see MetaKey                                   |
 * | `n`    | block number, 8 bytes BE    | canonical block hash                          |
 * | `B`    | block hash                  | full block RLP (sealed header, txs, ommers, withdrawals) |
 * | `d`    | block hash                  | total difficulty, minimal big-endian bytes    |
 * | `r`    | block hash                  | RLP list of the block's receipts (see receipt-codec) |
 * | `t`    | transaction hash            | RLP [block hash, index]                       |
 * | `s`    | trie node key from the MPT  | world-state trie node or contract code        |
 */
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';

export const Prefix = {
  meta: 0x6d, // 'm'
  canonical: 0x6e, // 'n'
  block: 0x42, // 'B'
  totalDifficulty: 0x64, // 'd'
  receipts: 0x72, // 'r'
  txLookup: 0x74, // 't'
  state: 0x73, // 's'
} as const;

/** Metadata keys under the `m` prefix. */
export const MetaKey = {
  /** Hash of the canonical head block. Written last in every block batch. */
  head: 'head',
  /** Hash of the genesis block; a data path initialised with another genesis is refused. */
  genesis: 'genesis',
  /**
   * Storage layout version, minimal big-endian bytes. Written in the genesis batch (so every database
   * Basalt has written holds one) and checked on open: see `schemaVersionMismatch`.
   */
  schemaVersion: 'schemaVersion',
} as const;

/** The layout this build reads and writes. Change it with any change to the layout above. */
export const SCHEMA_VERSION = 1n;

export function encodeSchemaVersion(version: bigint): Uint8Array {
  return bigIntToUnpaddedBytes(version);
}

export function decodeSchemaVersion(bytes: Uint8Array): bigint {
  return bytesToBigInt(bytes);
}

/**
 * Why the database at `location` cannot be opened with this build's layout, or undefined. A database
 * holding a chain without a version was not written by Basalt, whose genesis batch carries the version.
 */
export function schemaVersionMismatch(location: string, stored: bigint | undefined, holdsChain: boolean): string | undefined {
  const remedy = 'Use a new --data-path or re-import the chain.';
  if (stored === undefined) {
    return holdsChain ? `Database at ${location} holds a chain but no schema version, so Basalt did not write it; this Basalt reads version ${SCHEMA_VERSION}. ${remedy}` : undefined;
  }
  if (stored === SCHEMA_VERSION) return undefined;
  return `Database at ${location} was written by schema version ${stored}; this Basalt reads version ${SCHEMA_VERSION}. ${remedy}`;
}

export function prefixed(prefix: number, key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length + 1);
  out[0] = prefix;
  out.set(key, 1);
  return out;
}

export function metaKey(name: string): Uint8Array {
  return prefixed(Prefix.meta, new TextEncoder().encode(name));
}

export function canonicalKey(blockNumber: bigint): Uint8Array {
  const key = new Uint8Array(9);
  key[0] = Prefix.canonical;
  new DataView(key.buffer).setBigUint64(1, blockNumber);
  return key;
}
