/**
 * A state reader thread's core: the registry's `reader` methods (eth_call, eth_estimateGas,
 * eth_getBalance, eth_getCode, eth_getStorageAt) answered off the chain thread, with their own EVM and
 * read state, on state read through the chain.
 *
 * Where the state comes from. RocksDB has one owner, the chain thread. A second, read-only RocksDB
 * handle (the `rocksdb` package's `readOnly` open, RocksDB's OpenForReadOnly) sees the database as it
 * was when opened and never a later write (the package offers no secondary instance that catches up),
 * so it would have to be reopened at every block. Instead a reader asks the chain for the state values
 * it misses — trie nodes and code, by key — and keeps them. Those keys are the values' hashes: a value
 * never changes under its key, so a kept value is never stale, whatever blocks come later.
 *
 * Why each answer is one block's state. A call resolves its block once (`latest` is the head the
 * chain published in shared memory, the others are resolved by the chain as for its own calls) and
 * runs wholly at that block's state root, one call at a time on the reader's read state
 * (StateViews). Everything it reads is reached from that root through hashes, so it is that block's
 * state and nothing else. The chain stores a block's state in the same write as the block, before the
 * block can be named (head view, canonical index), and never deletes state (no pruning): every node a
 * resolvable block's root reaches can be fetched.
 */
import type { Block } from '@ethereumjs/block';
import type { BatchDBOp } from '@ethereumjs/util';
import { KECCAK256_RLP, bytesToHex, bytesToUnprefixedHex, equalsBytes } from '@ethereumjs/util';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { BlockRef, BlockTag } from '../shared/rpc/params.js';
import type { ChainSpec } from '../shared/execution/chain-spec.js';
import { CallSimulator, simulationGasCap } from '../shared/execution/simulation.js';
import { StateViews, type StateStore } from '../shared/execution/state-views.js';
import { createExecutionVm, type BlockHashSource } from '../shared/execution/execution-vm.js';
import { tuneInterpreter } from '../shared/execution/evm-tuning.js';
import { stateReadHandlers, type BlockResolver } from '../shared/execution/state-read-handlers.js';
import type { PointEvaluationInput } from '../shared/execution/kzg-point-evaluation.js';
import { LruCache } from '../shared/util/lru-cache.js';
import type { ChainHead } from '../shared/shared-memory/head-view.js';

/** What a reader asks the chain (the reader→chain channel). */
export interface ChainReads {
  stateValues(keys: string[]): Promise<(Uint8Array | null)[]>;
  /** The block a parameter names, with an empty body; null when there is none. */
  block(ref: BlockRef): Promise<{ hash: Uint8Array; rlp: Uint8Array } | null>;
  canonicalHash(number: bigint): Promise<Uint8Array | null>;
}

export interface StateReaderOptions {
  spec: ChainSpec;
  chain: ChainReads;
  /** The head the chain last published (shared memory): what `latest` and `pending` name. */
  head(): ChainHead | null;
  /** `--rpc-gas-cap` (0: the block gas limit). */
  rpcGasCap: bigint;
  verifyKzg(input: PointEvaluationInput): Promise<boolean>;
}

/** State values kept by a reader: about 16 MB of trie nodes and code (weights in bytes). */
const STATE_CACHE_LIMITS = { entries: 100_000, weight: 16 * 1024 * 1024 };
/** Blocks (headers with empty bodies) kept by hash: calls come in runs on the head and recent blocks. */
const BLOCK_CACHE_LIMITS = { entries: 64, weight: 64 };

const EMPTY_TRIE_ROOT = bytesToUnprefixedHex(KECCAK256_RLP);

/**
 * The state database as a reader sees it: values it read before, else the chain's. What a simulation
 * on the trie-backed state writes (nodes of simulated roots) is kept the same way: content-addressed
 * too, it cannot shadow a stored value.
 */
export class ChainStateStore implements StateStore {
  private readonly values = new LruCache<string, Uint8Array>(STATE_CACHE_LIMITS, (value) => value.length + 64);

  constructor(private readonly chain: Pick<ChainReads, 'stateValues'>) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    // The empty trie's root is never stored: every account without storage leads to it.
    if (key === EMPTY_TRIE_ROOT) return undefined;
    const kept = this.values.get(key);
    if (kept !== undefined) return kept;
    const [value] = await this.chain.stateValues([key]);
    if (value === null || value === undefined) return undefined;
    this.values.set(key, value);
    return value;
  }

  async put(key: string, value: string | Uint8Array): Promise<void> {
    if (value instanceof Uint8Array) this.values.set(key, value);
  }

  async del(): Promise<void> {}

  async batch(ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') await this.put(op.key, op.value);
  }

  shallowCopy(): StateStore {
    return this;
  }

  async open(): Promise<void> {}
}

/** BLOCKHASH on a reader: calls run on canonical blocks, so the canonical hash at a number. */
class CanonicalBlockHashes implements BlockHashSource {
  constructor(private readonly chain: Pick<ChainReads, 'canonicalHash'>) {}

  async getBlock(blockId: number): Promise<{ hash(): Uint8Array }> {
    const hash = (await this.chain.canonicalHash(BigInt(blockId))) ?? new Uint8Array(32);
    return { hash: () => hash };
  }

  async putBlock(): Promise<void> {}

  shallowCopy(): this {
    return this;
  }
}

/** Block parameters resolved as the chain resolves them, `latest` from the published head. */
export class ReaderBlocks implements BlockResolver {
  private readonly byHash = new LruCache<string, Block>(BLOCK_CACHE_LIMITS);

  constructor(
    private readonly spec: ChainSpec,
    private readonly chain: Pick<ChainReads, 'block'>,
    private readonly head: () => ChainHead | null,
  ) {}

  blockByRef(ref: BlockRef): Promise<Block | undefined> {
    return ref.kind === 'hash' ? this.fetch(ref) : this.blockByTag(ref);
  }

  blockByTag(tag: BlockTag): Promise<Block | undefined> {
    // No pending block is built: `pending` is the head, as on the chain.
    if (tag.kind === 'tag' && (tag.tag === 'latest' || tag.tag === 'pending')) {
      const head = this.head();
      if (head !== null) {
        const kept = this.byHash.get(bytesToHex(head.hash));
        if (kept !== undefined) return Promise.resolve(kept);
        return this.fetch({ kind: 'hash', hash: head.hash, requireCanonical: false });
      }
    }
    return this.fetch(tag);
  }

  private async fetch(ref: BlockRef): Promise<Block | undefined> {
    const answer = await this.chain.block(ref);
    if (answer === null) return undefined;
    const key = bytesToHex(answer.hash);
    let block = this.byHash.get(key);
    if (block === undefined) {
      block = this.spec.decodeBlock(answer.rlp);
      if (!equalsBytes(block.hash(), answer.hash)) throw new Error(`block ${key} decoded to another hash`);
      this.byHash.set(key, block);
    }
    return block;
  }
}

export class StateReader {
  readonly handlers: MethodHandlers<'reader'>;

  private constructor(handlers: MethodHandlers<'reader'>) {
    this.handlers = handlers;
  }

  static async open(options: StateReaderOptions): Promise<StateReader> {
    const { spec, chain, rpcGasCap } = options;
    await tuneInterpreter();
    const store = new ChainStateStore(chain);
    const views = await StateViews.open(spec, store, (stateManager) =>
      createExecutionVm(spec, stateManager, new CanonicalBlockHashes(chain), options.verifyKzg),
    );
    const simulator = new CallSimulator(views, (block) => simulationGasCap(block, rpcGasCap));
    return new StateReader(stateReadHandlers(views, new ReaderBlocks(spec, chain, options.head), simulator));
  }
}
