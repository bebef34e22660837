import { keccak256 } from '../ethereum/keccak.js';
import { createMPT } from '@ethereumjs/mpt';
import { CODEHASH_PREFIX, MerkleStateManager } from '@ethereumjs/statemanager';
import type { Caches } from '@ethereumjs/statemanager';
import { bytesToUnprefixedHex, concatBytes, equalsBytes } from '@ethereumjs/util';
import type { DB } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import type { ChainSpec } from './chain-spec.js';
import { ReadState } from './read-state.js';

/**
 * The state after a block, as reads and simulations see it: what the chain thread and each state
 * reader thread offer the call simulator and the state handlers.
 */
export interface StateAtBlock {
  readonly spec: ChainSpec;
  /** Runs `fn` on a VM whose state is the one at `stateRoot`; what `fn` writes vanishes. */
  withStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T>;
  /** `withStateAt` on a trie-backed state: for proofs and state roots of simulated writes. */
  withTrieStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T>;
}

/** The world-state trie's key-value store as the MPT reads it (hex keys, byte values). */
export type StateStore = DB<string, string | Uint8Array>;

/**
 * The two read VMs over a state store: one on a `ReadState` (cached reads, simulated writes in an
 * overlay) and one on ethereumjs' trie-backed MerkleStateManager. One read at a time: moving a shared
 * read state's root under a concurrent read would mix two blocks' states, so each read runs wholly
 * at the root it asked for, and the next one moves it.
 */
export class StateViews implements StateAtBlock {
  private readLock: Promise<unknown> = Promise.resolve();
  private trieReadRoot: Uint8Array = new Uint8Array();

  private constructor(
    readonly spec: ChainSpec,
    private readonly readVm: VM,
    private readonly trieReadVm: VM,
  ) {}

  /**
   * `store`: where trie nodes and code are read, by their hash; `vmOver` makes a VM over a state
   * manager the way the owner makes every VM (its BLOCKHASH lookup, precompiles); `openTrieState` the
   * state over the trie (the chain's commits blocks in one pass per trie).
   */
  static async open(
    spec: ChainSpec,
    store: StateStore,
    vmOver: (stateManager: ReadState | MerkleStateManager) => Promise<VM>,
    openTrieState: (store: StateStore) => Promise<MerkleStateManager> = trieStateOver,
  ): Promise<StateViews> {
    const readState = new ReadState(await openTrieState(store), (codeHash) => readCodeFrom(store, codeHash));
    return new StateViews(spec, await vmOver(readState), await vmOver(await openTrieState(store)));
  }

  withStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T> {
    return this.serialised(async () => {
      // setStateRoot also forgets whatever a previous simulation left written.
      await this.readVm.stateManager.setStateRoot(stateRoot);
      return fn(this.readVm);
    });
  }

  withTrieStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T> {
    return this.serialised(async () => {
      if (!equalsBytes(this.trieReadRoot, stateRoot)) {
        await this.trieReadVm.stateManager.setStateRoot(stateRoot, true);
        this.trieReadRoot = stateRoot;
      }
      return fn(this.trieReadVm);
    });
  }

  private serialised<T>(run: () => Promise<T>): Promise<T> {
    const next = this.readLock.then(run, run);
    this.readLock = next.catch(() => undefined);
    return next;
  }
}

/** A trie-backed state manager over `store` (keys hashed, as Ethereum's state trie). */
export async function trieStateOver(store: StateStore, caches?: Caches): Promise<MerkleStateManager> {
  const trie = await createMPT({ db: store, useKeyHashing: true, useKeyHashingFunction: keccak256, valueEncoding: 'view' });
  return new MerkleStateManager({ trie, caches });
}

function readCodeFrom(store: StateStore, codeHash: Uint8Array): Promise<Uint8Array | undefined> {
  return store.get(bytesToUnprefixedHex(concatBytes(CODEHASH_PREFIX, codeHash))) as Promise<Uint8Array | undefined>;
}
