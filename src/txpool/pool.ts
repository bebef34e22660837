/**
 * The transaction pool's state and rules, free of threads and I/O: the txpool actor wraps one instance,
 * feeds it decoded transactions plus the account state it fetched from the chain actor, and asks it for
 * block contents. Admission follows Besu's check order (rpc-auth-cli.md §12.2) for the checks that need
 * chain state; the stateless ones already ran in `decodeRawTransaction`.
 *
 * Per sender, transactions are kept by nonce. Those forming an unbroken run from the sender's account
 * nonce are *pending* (executable, "ready"); any beyond a gap are *queued* (future) and get promoted when
 * the gap fills or the account nonce moves past it.
 */
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { BinaryHeap } from './heap.js';
import { effectiveTipOf, maxFeePerGasOf, maxPriorityFeePerGasOf, toHexKey, type DecodedTx } from '../shared/ethereum/decoded-tx.js';

export interface TransactionPoolOptions {
  /** `--tx-pool-price-bump`: percent by which a same-nonce replacement must raise its price. */
  priceBump: number;
  /** `--tx-pool-max-future-by-sender`: a nonce ≥ account nonce + this is too distant. */
  maxFutureBySender: number;
  /** `--tx-pool-min-gas-price`: floor for transactions without priority. */
  minGasPrice: bigint;
  /** `--rpc-tx-feecap`: per-gas price ceiling for local transactions; 0 disables it. */
  txFeeCap: bigint;
  /** `--tx-pool-no-local-priority`: local (RPC) transactions lose their priority. */
  noLocalPriority: boolean;
  /** `--tx-pool-priority-senders`: addresses (hex) whose transactions always have priority. */
  prioritySenders: readonly string[];
  /** `--strict-tx-replay-protection-enabled`: priority transactions must carry a chain id. */
  strictTxReplayProtection: boolean;
  /**
   * The fee market's floor for priority transactions, applied when the chain has a base fee: Besu's
   * London fee market uses 7 wei; a zero-base-fee chain uses 0.
   */
  baseFeeFloor: bigint;
}

export const DEFAULT_POOL_OPTIONS: Readonly<TransactionPoolOptions> = {
  priceBump: 10,
  maxFutureBySender: 200,
  minGasPrice: 1000n,
  txFeeCap: 10n ** 18n,
  noLocalPriority: false,
  prioritySenders: [],
  strictTxReplayProtection: false,
  baseFeeFloor: 7n,
};

/** Chain state the pool needs to admit a transaction, as of the current head. */
export interface AdmissionContext {
  account: { nonce: bigint; balance: bigint; hasCode: boolean };
  blockGasLimit: bigint;
  /** Base fee of the next block; absent before London. */
  baseFee?: bigint;
  /** Received over RPC (as opposed to gossip). */
  local: boolean;
  /** Milliseconds since the epoch, recorded as the time the transaction entered the pool. */
  now: number;
}

export interface PoolEntry {
  readonly tx: DecodedTx;
  readonly hashKey: string;
  readonly senderKey: string;
  readonly local: boolean;
  /** Selected ahead of non-priority transactions whatever their tips. */
  readonly priority: boolean;
  readonly addedAt: number;
  /** Arrival order; breaks ties between equal tips (first come, first served). */
  readonly sequence: number;
}

export interface AddResult {
  /** The transaction is executable now (no nonce gap before it). */
  pending: boolean;
  /** The same-nonce transaction it replaced, if any. */
  replaced?: DecodedTx;
}

export interface BlockSelectionRequest {
  /** Base fee of the block being built; transactions whose max fee is below it are skipped. */
  baseFee?: bigint;
  gasLimit: bigint;
  maxCount: number;
  /**
   * Account nonce at the parent state, by lower-case `0x` sender address. `undefined` (or no function)
   * means "use the nonce the pool last learned".
   */
  senderNonce?: (sender: string) => bigint | undefined;
}

export interface PoolStats {
  localCount: number;
  remoteCount: number;
  pendingCount: number;
  queuedCount: number;
}

/** The smallest gas any transaction can use; below this, block selection stops. */
const MIN_TX_GAS = 21_000n;

/** One sender's transactions and what the pool knows of its account nonce. */
class SenderTransactions {
  readonly byNonce = new Map<bigint, PoolEntry>();
  /** First nonce not covered by the unbroken run [stateNonce, readyEnd) of pending transactions. */
  readyEnd: bigint;

  constructor(public stateNonce: bigint) {
    this.readyEnd = stateNonce;
  }

  extendReadyRun(): void {
    while (this.byNonce.has(this.readyEnd)) this.readyEnd++;
  }

  get pendingCount(): number {
    return Number(this.readyEnd - this.stateNonce);
  }
}

function normalizeAddressKey(address: string | Uint8Array): string {
  if (typeof address !== 'string') return toHexKey(address);
  const lower = address.toLowerCase();
  return lower.startsWith('0x') ? lower : `0x${lower}`;
}

export class TransactionPool {
  private readonly options: TransactionPoolOptions;
  private readonly prioritySenders: ReadonlySet<string>;
  private readonly byHash = new Map<string, PoolEntry>();
  private readonly bySender = new Map<string, SenderTransactions>();
  private nextSequence = 0;
  private localCount = 0;

  constructor(options: Partial<TransactionPoolOptions> = {}) {
    this.options = { ...DEFAULT_POOL_OPTIONS, ...options };
    this.prioritySenders = new Set(this.options.prioritySenders.map((s) => normalizeAddressKey(s)));
  }

  get size(): number {
    return this.byHash.size;
  }

  /**
   * Admits a decoded transaction or throws the `RpcError` Besu would answer with. Nothing changes when
   * it throws.
   */
  add(tx: DecodedTx, ctx: AdmissionContext): AddResult {
    const { options } = this;
    const hashKey = toHexKey(tx.hash);
    if (this.byHash.has(hashKey)) throw new RpcError(RpcErrors.KNOWN_TRANSACTION);

    const senderKey = toHexKey(tx.sender);
    const priority = (ctx.local && !options.noLocalPriority) || this.prioritySenders.has(senderKey);
    const maxFee = maxFeePerGasOf(tx);
    if (ctx.local && options.txFeeCap !== 0n && maxFee > options.txFeeCap) {
      throw new RpcError(RpcErrors.TX_FEECAP_EXCEEDED);
    }
    if (priority) {
      if (ctx.baseFee !== undefined && maxFee < options.baseFeeFloor) throw new RpcError(RpcErrors.GAS_PRICE_TOO_LOW);
    } else if (maxFee < options.minGasPrice) {
      throw new RpcError(RpcErrors.GAS_PRICE_TOO_LOW);
    }
    if (options.strictTxReplayProtection && priority && tx.chainId === undefined) {
      throw new RpcError(RpcErrors.CHAIN_ID_REQUIRED);
    }
    if (tx.gasLimit > ctx.blockGasLimit) throw new RpcError(RpcErrors.EXCEEDS_BLOCK_GAS_LIMIT);

    const { account } = ctx;
    let senderTxs = this.bySender.get(senderKey);
    // The pool may already know a later nonce than a state read that raced a block import.
    const senderNonce =
      senderTxs !== undefined && senderTxs.stateNonce > account.nonce ? senderTxs.stateNonce : account.nonce;
    if (tx.nonce < senderNonce) throw new RpcError(RpcErrors.NONCE_TOO_LOW);
    if (account.hasCode) throw new RpcError(RpcErrors.TX_SENDER_NOT_AUTHORIZED);
    // Basalt rejects what the sender cannot pay for (older Besu behaviour; see §12.2).
    if (tx.gasLimit * maxFee + tx.value > account.balance) throw new RpcError(RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE);
    if (tx.nonce - senderNonce >= BigInt(options.maxFutureBySender)) {
      throw new RpcError(RpcErrors.NONCE_TOO_FAR_IN_FUTURE);
    }
    const existing = senderTxs?.byNonce.get(tx.nonce);
    if (existing !== undefined && !this.isPriceBumped(existing.tx, tx)) {
      throw new RpcError(RpcErrors.REPLACEMENT_UNDERPRICED);
    }

    // Every check passed: mutate.
    if (senderTxs === undefined) {
      senderTxs = new SenderTransactions(senderNonce);
      this.bySender.set(senderKey, senderTxs);
    } else if (senderNonce > senderTxs.stateNonce) {
      this.advanceStateNonce(senderTxs, senderNonce);
    }
    const entry: PoolEntry = {
      tx,
      hashKey,
      senderKey,
      local: ctx.local,
      priority,
      addedAt: ctx.now,
      sequence: this.nextSequence++,
    };
    this.byHash.set(hashKey, entry);
    senderTxs.byNonce.set(tx.nonce, entry);
    if (entry.local) this.localCount++;
    if (existing !== undefined) {
      // Same nonce, so the pending run is unchanged.
      this.byHash.delete(existing.hashKey);
      if (existing.local) this.localCount--;
    } else if (tx.nonce === senderTxs.readyEnd) {
      senderTxs.extendReadyRun();
    }
    const result: AddResult = { pending: tx.nonce < senderTxs.readyEnd };
    if (existing !== undefined) result.replaced = existing.tx;
    return result;
  }

  /**
   * Transactions for the next block: each sender's executable run in nonce order, senders interleaved
   * by priority then effective tip (highest first) then arrival. A transaction that cannot pay the base
   * fee, or does not fit in the remaining gas, ends its sender's run for this block.
   */
  selectForBlock(request: BlockSelectionRequest): DecodedTx[] {
    const { baseFee, maxCount } = request;
    interface Candidate {
      entry: PoolEntry;
      senderTxs: SenderTransactions;
      tip: bigint;
    }
    const candidates = new BinaryHeap<Candidate>((a, b) => {
      if (a.entry.priority !== b.entry.priority) return a.entry.priority;
      if (a.tip !== b.tip) return a.tip > b.tip;
      return a.entry.sequence < b.entry.sequence;
    });
    const offer = (entry: PoolEntry | undefined, senderTxs: SenderTransactions): void => {
      if (entry === undefined) return;
      if (baseFee !== undefined && maxFeePerGasOf(entry.tx) < baseFee) return;
      candidates.push({ entry, senderTxs, tip: effectiveTipOf(entry.tx, baseFee) });
    };
    for (const [senderKey, senderTxs] of this.bySender) {
      const startNonce = request.senderNonce?.(senderKey) ?? senderTxs.stateNonce;
      offer(senderTxs.byNonce.get(startNonce), senderTxs);
    }

    const selected: DecodedTx[] = [];
    let gasLeft = request.gasLimit;
    while (selected.length < maxCount && gasLeft >= MIN_TX_GAS) {
      const best = candidates.pop();
      if (best === undefined) break;
      const { tx } = best.entry;
      if (tx.gasLimit > gasLeft) continue;
      selected.push(tx);
      gasLeft -= tx.gasLimit;
      offer(best.senderTxs.byNonce.get(tx.nonce + 1n), best.senderTxs);
    }
    return selected;
  }

  /**
   * Drops the transactions a new head included, and those its senders' nonces made stale (e.g. a
   * same-nonce transaction mined from elsewhere), then promotes queued transactions whose gap closed.
   * `senderNonces` are account nonces after the block (any `0x` hex case); for senders of included
   * pool transactions it may omit, the nonce after the highest included one is assumed.
   * Returns how many transactions left the pool.
   */
  onBlockImported(includedHashes: readonly Uint8Array[], senderNonces: ReadonlyMap<string, bigint>): number {
    const sizeBefore = this.byHash.size;
    const newNonces = new Map<string, bigint>();
    for (const hash of includedHashes) {
      const entry = this.byHash.get(toHexKey(hash));
      if (entry === undefined) continue;
      this.detach(entry);
      const after = entry.tx.nonce + 1n;
      const known = newNonces.get(entry.senderKey);
      if (known === undefined || after > known) newNonces.set(entry.senderKey, after);
    }
    for (const [sender, nonce] of senderNonces) newNonces.set(normalizeAddressKey(sender), nonce);
    for (const [senderKey, nonce] of newNonces) {
      const senderTxs = this.bySender.get(senderKey);
      if (senderTxs === undefined) continue;
      // QBFT blocks are final, so a nonce never moves back; an older figure is a stale read.
      if (nonce > senderTxs.stateNonce) this.advanceStateNonce(senderTxs, nonce);
      if (senderTxs.byNonce.size === 0) this.bySender.delete(senderKey);
    }
    return sizeBefore - this.byHash.size;
  }

  /** Removes one transaction (e.g. found invalid while building a block); its successors become queued. */
  remove(hash: Uint8Array): boolean {
    const entry = this.byHash.get(toHexKey(hash));
    if (entry === undefined) return false;
    this.detach(entry);
    if (this.bySender.get(entry.senderKey)?.byNonce.size === 0) this.bySender.delete(entry.senderKey);
    return true;
  }

  /** The nonce after the sender's pending run, or `undefined` when it has no pending transaction. */
  nextNonce(sender: Uint8Array | string): bigint | undefined {
    const senderTxs = this.bySender.get(normalizeAddressKey(sender));
    if (senderTxs === undefined || senderTxs.readyEnd === senderTxs.stateNonce) return undefined;
    return senderTxs.readyEnd;
  }

  getByHash(hash: Uint8Array): DecodedTx | undefined {
    return this.byHash.get(toHexKey(hash))?.tx;
  }

  getEntry(hash: Uint8Array): PoolEntry | undefined {
    return this.byHash.get(toHexKey(hash));
  }

  /** A sender's transactions split into pending and queued, each in nonce order. */
  contentFrom(sender: Uint8Array | string): { pending: DecodedTx[]; queued: DecodedTx[] } {
    const senderTxs = this.bySender.get(normalizeAddressKey(sender));
    const pending: DecodedTx[] = [];
    const queued: DecodedTx[] = [];
    if (senderTxs === undefined) return { pending, queued };
    const sorted = [...senderTxs.byNonce.values()].sort((a, b) => (a.tx.nonce < b.tx.nonce ? -1 : 1));
    for (const { tx } of sorted) (tx.nonce < senderTxs.readyEnd ? pending : queued).push(tx);
    return { pending, queued };
  }

  /** Every pooled transaction with its pool metadata, in no particular order. */
  entries(): IterableIterator<PoolEntry> {
    return this.byHash.values();
  }

  stats(): PoolStats {
    let pendingCount = 0;
    for (const senderTxs of this.bySender.values()) pendingCount += senderTxs.pendingCount;
    return {
      localCount: this.localCount,
      remoteCount: this.byHash.size - this.localCount,
      pendingCount,
      queuedCount: this.byHash.size - pendingCount,
    };
  }

  /**
   * Besu's replacement rule: the new price must reach old × (100 + bump) / 100 (integer division, as
   * Besu's Wei arithmetic does). Gas-priced pairs compare gasPrice; when either side is 1559-style both
   * the max fee and the priority fee must be bumped (a gasPrice stands in for both).
   */
  private isPriceBumped(existing: DecodedTx, replacement: DecodedTx): boolean {
    const bump = BigInt(this.options.priceBump);
    const reaches = (oldPrice: bigint, newPrice: bigint): boolean => newPrice >= (oldPrice * (100n + bump)) / 100n;
    if (existing.gasPrice !== undefined && replacement.gasPrice !== undefined) {
      return reaches(existing.gasPrice, replacement.gasPrice);
    }
    return (
      reaches(maxFeePerGasOf(existing), maxFeePerGasOf(replacement)) &&
      reaches(maxPriorityFeePerGasOf(existing), maxPriorityFeePerGasOf(replacement))
    );
  }

  /** Moves a sender's account nonce forward: drops what became stale and promotes what became ready. */
  private advanceStateNonce(senderTxs: SenderTransactions, nonce: bigint): void {
    const previous = senderTxs.stateNonce;
    senderTxs.stateNonce = nonce;
    // No entry sits below the previous state nonce, so only [previous, nonce) can hold stale ones;
    // when that range is wider than the sender's map, scanning the map is cheaper.
    if (nonce - previous <= BigInt(senderTxs.byNonce.size)) {
      for (let n = previous; n < nonce; n++) {
        const stale = senderTxs.byNonce.get(n);
        if (stale !== undefined) this.detach(stale);
      }
    } else {
      for (const stale of [...senderTxs.byNonce.values()]) if (stale.tx.nonce < nonce) this.detach(stale);
    }
    if (senderTxs.readyEnd < nonce) senderTxs.readyEnd = nonce;
    senderTxs.extendReadyRun();
  }

  /** Takes an entry out of every index; a pending one ends its sender's pending run there. */
  private detach(entry: PoolEntry): void {
    this.byHash.delete(entry.hashKey);
    if (entry.local) this.localCount--;
    const senderTxs = this.bySender.get(entry.senderKey);
    if (senderTxs === undefined) return;
    senderTxs.byNonce.delete(entry.tx.nonce);
    const { nonce } = entry.tx;
    if (nonce >= senderTxs.stateNonce && nonce < senderTxs.readyEnd) senderTxs.readyEnd = nonce;
  }
}
