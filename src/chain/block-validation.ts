/**
 * Execution of a block on a throw-away state, for blocks other validators propose (QBFT validates a
 * proposal by executing it before preparing it, qbft-and-p2p.md §5.3). The scratch state reads the
 * committed world state from RocksDB but stages its own trie writes apart from the building state,
 * so validating never writes to the database, never moves the head and never disturbs a block this
 * node is building.
 *
 * The outcome of the last successful validation is kept: when the same block is committed moments
 * later, the chain stores those staged writes and receipts instead of executing the block again.
 */
import type { Block } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { Address, equalsBytes } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { keccak256 as keccak_256 } from '../shared/ethereum/keccak.js';
import { InvalidBlockError, firstLine } from './import-rules.js';
import type { KvOp, KvStore } from '../shared/storage/kv-store.js';
import { StateDb } from './state-db.js';
import type { StoredReceipt } from '../shared/ethereum/chain-records.js';

/** The answer to "may this proposed block become the next block?". */
export interface BlockValidation {
  valid: boolean;
  /** Why not, in words an operator can act on (absent when valid). */
  reason?: string;
}

/** A block that executed correctly on a scratch state: everything storing it would write. */
export interface ExecutedBlock {
  hash: Uint8Array;
  parentHash: Uint8Array;
  /** keccak of the encoded body: a stored block must carry exactly the body that was executed. */
  bodyDigest: Uint8Array;
  receipts: StoredReceipt[];
  /** The trie nodes the block's execution created, as RocksDB writes. */
  stateOps: KvOp[];
  /** Sender public key of each transaction, so that storing the block recovers none again. */
  senderKeys: Uint8Array[];
  /** The block as validated (decoded, senders set) and its encoding: what consensus then commits, sealed. */
  block: Block;
  rlp: Uint8Array;
}

/** Sender public keys already recovered elsewhere, by transaction hash; null where unknown. */
export type KnownSenderKeys = (hashes: Uint8Array[]) => Promise<(Uint8Array | null)[]>;

/**
 * Recovers each transaction's sender once and keeps it in the transaction, so that the signature
 * rule, execution and storing the block do not each recover it again. `known[i]`, when given, is the
 * sender of a transaction with the same hash (hence the same signature), recovered before. Throws
 * InvalidBlockError at the first signature that does not recover.
 */
export function recoverSenders(block: Block, known?: readonly (Uint8Array | null)[]): Uint8Array[] {
  return block.transactions.map((tx, index) => {
    const knownKey = known?.[index];
    if (knownKey) {
      setSenderKey(tx, knownKey);
      return knownKey;
    }
    let key: Uint8Array;
    try {
      key = tx.getSenderPublicKey();
    } catch (err) {
      throw new InvalidBlockError(`transaction ${index} is invalid: ${firstLine(err)}`);
    }
    setSenderKey(tx, key);
    return key;
  });
}

/** Gives a block's transactions the sender keys recovered from the same transactions before. */
export function adoptSenders(block: Block, senderKeys: readonly Uint8Array[]): void {
  block.transactions.forEach((tx, i) => setSenderKey(tx, senderKeys[i]!));
}

function setSenderKey(tx: Block['transactions'][number], key: Uint8Array): void {
  // ethereumjs reads this cache before recovering (frozen transactions fill it themselves).
  (tx.cache as { senderPubKey?: Uint8Array }).senderPubKey = key;
}

/**
 * Gives a transaction made unfrozen (`freeze: false`) its hash and sender, known from elsewhere (the
 * pool hashed it and recovered the sender), then freezes it as ethereumjs would have. ethereumjs
 * derives the address from the key again, a keccak, on each of the several `getSenderAddress()` calls
 * executing and storing a transaction makes; here it is derived once.
 */
export function pinKnown(tx: Block['transactions'][number], known: { hash: Uint8Array; senderPublicKey: Uint8Array }): void {
  setSenderKey(tx, known.senderPublicKey);
  (tx.cache as { hash?: Uint8Array }).hash = known.hash;
  const sender = new Address(keccak_256(known.senderPublicKey).subarray(12));
  Object.defineProperty(tx, 'getSenderAddress', { value: () => sender });
  Object.freeze(tx);
}

/**
 * Whether two encoded blocks carry the same bytes after their header (transactions, ommers,
 * withdrawals...), read without decoding any transaction. False for anything not a list.
 */
export function sameBody(a: Uint8Array, b: Uint8Array): boolean {
  const bodyA = bodyBytes(a);
  const bodyB = bodyBytes(b);
  return bodyA !== undefined && bodyB !== undefined && equalsBytes(bodyA, bodyB);
}

function bodyBytes(rlp: Uint8Array): Uint8Array | undefined {
  const prefix = rlp[0];
  if (prefix === undefined || prefix < 0xc0) return undefined;
  const payload = rlp.subarray(prefix <= 0xf7 ? 1 : 1 + (prefix - 0xf7));
  try {
    // Decodes the header item only; what follows it is the body.
    return RLP.decode(payload, true).remainder;
  } catch {
    return undefined;
  }
}

/** keccak of the RLP of everything after the header (transactions, ommers, withdrawals...). */
export function bodyDigest(block: Block): Uint8Array {
  const [, ...body] = block.raw() as NestedUint8Array;
  return keccak_256(RLP.encode(body));
}

/**
 * Whether `executed` may stand in for executing `block` on top of `headHash`. The hash covers every
 * header field but the QBFT round and commit seals, which execution never reads, so a proposal
 * validated before its seals existed matches the committed block; the body is compared separately
 * because the header hash only commits to its roots, which a block from outside may not honour.
 */
export function canReuse(executed: ExecutedBlock | undefined, block: Block, hash: Uint8Array, headHash: Uint8Array): executed is ExecutedBlock {
  return (
    executed !== undefined &&
    equalsBytes(executed.hash, hash) &&
    equalsBytes(executed.parentHash, headHash) &&
    equalsBytes(executed.bodyDigest, bodyDigest(block))
  );
}

/**
 * A VM over the committed world state whose writes stay in memory. Runs are serialised: the VM's
 * state manager and staged writes belong to one validation at a time.
 */
export class ScratchState {
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly vm: VM,
    private readonly db: StateDb,
  ) {}

  /** `newVm` makes a VM on a state database exactly as the chain makes its own. */
  static async open(kv: KvStore, newVm: (db: StateDb) => Promise<VM>): Promise<ScratchState> {
    const db = new StateDb(kv);
    return new ScratchState(await newVm(db), db);
  }

  /**
   * Runs `fn` alone with the scratch VM, starting from no staged writes. `fn` takes what it keeps
   * with `takeWrites`; whatever it leaves is dropped.
   */
  run<T>(fn: (vm: VM, takeWrites: () => KvOp[]) => Promise<T>): Promise<T> {
    const go = async (): Promise<T> => {
      this.db.discardStaged();
      try {
        return await fn(this.vm, () => this.db.drainStaged());
      } finally {
        this.db.discardStaged();
      }
    };
    const next = this.lock.then(go, go);
    this.lock = next.catch(() => undefined);
    return next;
  }

  /** Resolves once no run is in progress (before the database closes). */
  async idle(): Promise<void> {
    await this.lock;
  }
}
