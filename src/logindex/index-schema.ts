/**
 * Every key prefix of the log index's own RocksDB database (`<data-path>/log-index`, opened by the log
 * index actor only; the chain's database is src/chain/storage-schema.ts). The index is derived data:
 * deleting the folder costs a rebuild from the chain on the next start, nothing else.
 *
 * | prefix | key after prefix                              | value                                   |
 * |--------|-----------------------------------------------|-----------------------------------------|
 * | `m`    | metadata name (ASCII)                         | see IndexMetaKey                        |
 * | `h`    | block number, 8 bytes BE                      | hash of the indexed canonical block     |
 * | `H`    | block hash                                    | its number, 8 bytes BE                  |
 * | `L`    | block number, 8 bytes BE                      | RLP [hash, timestamp, tx hashes, logs] (blocks with logs only) |
 * | `a`    | address (20) ‖ block number (8 BE)            | empty: the block has a log of `address` |
 * | `t`    | position (1) ‖ topic (32) ‖ block number (8 BE) | empty: the block has a log with `topic` at `position` |
 *
 * Each block's keys and the head go in one batch, the head last: a crash leaves the index at a block
 * it holds whole. `a` and `t` keys end in the block number so that a block range is a key range.
 */
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt } from '../shared/util/bytes.js';
import type { BlockLog } from '../shared/actors/messages.js';
import type { RawLog } from '../shared/ethereum/chain-records.js';

export const IndexPrefix = {
  meta: 0x6d, // 'm'
  hashByNumber: 0x68, // 'h'
  numberByHash: 0x48, // 'H'
  logs: 0x4c, // 'L'
  address: 0x61, // 'a'
  topic: 0x74, // 't'
} as const;

export const IndexMetaKey = {
  /** RLP [number, hash] of the highest indexed block; absent in an empty index. */
  head: 'head',
  /** Layout version, minimal big-endian bytes; an index of another version is rebuilt. */
  schemaVersion: 'schemaVersion',
} as const;

/** The layout this build reads and writes. */
export const INDEX_SCHEMA_VERSION = 1n;

export function indexMetaKey(name: string): Uint8Array {
  return withPrefix(IndexPrefix.meta, new TextEncoder().encode(name));
}

export function numberBytes(number: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, number);
  return bytes;
}

/** The block number at the end of a key. */
export function numberAtEnd(key: Uint8Array): bigint {
  return new DataView(key.buffer, key.byteOffset + key.byteLength - 8, 8).getBigUint64(0);
}

export function hashByNumberKey(number: bigint): Uint8Array {
  return withPrefix(IndexPrefix.hashByNumber, numberBytes(number));
}

export function numberByHashKey(hash: Uint8Array): Uint8Array {
  return withPrefix(IndexPrefix.numberByHash, hash);
}

export function logsKey(number: bigint): Uint8Array {
  return withPrefix(IndexPrefix.logs, numberBytes(number));
}

/** The part of an `a` key before the block number. */
export function addressStem(address: Uint8Array): Uint8Array {
  return withPrefix(IndexPrefix.address, address);
}

/** The part of a `t` key before the block number. */
export function topicStem(position: number, topic: Uint8Array): Uint8Array {
  const stem = new Uint8Array(2 + topic.length);
  stem[0] = IndexPrefix.topic;
  stem[1] = position;
  stem.set(topic, 2);
  return stem;
}

export function stemKey(stem: Uint8Array, number: bigint): Uint8Array {
  const key = new Uint8Array(stem.length + 8);
  key.set(stem);
  new DataView(key.buffer).setBigUint64(stem.length, number);
  return key;
}

/** What `L` holds of a block. */
export interface StoredBlockLogs {
  hash: Uint8Array;
  timestamp: bigint;
  txHashes: Uint8Array[];
  logs: BlockLog[];
}

export function encodeBlockLogs({ hash, timestamp, txHashes, logs }: StoredBlockLogs): Uint8Array {
  return RLP.encode([hash, bigIntToUnpaddedBytes(timestamp), txHashes, logs.map(({ log, txIndex }) => [...log, bigIntToUnpaddedBytes(BigInt(txIndex))])]);
}

export function decodeBlockLogs(bytes: Uint8Array): StoredBlockLogs {
  const [hash, timestamp, txHashes, logs] = RLP.decode(bytes) as unknown as [Uint8Array, Uint8Array, Uint8Array[], [Uint8Array, Uint8Array[], Uint8Array, Uint8Array][]];
  return {
    hash,
    timestamp: bytesToBigInt(timestamp),
    txHashes,
    logs: logs.map(([address, topics, data, txIndex]): BlockLog => ({ log: [address, topics, data] satisfies RawLog, txIndex: Number(bytesToBigInt(txIndex)) })),
  };
}

export function encodeHead(number: bigint, hash: Uint8Array): Uint8Array {
  return RLP.encode([bigIntToUnpaddedBytes(number), hash]);
}

export function decodeHead(bytes: Uint8Array): { number: bigint; hash: Uint8Array } {
  const [number, hash] = RLP.decode(bytes) as unknown as [Uint8Array, Uint8Array];
  return { number: bytesToBigInt(number), hash };
}

function withPrefix(prefix: number, key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length + 1);
  out[0] = prefix;
  out.set(key, 1);
  return out;
}
