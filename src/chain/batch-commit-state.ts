import { Account, concatBytes, createAddressFromString, unprefixedHexToBytes } from '@ethereumjs/util';
import { RLP } from '@ethereumjs/rlp';
import { CODEHASH_PREFIX, MerkleStateManager } from '@ethereumjs/statemanager';
import type { DB } from '@ethereumjs/util';
import { keccak256 } from '../shared/ethereum/keccak.js';
import { applyTrieWrites } from './trie-batch.js';
import type { TrieNodeStore, TrieWrite } from './trie-batch.js';

/**
 * ethereumjs' MerkleStateManager whose cached writes reach the tries in one pass per trie
 * (trie-batch.ts) instead of one `put` per account and slot: what a block changed is hashed once and
 * only the nodes of the new state are written. Flushing happens when the outermost checkpoint commits
 * (the end of a block being built or executed) and when the state root is asked for.
 */
export class BatchCommitStateManager extends MerkleStateManager {
  override async flush(): Promise<void> {
    const caches = this._caches;
    if (caches === undefined) return super.flush();
    const nodes = nodeStore(this._trie.database());

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
      account.storageRoot = await applyTrieWrites(nodes, account.storageRoot, writes, keccak256);
      await this.putAccount(address, account);
    }
    // Storage tries opened before this flush hold roots it replaced; the next read opens them again.
    if (slotsByAccount.size > 0) this._storageTries = {};

    const accountWrites: TrieWrite[] = [];
    for (const [addressHex, { accountRLP }] of caches.account?.flush() ?? []) {
      accountWrites.push({ key: keccak256(unprefixedHexToBytes(addressHex)), value: accountRLP });
    }
    this._trie.root(await applyTrieWrites(nodes, this._trie.root(), accountWrites, keccak256));
  }
}

/** The trie's node database (ethereumjs' CheckpointDB: writes inside a trie checkpoint stay revertible). */
function nodeStore(db: DB<Uint8Array, Uint8Array>): TrieNodeStore {
  return {
    get: (hash) => db.get(hash),
    put: (hash, encoded) => db.put(hash, encoded),
  };
}
