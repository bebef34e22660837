import type { AccountFields, StateManagerInterface } from '@ethereumjs/common';
import { MerkleStateManager, OriginalStorageCache } from '@ethereumjs/statemanager';
import { Account, bytesToUnprefixedHex, equalsBytes, unpadBytes } from '@ethereumjs/util';
import type { Address } from '@ethereumjs/util';
import { keccak256 as keccak_256 } from '../ethereum/keccak.js';

/**
 * The state after one block as reads and simulations (eth_call, eth_estimateGas, balance reads) see
 * it: what was read from the trie at that root is kept until the root changes, and what a simulation
 * writes lives in an overlay undone by a log, never in the trie.
 *
 * ethereumjs' MerkleStateManager is the wrong shape for this work: its caches journal reads like
 * writes, so reverting a simulation's checkpoint forgets every account, slot and code the call read,
 * and the next call reads them from RocksDB again (five database round trips for an ERC-20
 * `balanceOf`); its checkpoints copy trie and cache maps, and every revert rebuilds the storage tries.
 * Here a checkpoint is a position in the undo log and state read at the root is never journaled.
 *
 * It cannot compute the state root of simulated writes: `getStateRoot` answers the root it reads at
 * and refuses once something is written. Whatever needs that root (eth_simulateV1's blocks,
 * pre-Byzantium receipts) or the trie itself (proofs) runs on the trie-backed read state instead.
 */
export class ReadState implements StateManagerInterface {
  readonly originalStorageCache: OriginalStorageCache;
  /** Reads the trie at `root`, uncached: only misses of the maps below reach it. */
  private readonly trie: MerkleStateManager;
  private root: Uint8Array;

  /** Accounts at `root` by unprefixed address hex; null: no account. */
  private readonly rootAccounts = new Map<string, Account | null>();
  /** Storage at `root` by address hex + slot hex, values unpadded (empty: zero). */
  private readonly rootStorage = new Map<string, Uint8Array>();
  /** Code by code hash: content-addressed, so it stays valid across roots. */
  private readonly codeByHash = new Map<string, Uint8Array>();

  /** The simulation's writes. Account null: deleted. */
  private readonly accounts = new Map<string, Account | null>();
  private readonly storage = new Map<string, Map<string, Uint8Array>>();
  private readonly code = new Map<string, Uint8Array>();
  /** Accounts whose storage at the root no longer shows through (cleared or deleted). */
  private readonly cleared = new Set<string>();
  /** How to undo each write made inside a checkpoint, newest last. */
  private undo: (() => void)[] = [];
  /** The undo log's length at each open checkpoint. */
  private readonly checkpoints: number[] = [];

  constructor(
    trie: MerkleStateManager,
    /** Reads code by its hash from the state database (a miss of `codeByHash`). */
    private readonly readCode: (codeHash: Uint8Array) => Promise<Uint8Array | undefined>,
    /** The most entries kept for one root before they are dropped (bounded memory under varied reads). */
    private readonly maxEntries = 100_000,
  ) {
    this.trie = trie;
    this.root = trie['_trie'].root();
    this.originalStorageCache = new OriginalStorageCache(this.getStorage.bind(this));
  }

  /** The trie-backed reader at the current root (proofs need the trie itself). */
  get trieReader(): MerkleStateManager {
    return this.trie;
  }

  /** Forgets every write and open checkpoint: each read or simulation starts from the root's state. */
  discardWrites(): void {
    this.accounts.clear();
    this.storage.clear();
    this.code.clear();
    this.cleared.clear();
    this.undo = [];
    this.checkpoints.length = 0;
    this.originalStorageCache.clear();
  }

  async getAccount(address: Address): Promise<Account | undefined> {
    const key = bytesToUnprefixedHex(address.bytes);
    let found = this.accounts.get(key);
    if (found === undefined) found = await this.rootAccount(address, key);
    return found === null ? undefined : copyOf(found);
  }

  private async rootAccount(address: Address, key: string): Promise<Account | null> {
    let found = this.rootAccounts.get(key);
    if (found === undefined) {
      const root = this.root;
      found = (await this.trie.getAccount(address)) ?? null;
      if (equalsBytes(root, this.root)) this.remember(this.rootAccounts, key, found);
    }
    return found;
  }

  async putAccount(address: Address, account?: Account): Promise<void> {
    this.write(this.accounts, bytesToUnprefixedHex(address.bytes), account === undefined ? null : copyOf(account));
  }

  async deleteAccount(address: Address): Promise<void> {
    const key = bytesToUnprefixedHex(address.bytes);
    this.write(this.accounts, key, null);
    this.write(this.code, key, undefined);
    this.clearSlots(key);
  }

  async modifyAccountFields(address: Address, fields: AccountFields): Promise<void> {
    const account = (await this.getAccount(address)) ?? new Account();
    if (fields.nonce !== undefined) account.nonce = fields.nonce;
    if (fields.balance !== undefined) account.balance = fields.balance;
    if (fields.storageRoot !== undefined) account.storageRoot = fields.storageRoot;
    if (fields.codeHash !== undefined) account.codeHash = fields.codeHash;
    await this.putAccount(address, account);
  }

  async getCode(address: Address): Promise<Uint8Array> {
    const written = this.code.get(bytesToUnprefixedHex(address.bytes));
    if (written !== undefined) return written;
    const account = await this.getAccount(address);
    if (!account || !account.isContract()) return new Uint8Array(0);
    const hashKey = bytesToUnprefixedHex(account.codeHash);
    let code = this.codeByHash.get(hashKey);
    if (code === undefined) {
      code = (await this.readCode(account.codeHash)) ?? new Uint8Array(0);
      this.remember(this.codeByHash, hashKey, code);
    }
    return code;
  }

  async getCodeSize(address: Address): Promise<number> {
    return (await this.getCode(address)).length;
  }

  async putCode(address: Address, value: Uint8Array): Promise<void> {
    const codeHash = keccak_256(value);
    this.write(this.code, bytesToUnprefixedHex(address.bytes), value);
    const account = (await this.getAccount(address)) ?? new Account();
    account.codeHash = codeHash;
    await this.putAccount(address, account);
  }

  async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long');
    const addressKey = bytesToUnprefixedHex(address.bytes);
    const slotKey = bytesToUnprefixedHex(key);
    const written = this.storage.get(addressKey)?.get(slotKey);
    if (written !== undefined) return written;
    // As MerkleStateManager: an account that does not exist (now) has no storage.
    if (this.cleared.has(addressKey) || (await this.getAccount(address)) === undefined) return new Uint8Array(0);
    const rootKey = addressKey + slotKey;
    let value = this.rootStorage.get(rootKey);
    if (value === undefined) {
      const root = this.root;
      value = (await this.rootAccount(address, addressKey)) === null ? new Uint8Array(0) : await this.trie.getStorage(address, key);
      if (equalsBytes(root, this.root)) this.remember(this.rootStorage, rootKey, value);
    }
    return value;
  }

  async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    if (key.length !== 32) throw new Error('Storage key must be 32 bytes long');
    if (value.length > 32) throw new Error('Storage value cannot be longer than 32 bytes');
    if ((await this.getAccount(address)) === undefined) throw new Error('putStorage() called on non-existing account');
    const addressKey = bytesToUnprefixedHex(address.bytes);
    let slots = this.storage.get(addressKey);
    if (slots === undefined) {
      slots = new Map();
      this.write(this.storage, addressKey, slots);
    }
    this.write(slots, bytesToUnprefixedHex(key), unpadBytes(value));
  }

  async clearStorage(address: Address): Promise<void> {
    // As MerkleStateManager: clearing the storage of a missing account creates it, empty.
    const account = (await this.getAccount(address)) ?? new Account();
    account.storageRoot = new Account().storageRoot;
    await this.putAccount(address, account);
    this.clearSlots(bytesToUnprefixedHex(address.bytes));
  }

  private clearSlots(addressKey: string): void {
    this.write(this.storage, addressKey, new Map());
    if (!this.cleared.has(addressKey)) {
      this.cleared.add(addressKey);
      if (this.checkpoints.length > 0) this.undo.push(() => this.cleared.delete(addressKey));
    }
  }

  async checkpoint(): Promise<void> {
    this.checkpoints.push(this.undo.length);
  }

  async commit(): Promise<void> {
    // The undo entries now belong to the enclosing checkpoint (if any: outside one nothing reverts).
    this.checkpoints.pop();
    if (this.checkpoints.length === 0) {
      this.undo = [];
      this.originalStorageCache.clear();
    }
  }

  async revert(): Promise<void> {
    const mark = this.checkpoints.pop() ?? 0;
    while (this.undo.length > mark) this.undo.pop()!();
    if (this.checkpoints.length === 0) this.originalStorageCache.clear();
  }

  async getStateRoot(): Promise<Uint8Array> {
    if (this.accounts.size > 0 || this.storage.size > 0 || this.code.size > 0 || this.cleared.size > 0) {
      throw new Error('ReadState cannot compute the state root of simulated writes');
    }
    return this.root;
  }

  async setStateRoot(stateRoot: Uint8Array): Promise<void> {
    this.discardWrites();
    if (equalsBytes(stateRoot, this.root)) return;
    await this.trie.setStateRoot(stateRoot, true);
    this.root = stateRoot;
    this.rootAccounts.clear();
    this.rootStorage.clear();
  }

  hasStateRoot(root: Uint8Array): Promise<boolean> {
    return this.trie.hasStateRoot(root);
  }

  clearCaches(): void {
    this.rootAccounts.clear();
    this.rootStorage.clear();
    this.codeByHash.clear();
  }

  shallowCopy(): StateManagerInterface {
    throw new Error('ReadState is not copied: each read VM has its own');
  }

  /** Sets `key` in `map`, with its undo when a checkpoint is open. */
  private write<V>(map: Map<string, V>, key: string, value: V | undefined): void {
    if (this.checkpoints.length > 0) {
      const had = map.has(key);
      const previous = map.get(key);
      this.undo.push(had ? () => map.set(key, previous as V) : () => map.delete(key));
    }
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }

  /** Keeps a read of the root's state, dropping all of a map past the bound (reads are re-done, not wrong). */
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= this.maxEntries) map.clear();
    map.set(key, value);
  }
}

function copyOf(account: Account): Account {
  return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash);
}
