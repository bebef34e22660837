/**
 * Every key prefix Basalt writes to RocksDB, in one place. The chain actor is the only owner of the
 * database; nothing else opens it. A prefix is one byte so keys stay short and ranges stay apart.
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
  /** Storage layout version, so a future layout change can migrate or refuse. */
  schemaVersion: 'schemaVersion',
} as const;

export const SCHEMA_VERSION = 1;

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
