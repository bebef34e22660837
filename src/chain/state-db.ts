import type { Caches } from '@ethereumjs/statemanager';
import type { BatchDBOp, DB } from '@ethereumjs/util';
import { hexToBytes } from '@ethereumjs/util';
import type { KvOp, KvStore } from '../shared/storage/kv-store.js';
import { Prefix } from './storage-schema.js';
import { LruCache } from '../shared/util/lru-cache.js';

/** How long a trie walk served from memory runs before it lets other messages through. */
const YIELD_EVERY_MS = 10;

/** The node cache of each state database: about 8 MB of trie nodes and code (weights in bytes). */
const NODE_CACHE_LIMITS = { entries: 50_000, weight: 8 * 1024 * 1024 };

/**
 * The world-state trie's view of RocksDB. The MPT hands us hex-string keys and byte values; we store
 * them under the `s` prefix. Writes are staged in memory rather than written through, and the chain
 * takes them with `drainStaged()` into the same RocksDB batch as the block and the head pointer, so a
 * crash can never leave a head whose state is missing (nor state written for a block never stored).
 */
export class StateDb implements DB<string, string | Uint8Array> {
  private staged = new Map<string, Uint8Array | null>();
  /**
   * Trie nodes and code read from RocksDB. Both are content-addressed (the key is the hash of the
   * value), so an entry can never be stale. Every account read walks from the root: without it the
   * top of the trie was read from RocksDB again for each account (the pool's account checks after
   * each new head, a read state's first reads at a new root).
   */
  private readonly nodes = new LruCache<string, Uint8Array>(NODE_CACHE_LIMITS, (value) => value.length + 64);

  constructor(private readonly kv: KvStore) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    const staged = this.staged.get(key);
    if (staged !== undefined) return staged ?? undefined;
    const cached = this.nodes.get(key);
    if (cached !== undefined) return cached;
    const value = await this.kv.get(stateKey(key));
    if (value !== undefined) this.nodes.set(key, value);
    return value;
  }

  async put(key: string, value: string | Uint8Array): Promise<void> {
    this.staged.set(key, toBytes(value));
  }

  async del(key: string): Promise<void> {
    // Trie nodes are content-addressed and shared between roots; without pruning we never delete.
    void key;
  }

  async batch(ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') this.staged.set(op.key, toBytes(op.value));
  }

  shallowCopy(): DB<string, string | Uint8Array> {
    return this;
  }

  async open(): Promise<void> {}

  /**
   * Hands over the staged writes as RocksDB operations and forgets them, keeping them in the node
   * cache: the next block's execution reads the paths this one wrote.
   */
  drainStaged(): KvOp[] {
    const ops: KvOp[] = [];
    for (const [key, value] of this.staged) {
      if (value === null) continue;
      ops.push({ type: 'put', key: stateKey(key), value });
      this.nodes.set(key, value);
    }
    this.staged = new Map();
    return ops;
  }

  /** Drops staged writes of a block that will not be stored (a failed build or import). */
  discardStaged(): void {
    this.staged = new Map();
  }
}

/**
 * The state database as an executing VM sees it: trie walks served from memory resolve as
 * microtasks, which starve the thread's mailbox, so a block's state commit (thousands of puts, each
 * walking from the root) would hold every queued read and the pool's account checks until it ends.
 * Every YIELD_EVERY_MS of walking this lets them through. Reads of the read state go to the StateDb
 * directly: they are short, and must not wait for a build's time slices.
 */
export class YieldingStateDb implements DB<string, string | Uint8Array> {
  private lastYield = performance.now();

  constructor(readonly db: StateDb) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    const now = performance.now();
    if (now - this.lastYield >= YIELD_EVERY_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      this.lastYield = performance.now();
    }
    return this.db.get(key);
  }

  put(key: string, value: string | Uint8Array): Promise<void> {
    return this.db.put(key, value);
  }

  del(key: string): Promise<void> {
    return this.db.del(key);
  }

  batch(ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {
    return this.db.batch(ops);
  }

  shallowCopy(): DB<string, string | Uint8Array> {
    return this;
  }

  async open(): Promise<void> {}
}

/**
 * ethereumjs state caches (ordered maps: they never evict) emptied between blocks once they may have
 * grown past `limit` entries.
 */
export class BoundedStateCaches {
  /** An upper bound of the entries added since the last clear: every miss and write may add one. */
  private added = 0;

  constructor(
    readonly caches: Caches,
    private readonly limit: number,
  ) {}

  /** Only between blocks: with a checkpoint open or writes unflushed, clearing would lose state. */
  trim(): void {
    for (const cache of [this.caches.account, this.caches.storage, this.caches.code]) {
      if (cache === undefined) continue;
      const { reads, hits, writes } = cache.stats(true);
      this.added += reads - hits + writes;
    }
    if (this.added <= this.limit) return;
    this.caches.clear();
    this.added = 0;
  }
}

/**
 * The RocksDB key of a trie key. The MPT hands over unprefixed hex it made itself: decoded straight
 * into the prefixed key (thousands per block), without hexToBytes' validation and copies.
 */
function stateKey(key: string): Uint8Array {
  const hex = key.startsWith('0x') ? key.slice(2) : key;
  const out = Buffer.allocUnsafe(1 + (hex.length >> 1));
  out[0] = Prefix.state;
  if (out.write(hex, 1, 'hex') !== out.length - 1) throw new Error(`not a hex trie key: ${key}`);
  return out;
}

function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? hexToBytes(value.startsWith('0x') ? (value as `0x${string}`) : `0x${value}`) : value;
}
