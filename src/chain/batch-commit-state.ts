import { Account, Address, bytesToUnprefixedHex, concatBytes, createAccountFromRLP, createAddressFromString, unpadBytes, unprefixedHexToBytes } from '@ethereumjs/util';
import { RLP } from '@ethereumjs/rlp';
import { AccountCache, CODEHASH_PREFIX, Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import type { DB } from '@ethereumjs/util';
import type { CheckpointDB } from '@ethereumjs/mpt';
import { keccak256 } from '../shared/ethereum/keccak.js';
import { TrieNodes, applyTrieWrites, readTrieValue } from './trie-batch.js';
import type { TrieWrite } from './trie-batch.js';

/**
 * Decoded trie nodes each state keeps: the top three levels of a trie of a million accounts are
 * 4,369 branches (~2 kB each decoded).
 */
const DECODED_NODES = 4096;

/** RLP of the empty byte string: what the storage cache holds for a slot read as absent. */
const EMPTY_SLOT = Uint8Array.of(0x80);

/**
 * ethereumjs' MerkleStateManager whose cached writes reach the tries in one pass per trie
 * (trie-batch.ts) instead of one `put` per account and slot: what a block changed is hashed once and
 * only the nodes of the new state are written. Flushing happens when the outermost checkpoint commits
 * (the end of a block being built or executed) and when the state root is asked for. Accounts and
 * slots missing from the caches are read by a plain walk over decoded nodes kept between reads, not
 * by the library's general-purpose trie walker. Without caches it is the library's state manager.
 */
export class BatchCommitStateManager extends MerkleStateManager {
  private trieNodes: TrieNodes | undefined;

  private get nodes(): TrieNodes {
    this.trieNodes ??= new TrieNodes(nodeStore(this._trie.database()), keccak256, DECODED_NODES);
    return this.trieNodes;
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const cache = this._caches?.account;
    if (cache === undefined) return super.getAccount(address);
    const cached = cache.get(address);
    if (cached instanceof DecodedAccount) return cached.copy();
    if (cached !== undefined) return cached.accountRLP !== undefined ? createAccountFromRLP(cached.accountRLP) : undefined;
    const rlp = await readTrieValue(this.nodes, this._trie.root(), keccak256(address.bytes));
    const account = rlp !== undefined ? createAccountFromRLP(rlp) : undefined;
    cache.put(address, account);
    return account;
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const cache = this._caches?.storage;
    if (cache === undefined || key.length !== 32) return super.getStorage(address, key);
    const cached = cache.get(address, key);
    if (cached !== undefined) return RLP.decode(cached) as Uint8Array;
    const account = await this.getAccount(address);
    if (account === undefined) return new Uint8Array();
    const value = await readTrieValue(this.nodes, account.storageRoot, keccak256(key));
    cache.put(address, key, value ?? EMPTY_SLOT);
    return RLP.decode(value ?? new Uint8Array(0)) as Uint8Array;
  }

  /**
   * With caches a slot write belongs in the storage cache alone, flushed with the block. ethereumjs
   * 10.1 means to do that (`cache.put(...) ?? writeToTrie(...)`), but the cache's `put` returns
   * undefined, so every SSTORE also went through the storage trie: an MPT put, its path re-hashed and
   * stored, per write.
   */
  override async putStorage(address: Address, key: Uint8Array, value: Uint8Array): Promise<void> {
    const cache = this._caches?.storage;
    // The library's own checks and messages for a bad key or value.
    if (cache === undefined || key.length !== 32 || value.length > 32) return super.putStorage(address, key, value);
    if ((await this.getAccount(address)) === undefined) return super.putStorage(address, key, value);
    cache.put(address, key, RLP.encode(unpadBytes(value)));
  }

  /**
   * A flush inside a checkpoint (a simulation asking for a state root) makes ethereumjs' caches forget
   * what they held before the checkpoint (their `flush` resets the checkpoint's undo records), so
   * reverting it would leave the simulation's accounts and slots in the caches; the trie's root does
   * revert. Once the last checkpoint is reverted the caches are emptied: reads go to the trie again.
   */
  private flushedInCheckpoint = false;

  override async revert(): Promise<void> {
    await super.revert();
    if (this._checkpointCount === 0 && this.flushedInCheckpoint) {
      this.flushedInCheckpoint = false;
      this._caches?.clear();
      this._storageTries = {};
    }
  }

  override async flush(): Promise<void> {
    const caches = this._caches;
    if (caches === undefined) return super.flush();
    if (this._checkpointCount > 0) this.flushedInCheckpoint = true;

    for (const [addressHex, { code }] of caches.code?.flush() ?? []) {
      if (code === undefined) continue;
      const address = createAddressFromString(`0x${addressHex}`);
      const codeHash = keccak256(code);
      await this._getCodeDB().put(this._prefixCodeHashes ? concatBytes(CODEHASH_PREFIX, codeHash) : codeHash, code);
      if ((await this.getAccount(address)) === undefined) await this.putAccount(address, new Account());
      await this.modifyAccountFields(address, { codeHash });
    }

    const slotsByAccount = new Map<string, TrieWrite[]>();
    for (const [addressHex, slotHex, encoded] of caches.storage?.flush() ?? []) {
      const value = RLP.decode(encoded ?? new Uint8Array(0)) as Uint8Array;
      let writes = slotsByAccount.get(addressHex);
      if (writes === undefined) slotsByAccount.set(addressHex, (writes = []));
      writes.push({ key: keccak256(unprefixedHexToBytes(slotHex)), value: value.length > 0 ? RLP.encode(value) : undefined });
    }
    for (const [addressHex, writes] of slotsByAccount) {
      const address = createAddressFromString(`0x${addressHex}`);
      // Slots of an account deleted meanwhile go with it, as in MerkleStateManager.flush.
      const account = await this.getAccount(address);
      if (account === undefined) continue;
      account.storageRoot = await applyTrieWrites(this.nodes, account.storageRoot, writes, keccak256);
      await this.putAccount(address, account);
    }
    // Storage tries opened before this flush hold roots it replaced; the next read opens them again.
    if (slotsByAccount.size > 0) this._storageTries = {};

    const accountWrites: TrieWrite[] = [];
    for (const [addressHex, { accountRLP }] of caches.account?.flush() ?? []) {
      accountWrites.push({ key: keccak256(unprefixedHexToBytes(addressHex)), value: accountRLP });
    }
    this._trie.root(await applyTrieWrites(this.nodes, this._trie.root(), accountWrites, keccak256));
  }
}

/**
 * ethereumjs' caches with an account cache that keeps accounts decoded (DecodedAccountCache), for a
 * BatchCommitStateManager.
 */
export function decodedAccountCaches(): Caches {
  const caches = new Caches();
  caches.account = new DecodedAccountCache({ type: caches.settings.account.type, size: caches.settings.account.size });
  return caches;
}

/**
 * The account cache's entry for an account written: the account itself, its RLP made only when the
 * cache is flushed. The library's entry is the RLP, so every write encoded the account and every read
 * decoded it again: the sender, recipient and coinbase of every transaction, several times each.
 */
class DecodedAccount {
  private encoded: Uint8Array | undefined;
  private readonly account: Account;

  constructor(account: Account) {
    this.account = copyAccount(account);
  }

  /** The cached account, to be changed by whoever asked: the entry never changes. */
  copy(): Account {
    return copyAccount(this.account);
  }

  get accountRLP(): Uint8Array {
    this.encoded ??= this.account.serialize();
    return this.encoded;
  }
}

function copyAccount(account: Account): Account {
  return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash);
}

/**
 * ethereumjs' account cache whose written accounts stay decoded (DecodedAccount); it keeps, reverts
 * and flushes entries as the library's does. Partial accounts (binary-tree state) are the library's.
 */
class DecodedAccountCache extends AccountCache {
  constructor(opts: ConstructorParameters<typeof AccountCache>[0]) {
    super(opts);
    if (this._orderedMapCache !== undefined) this._orderedMapCache = new HashedEntries() as unknown as typeof this._orderedMapCache;
  }

  override put(address: Address, account: Account | undefined, couldBePartialAccount = false): void {
    if (account === undefined || couldBePartialAccount) return super.put(address, account, couldBePartialAccount);
    const addressHex = bytesToUnprefixedHex(address.bytes);
    this._saveCachePreState(addressHex);
    const entry = new DecodedAccount(account);
    if (this._lruCache) this._lruCache.set(addressHex, entry);
    else this._orderedMapCache!.setElement(addressHex, entry);
    this._stats.writes += 1;
  }
}

/**
 * Reads through the trie's CheckpointDB (it sees nodes written inside open checkpoints); writes go to
 * the database beneath it. A flush inside a checkpoint (a simulation asking for a state root) must not
 * lose its nodes when the checkpoint is reverted: the storage roots it computed may stay referenced
 * (ethereumjs' storage tries write beneath the checkpoints for the same reason). Nodes are
 * content-addressed, so a node kept for nothing is only garbage, never wrong.
 */
function nodeStore(db: CheckpointDB): TrieNodes['store'] {
  const beneath = db.db as DB<string, Uint8Array>;
  return {
    get: (hash) => db.get(hash),
    put: (hash, encoded) => beneath.put(bytesToUnprefixedHex(hash), encoded),
  };
}

/**
 * The part of js-sdsl's OrderedMap the library's account cache uses, on a hash map. The cache holds
 * every account a block touched until the block is flushed (it never evicts, so that no write is
 * lost), and nothing reads it in key order; the red-black tree kept it sorted by address at a string
 * comparison per level: ~105 ms of a fresh node's chain profile over 5,000 transfers to new recipients,
 * ~55 on this map.
 */
class HashedEntries<V> {
  private readonly entries = new Map<string, V>();

  getElementByKey(key: string): V | undefined {
    return this.entries.get(key);
  }

  setElement(key: string, value: V): number {
    this.entries.set(key, value);
    return this.entries.size;
  }

  eraseElementByKey(key: string): boolean {
    return this.entries.delete(key);
  }

  size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
