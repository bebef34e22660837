/**
 * The log index's database (index-schema.ts): which canonical blocks it holds, each block's logs, and
 * for each address and each (position, topic) the blocks that have a log with it. Blocks are added on
 * top and taken off the top only, so the index is always a prefix of one branch of the chain.
 */
import { bytesToHex, equalsBytes } from '../shared/util/bytes.js';
import type { IndexedBlock } from '../shared/actors/messages.js';
import type { RawLog } from '../shared/ethereum/chain-records.js';
import type { KvOp, KvStore } from '../shared/storage/kv-store.js';
import { LruCache } from '../shared/util/lru-cache.js';
import {
  INDEX_SCHEMA_VERSION,
  IndexMetaKey,
  IndexPrefix,
  decodeBlockLogs,
  decodeHead,
  encodeBlockLogs,
  encodeHead,
  hashByNumberKey,
  indexMetaKey,
  logsKey,
  numberAtEnd,
  numberByHashKey,
  numberBytes,
  stemKey,
  topicStem,
  addressStem,
} from './index-schema.js';

export interface IndexHead {
  number: bigint;
  hash: Uint8Array;
}

/** One log of an indexed block with all a JSON-RPC answer needs; its answer text is made once. */
export interface IndexedLog {
  readonly log: RawLog;
  readonly txIndex: number;
  /** The eth_getLogs object as JSON text, made on first use. */
  json?: string;
}

/** An indexed block's logs as queries read them. */
export interface BlockLogs {
  readonly number: bigint;
  readonly hash: Uint8Array;
  readonly timestamp: bigint;
  readonly txHashes: readonly Uint8Array[];
  readonly logs: readonly IndexedLog[];
  /** The `a` and `t` key stems of its logs as hex, made on first use: a cached block is matched in memory. */
  stems?: ReadonlySet<string>;
}

/** Blocks' logs read or written lately, weighed by logs: recent blocks are what filters and `latest` read. */
const BLOCK_CACHE_LIMITS = { entries: 1024, weight: 64 * 1024 };
const EMPTY = new Uint8Array(0);

/** The stems of the `a` and `t` keys a block's logs need, each once. */
function stemsOf(logs: readonly { log: RawLog }[]): Uint8Array[] {
  return [...stemMap(logs).values()];
}

/** The stems of a block's logs as hex, what `stemsOf` keys in the database. */
export function stemTextsOf(block: BlockLogs): ReadonlySet<string> {
  block.stems ??= new Set(stemMap(block.logs).keys());
  return block.stems;
}

function stemMap(logs: readonly { log: RawLog }[]): Map<string, Uint8Array> {
  const stems = new Map<string, Uint8Array>();
  for (const { log } of logs) {
    const [address, topics] = log;
    const stem = addressStem(address);
    stems.set(bytesToHex(stem), stem);
    topics.forEach((topic, position) => {
      const key = topicStem(position, topic);
      stems.set(bytesToHex(key), key);
    });
  }
  return stems;
}

export class IndexStore {
  private current: IndexHead | undefined;
  private readonly cache = new LruCache<bigint, BlockLogs>(BLOCK_CACHE_LIMITS, (block) => Math.max(1, block.logs.length));

  private constructor(
    private readonly kv: KvStore,
    head: IndexHead | undefined,
  ) {
    this.current = head;
  }

  /**
   * The index in `kv`, or undefined when `kv` holds an index of another layout (the caller starts
   * over with an empty database). A database without a version is empty and gets this one.
   */
  static async open(kv: KvStore): Promise<IndexStore | undefined> {
    const version = await kv.get(indexMetaKey(IndexMetaKey.schemaVersion));
    const headBytes = await kv.get(indexMetaKey(IndexMetaKey.head));
    if (version === undefined) {
      if (headBytes !== undefined) return undefined;
      await kv.write([{ type: 'put', key: indexMetaKey(IndexMetaKey.schemaVersion), value: numberBytes(INDEX_SCHEMA_VERSION) }]);
    } else if (numberAtEnd(version) !== INDEX_SCHEMA_VERSION) {
      return undefined;
    }
    return new IndexStore(kv, headBytes === undefined ? undefined : decodeHead(headBytes));
  }

  /** The highest indexed block; undefined while the index is empty. */
  get head(): IndexHead | undefined {
    return this.current;
  }

  /** The next block number the index needs (0 for an empty index). */
  get nextNumber(): bigint {
    return this.current === undefined ? 0n : this.current.number + 1n;
  }

  async hashAt(number: bigint): Promise<Uint8Array | undefined> {
    if (this.current === undefined || number > this.current.number || number < 0n) return undefined;
    if (number === this.current.number) return this.current.hash;
    return this.kv.get(hashByNumberKey(number));
  }

  /** The number of an indexed block, by its hash. */
  async numberOf(hash: Uint8Array): Promise<bigint | undefined> {
    const bytes = await this.kv.get(numberByHashKey(hash));
    return bytes === undefined ? undefined : numberAtEnd(bytes);
  }

  /** The logs of indexed block `number`; a block without logs has an empty list. */
  async blockLogs(number: bigint): Promise<BlockLogs | undefined> {
    const cached = this.cache.get(number);
    if (cached !== undefined) return cached;
    const hash = await this.hashAt(number);
    if (hash === undefined) return undefined;
    const bytes = await this.kv.get(logsKey(number));
    const stored = bytes === undefined ? { hash, timestamp: 0n, txHashes: [], logs: [] } : decodeBlockLogs(bytes);
    const block: BlockLogs = { number, ...stored };
    this.cache.set(number, block);
    return block;
  }

  /** Indexed block `number` when it is in memory; nothing is read. */
  cachedBlock(number: bigint): BlockLogs | undefined {
    return this.cache.get(number);
  }

  /** Numbers of the blocks in `from..to` that have a log. */
  blocksWithLogs(from: bigint, to: bigint): Promise<bigint[]> {
    return this.blocksWithStem(new Uint8Array([IndexPrefix.logs]), from, to);
  }

  /** Numbers of the blocks in `from..to` that have a log with `stem` (an address or a topic at a position). */
  async blocksWithStem(stem: Uint8Array, from: bigint, to: bigint): Promise<bigint[]> {
    if (from > to) return [];
    const keys = await this.kv.keys(stemKey(stem, from), stemKey(stem, to + 1n));
    return keys.map(numberAtEnd);
  }

  /** Adds blocks on top of the head: the first one's parent must be the head (any block on an empty index). */
  async append(blocks: readonly IndexedBlock[]): Promise<void> {
    if (blocks.length === 0) return;
    const ops: KvOp[] = [];
    let parent = this.current;
    for (const block of blocks) {
      if (parent !== undefined && (block.number !== parent.number + 1n || !equalsBytes(block.parentHash, parent.hash))) {
        throw new Error(`block #${block.number} ${bytesToHex(block.hash)} does not follow the log index's #${parent.number} ${bytesToHex(parent.hash)}`);
      }
      ops.push({ type: 'put', key: hashByNumberKey(block.number), value: block.hash });
      ops.push({ type: 'put', key: numberByHashKey(block.hash), value: numberBytes(block.number) });
      if (block.logs.length > 0) {
        ops.push({ type: 'put', key: logsKey(block.number), value: encodeBlockLogs(block) });
        for (const stem of stemsOf(block.logs)) ops.push({ type: 'put', key: stemKey(stem, block.number), value: EMPTY });
      }
      parent = { number: block.number, hash: block.hash };
    }
    ops.push({ type: 'put', key: indexMetaKey(IndexMetaKey.head), value: encodeHead(parent!.number, parent!.hash) });
    await this.kv.write(ops);
    this.current = parent;
    for (const block of blocks) {
      const { number, hash, timestamp, txHashes, logs } = block;
      this.cache.set(number, { number, hash, timestamp, txHashes, logs: logs.map(({ log, txIndex }) => ({ log, txIndex })) });
    }
  }

  /** Takes every block above `number` off the index (all of them for -1). */
  async rewindTo(number: bigint): Promise<void> {
    const head = this.current;
    if (head === undefined || head.number <= number) return;
    const ops: KvOp[] = [];
    for (let n = head.number; n > number; n--) {
      const block = await this.blockLogs(n);
      if (block === undefined) continue;
      ops.push({ type: 'del', key: hashByNumberKey(n) });
      ops.push({ type: 'del', key: numberByHashKey(block.hash) });
      if (block.logs.length > 0) {
        ops.push({ type: 'del', key: logsKey(n) });
        for (const stem of stemsOf(block.logs)) ops.push({ type: 'del', key: stemKey(stem, n) });
      }
    }
    const newHead = number < 0n ? undefined : { number, hash: (await this.hashAt(number))! };
    const headKey = indexMetaKey(IndexMetaKey.head);
    ops.push(newHead === undefined ? { type: 'del', key: headKey } : { type: 'put', key: headKey, value: encodeHead(newHead.number, newHead.hash) });
    await this.kv.write(ops);
    this.current = newHead;
    for (let n = head.number; n > number; n--) this.cache.delete(n);
  }

  close(): Promise<void> {
    return this.kv.close();
  }

}
