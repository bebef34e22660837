import { Account, Address, concatBytes, createAccountFromRLP, createAddressFromString, unprefixedHexToBytes } from '@ethereumjs/util';
import { RLP } from '@ethereumjs/rlp';
import { CODEHASH_PREFIX, MerkleStateManager } from '@ethereumjs/statemanager';
import type { DB } from '@ethereumjs/util';
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

  override async flush(): Promise<void> {
    const caches = this._caches;
    if (caches === undefined) return super.flush();

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

/** The trie's node database (ethereumjs' CheckpointDB: writes inside a trie checkpoint stay revertible). */
function nodeStore(db: DB<Uint8Array, Uint8Array>): TrieNodes['store'] {
  return {
    get: (hash) => db.get(hash),
    put: (hash, encoded) => db.put(hash, encoded),
  };
}
