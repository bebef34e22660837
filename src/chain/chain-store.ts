import type { Block, BlockHeader } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt, bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { KvOp, KvStore } from '../shared/storage/kv-store.js';
import { LruCache } from '../shared/util/lru-cache.js';
import type { CacheLimits } from '../shared/util/lru-cache.js';
import { decodeReceipts, encodeReceipts, indexReceipts, receiptAt, sendersOfReceipts } from './receipt-codec.js';
import type { IndexedReceipts } from './receipt-codec.js';
import { transactionOfBlockRlp } from '../shared/ethereum/block-decode.js';
import type { ChainSpec } from '../shared/execution/chain-spec.js';
import { Prefix, canonicalKey, decodeSchemaVersion, encodeSchemaVersion, metaKey, MetaKey, prefixed, SCHEMA_VERSION } from './storage-schema.js';
import type { StoredReceipt, TxLocation } from '../shared/ethereum/chain-records.js';

/**
 * Decoded blocks and receipts kept in memory, so that reads of the head area (the new head, receipts
 * of transactions just included, proposals' parents) never touch RocksDB. Each of the two caches holds
 * at most 64 blocks and, together, the blocks' 8,192 transactions (receipts: 8,192 receipts): ~11 MB
 * of decoded transactions (~1.4 kB each) and ~10 MB of receipts (~1.2 kB each). Counting blocks alone,
 * 256 of them, let full blocks pin ~600 MB at 300 transfers a second (README, "Memory").
 */
export const BLOCK_CACHE_LIMITS: CacheLimits = { entries: 64, weight: 8_192 };

/** Stored receipts kept for reads of one receipt (ChainStore.getReceipt): 64 blocks and 8 MB of encoding. */
export const STORED_RECEIPTS_LIMITS: CacheLimits = { entries: 64, weight: 8 * 1024 * 1024 };

/**
 * Blocks, receipts and indexes in RocksDB (layout in storage-schema.ts). Reads go through a small
 * cache of decoded blocks; writes are returned as operations for the caller to batch atomically.
 */
export class ChainStore {
  /** Weighed by transactions (an empty block counts as one). */
  private readonly blockCache = new LruCache<string, Block>(BLOCK_CACHE_LIMITS, (block) => Math.max(1, block.transactions.length));
  private readonly receiptCache = new LruCache<string, StoredReceipt[]>(BLOCK_CACHE_LIMITS, (receipts) => Math.max(1, receipts.length));
  /** Canonical hashes by number as read (eth_getLogs ranges, blocks by number ask again and again). */
  private readonly canonicalCache = new LruCache<bigint, Uint8Array>({ entries: 4096, weight: 4096 });
  /** Moves on when the canonical index changes: a read that began before is not kept. */
  private canonicalGeneration = 0;
  /** Encoded sizes of blocks by hash (a block's `size` field), read from the stored RLP's length. */
  private readonly sizeCache = new LruCache<string, number>({ entries: 1024, weight: 1024 });
  /**
   * Receipts of blocks read one receipt at a time, as stored (receipt-codec.ts, IndexedReceipts),
   * weighed by their bytes: reading one receipt no longer reads and copies the block's (~1 MB for
   * 2,000 ERC-20 transfers) from RocksDB each time.
   */
  private readonly storedReceiptsCache = new LruCache<string, IndexedReceipts>(STORED_RECEIPTS_LIMITS, (stored) => stored.bytes.length);
  private readonly storedReceiptsBeingRead = new Map<string, Promise<IndexedReceipts | undefined>>();
  /** Headers of blocks read for one transaction or receipt, whose blocks were not decoded whole. */
  private readonly headerCache = new LruCache<string, BlockHeader>({ entries: 256, weight: 256 });
  /**
   * Blocks and receipts being read and decoded: a read of the same block meanwhile waits for that one.
   * Thirty-two clients asking for receipts in one block not cached each decoded it (2,000
   * transactions, tens of milliseconds each time).
   */
  private readonly blocksBeingRead = new Map<string, Promise<Block | undefined>>();
  private readonly receiptsBeingRead = new Map<string, Promise<StoredReceipt[] | undefined>>();

  constructor(
    private readonly kv: KvStore,
    private readonly decoding: Pick<ChainSpec, 'decodeBlock' | 'decodeHeaderOfBlock'>,
  ) {
    // Receipt polls for pending transactions miss the same lookups until a block brings them.
    kv.rememberMisses(Prefix.txLookup);
  }

  async getHeadHash(): Promise<Uint8Array | undefined> {
    return this.kv.get(metaKey(MetaKey.head));
  }

  async getGenesisHash(): Promise<Uint8Array | undefined> {
    return this.kv.get(metaKey(MetaKey.genesis));
  }

  /** The storage layout version the database was written with; undefined when none is stored. */
  async getSchemaVersion(): Promise<bigint | undefined> {
    const bytes = await this.kv.get(metaKey(MetaKey.schemaVersion));
    return bytes === undefined ? undefined : decodeSchemaVersion(bytes);
  }

  async getCanonicalHash(blockNumber: bigint): Promise<Uint8Array | undefined> {
    if (blockNumber < 0n) return undefined;
    const cached = this.canonicalCache.get(blockNumber);
    if (cached !== undefined) return cached;
    const generation = this.canonicalGeneration;
    const hash = await this.kv.get(canonicalKey(blockNumber));
    if (hash !== undefined && generation === this.canonicalGeneration) this.canonicalCache.set(blockNumber, hash);
    return hash;
  }

  /**
   * The canonical index was rewritten (a re-org, once its batch is written): what was read of it is
   * forgotten. A number newly made canonical on top needs nothing: it was never read as present.
   */
  canonicalIndexMoved(): void {
    this.canonicalGeneration++;
    this.canonicalCache.clear();
  }

  async getBlock(hash: Uint8Array): Promise<Block | undefined> {
    const key = bytesToHex(hash);
    const cached = this.blockCache.get(key);
    if (cached) return cached;
    return readOnce(this.blocksBeingRead, key, async () => {
      const rlp = await this.kv.get(prefixed(Prefix.block, hash));
      if (!rlp) return undefined;
      const block = this.decoding.decodeBlock(rlp);
      this.blockCache.set(key, block);
      return block;
    });
  }

  /** A stored block's header; the rest of the block is not decoded when it is not in memory. */
  async getHeader(hash: Uint8Array): Promise<BlockHeader | undefined> {
    const key = bytesToHex(hash);
    const cached = this.blockCache.get(key)?.header ?? this.headerCache.get(key);
    if (cached) return cached;
    const rlp = await this.kv.get(prefixed(Prefix.block, hash));
    return rlp && this.headerOf(key, rlp);
  }

  private headerOf(key: string, rlp: Uint8Array): BlockHeader {
    let header = this.headerCache.get(key);
    if (header === undefined) {
      header = this.decoding.decodeHeaderOfBlock(rlp);
      this.headerCache.set(key, header);
    }
    return header;
  }

  /**
   * Transaction `index` of a stored block, with the block's header. Only that transaction and the
   * header are decoded when the block is not in memory: reading one transaction of a block of 2,000
   * does not cost decoding them all (a client reading receipts across more blocks than the cache
   * holds got 19 a second).
   */
  async getTransaction(blockHash: Uint8Array, index: number): Promise<{ header: BlockHeader; tx: TypedTransaction } | undefined> {
    const key = bytesToHex(blockHash);
    const cached = this.blockCache.get(key);
    if (cached) {
      const tx = cached.transactions[index];
      return tx && { header: cached.header, tx };
    }
    const rlp = await this.kv.get(prefixed(Prefix.block, blockHash));
    if (!rlp) return undefined;
    const header = this.headerOf(key, rlp);
    const tx = transactionOfBlockRlp(rlp, header, index);
    return tx && { header, tx };
  }

  /**
   * The length of a stored block's RLP: what `block.serialize().length` gives without encoding every
   * transaction again (tens of milliseconds of the chain thread for a block of a thousand, each time a
   * client polls the block).
   */
  async getBlockSize(hash: Uint8Array): Promise<number | undefined> {
    const key = bytesToHex(hash);
    const cached = this.sizeCache.get(key);
    if (cached !== undefined) return cached;
    const rlp = await this.kv.get(prefixed(Prefix.block, hash));
    if (!rlp) return undefined;
    this.sizeCache.set(key, rlp.length);
    return rlp.length;
  }

  /** The canonical block `blockNumber` as stored: the RLP it was imported or built with, not decoded. */
  async getCanonicalBlockRlp(blockNumber: bigint): Promise<Uint8Array | undefined> {
    const hash = await this.getCanonicalHash(blockNumber);
    return hash ? this.kv.get(prefixed(Prefix.block, hash)) : undefined;
  }

  async getBlockByNumber(blockNumber: bigint): Promise<Block | undefined> {
    const hash = await this.getCanonicalHash(blockNumber);
    return hash ? this.getBlock(hash) : undefined;
  }

  async getTotalDifficulty(hash: Uint8Array): Promise<bigint | undefined> {
    const bytes = await this.kv.get(prefixed(Prefix.totalDifficulty, hash));
    return bytes ? bytesToBigInt(bytes) : undefined;
  }

  /** Whether the block is stored, on the canonical chain or off it: every stored block has its total difficulty. */
  async hasBlock(hash: Uint8Array): Promise<boolean> {
    return (await this.getTotalDifficulty(hash)) !== undefined;
  }

  async getReceipts(blockHash: Uint8Array): Promise<StoredReceipt[] | undefined> {
    const key = bytesToHex(blockHash);
    const cached = this.receiptCache.get(key);
    if (cached) return cached;
    return readOnce(this.receiptsBeingRead, key, async () => {
      const bytes = await this.kv.get(prefixed(Prefix.receipts, blockHash));
      if (!bytes) return undefined;
      const receipts = decodeReceipts(bytes);
      this.receiptCache.set(key, receipts);
      return receipts;
    });
  }

  /**
   * Receipt `index` of a stored block and where its logs start in the block's numbering; only that
   * receipt is decoded when the block's receipts are not in memory (as getTransaction).
   */
  async getReceipt(blockHash: Uint8Array, index: number): Promise<{ receipt: StoredReceipt; logIndexStart: number } | undefined> {
    const cached = this.receiptCache.get(bytesToHex(blockHash));
    if (cached) {
      const receipt = cached[index];
      if (receipt === undefined) return undefined;
      let logIndexStart = 0;
      for (let i = 0; i < index; i++) logIndexStart += cached[i]!.logs.length;
      return { receipt, logIndexStart };
    }
    const stored = await this.indexedReceipts(blockHash);
    return stored && receiptAt(stored, index);
  }

  /** The sender of each transaction of a stored block, as its receipts record them: no signature is recovered. */
  async getSenders(blockHash: Uint8Array): Promise<Uint8Array[] | undefined> {
    const cached = this.receiptCache.get(bytesToHex(blockHash));
    if (cached) return cached.map((receipt) => receipt.from);
    const stored = await this.indexedReceipts(blockHash);
    return stored && sendersOfReceipts(stored);
  }

  /** A block's receipts as stored, indexed (kept for the reads of one receipt or sender at a time). */
  private async indexedReceipts(blockHash: Uint8Array): Promise<IndexedReceipts | undefined> {
    const key = bytesToHex(blockHash);
    return (
      this.storedReceiptsCache.get(key) ??
      readOnce(this.storedReceiptsBeingRead, key, async () => {
        const bytes = await this.kv.get(prefixed(Prefix.receipts, blockHash));
        if (!bytes) return undefined;
        const indexed = indexReceipts(bytes);
        this.storedReceiptsCache.set(key, indexed);
        return indexed;
      })
    );
  }

  async getTxLocation(txHash: Uint8Array): Promise<TxLocation | undefined> {
    const bytes = await this.kv.get(prefixed(Prefix.txLookup, txHash));
    if (!bytes) return undefined;
    const [blockHash, index] = RLP.decode(bytes) as Uint8Array[];
    const header = await this.getHeader(blockHash!);
    if (!header) return undefined;
    return { blockHash: blockHash!, blockNumber: header.number, index: Number(bytesToBigInt(index!)) };
  }

  /** Whether `hash` is the canonical block at `blockNumber`. */
  async isCanonical(hash: Uint8Array, blockNumber: bigint): Promise<boolean> {
    const canonical = await this.getCanonicalHash(blockNumber);
    return canonical !== undefined && equalsBytes(canonical, hash);
  }

  /** The number of the newest canonical block on the branch that ends at `hash` (-1 when none is stored). */
  async canonicalAncestorNumber(hash: Uint8Array): Promise<bigint> {
    for (let block = await this.getBlock(hash); block !== undefined; block = await this.getBlock(hash)) {
      if (await this.isCanonical(hash, block.header.number)) return block.header.number;
      hash = block.header.parentHash;
    }
    return -1n;
  }

  /**
   * The blocks numbered `from..to` on the branch that ends at `tipHash`, ascending; stops at the tip
   * and at the first block missing. Below the point where the branch left the canonical chain they
   * are canonical blocks, read by number; only the blocks off the canonical chain are walked by hash.
   */
  async branchBlocks(tipHash: Uint8Array, from: bigint, to: bigint): Promise<Block[]> {
    const offCanonical = new Map<bigint, Block>();
    /** The number of the first canonical block met: from there down the canonical index answers. */
    let canonicalTop = -1n;
    let hash = tipHash;
    let block = await this.getBlock(hash);
    const tipNumber = block?.header.number ?? -1n;
    while (block !== undefined && block.header.number >= from) {
      if (await this.isCanonical(hash, block.header.number)) {
        canonicalTop = block.header.number;
        break;
      }
      offCanonical.set(block.header.number, block);
      hash = block.header.parentHash;
      block = await this.getBlock(hash);
    }
    const blocks: Block[] = [];
    const last = to < tipNumber ? to : tipNumber;
    for (let n = from < 0n ? 0n : from; n <= last; n++) {
      const found = n <= canonicalTop ? await this.getBlockByNumber(n) : offCanonical.get(n);
      if (found === undefined) break;
      blocks.push(found);
    }
    return blocks;
  }

  /**
   * A block stored with everything needed to build on it or switch to it later — body, total
   * difficulty, receipts (its state goes in the same batch) — but off the canonical index: a block of a
   * side branch, or the first half of storing a canonical one.
   */
  storedBlockOps(block: Block, hash: Uint8Array, receipts: StoredReceipt[], totalDifficulty: bigint, rlp = block.serialize()): KvOp[] {
    return [
      { type: 'put', key: prefixed(Prefix.block, hash), value: rlp },
      { type: 'put', key: prefixed(Prefix.totalDifficulty, hash), value: bigIntToUnpaddedBytes(totalDifficulty) },
      { type: 'put', key: prefixed(Prefix.receipts, hash), value: encodeReceipts(receipts) },
    ];
  }

  /** What makes a stored block canonical: its number maps to it and its transactions point to it. */
  canonicalOps(block: Block, hash: Uint8Array): KvOp[] {
    const ops: KvOp[] = [{ type: 'put', key: canonicalKey(block.header.number), value: hash }];
    block.transactions.forEach((tx, index) => {
      ops.push({
        type: 'put',
        key: prefixed(Prefix.txLookup, tx.hash()),
        value: RLP.encode([hash, bigIntToUnpaddedBytes(BigInt(index))]),
      });
    });
    return ops;
  }

  /**
   * The operations that store a block as the new canonical head. The head pointer comes last, so that
   * a batch is either wholly applied or the old head still stands with all its data.
   */
  blockOps(block: Block, hash: Uint8Array, receipts: StoredReceipt[], totalDifficulty: bigint, rlp?: Uint8Array): KvOp[] {
    return [...this.storedBlockOps(block, hash, receipts, totalDifficulty, rlp), ...this.canonicalOps(block, hash), this.headOp(hash)];
  }

  /** Takes a transaction's lookup away (its block left the canonical chain). */
  txLookupDeleteOp(txHash: Uint8Array): KvOp {
    return { type: 'del', key: prefixed(Prefix.txLookup, txHash) };
  }

  /** Takes a number off the canonical index (the new branch is shorter than the old one). */
  canonicalDeleteOp(blockNumber: bigint): KvOp {
    return { type: 'del', key: canonicalKey(blockNumber) };
  }

  headOp(hash: Uint8Array): KvOp {
    return { type: 'put', key: metaKey(MetaKey.head), value: hash };
  }

  genesisOps(genesisHash: Uint8Array): KvOp[] {
    return [
      { type: 'put', key: metaKey(MetaKey.genesis), value: genesisHash },
      { type: 'put', key: metaKey(MetaKey.schemaVersion), value: encodeSchemaVersion(SCHEMA_VERSION) },
    ];
  }

  /**
   * Keeps what was just written in the caches, so the new head is served without a decode;
   * `encodedLength`, the length of the RLP written, spares reading it back for the block's size.
   */
  rememberWritten(block: Block, hash: Uint8Array, receipts: StoredReceipt[], encodedLength?: number): void {
    const key = bytesToHex(hash);
    this.blockCache.set(key, block);
    this.receiptCache.set(key, receipts);
    if (encodedLength !== undefined) this.sizeCache.set(key, encodedLength);
  }
}

/** `load()` for `key`, or the load of `key` already under way. */
function readOnce<T>(underWay: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let reading = underWay.get(key);
  if (reading === undefined) {
    reading = load().finally(() => underWay.delete(key));
    underWay.set(key, reading);
  }
  return reading;
}
