/**
 * The transaction pool's state and rules, free of threads and I/O: the txpool actor wraps one instance,
 * feeds it decoded transactions plus the account state it fetched from the chain actor, and asks it for
 * block contents. Admission follows Besu's check order (rpc-auth-cli.md §12.2) for the checks that need
 * chain state; the stateless ones already ran in `decodeRawTransaction`.
 *
 * Per sender, transactions are kept by nonce. Those forming an unbroken run from the sender's account
 * nonce are *pending*; any beyond a gap are *queued* (future). The part of the run the sender's balance
 * covers (upfront costs summed in nonce order) is *executable*.
 *
 * Memory is bounded as in Besu's layered pool (§12.3), with three layers that follow nonce order per
 * sender — [account nonce, prioritizedEnd) prioritized, [prioritizedEnd, readyEnd) ready, the rest sparse:
 * - prioritized: at most `maxPrioritized` transactions (and `maxPrioritizedByType` per type), the only
 *   ones block selection takes;
 * - ready: executable transactions beyond those, up to `layerMaxCapacity` bytes;
 * - sparse: the rest (nonce gaps, unaffordable ones, executable ones pushed out of ready), up to
 *   `layerMaxCapacity` bytes.
 * A layer over its limit hands the *latest nonce* of its least valuable sender down to the next layer
 * (so no layer ever holds a nonce gap); the sparse layer's overflow leaves the pool, oldest sender first.
 * Everything that leaves the pool without being mined is reported to the `onDropped` listener.
 */
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { BinaryHeap, LazyHeap } from './heap.js';
import {
  effectiveTipOf,
  maxFeePerGasOf,
  maxPriorityFeePerGasOf,
  toHexKey,
  upfrontCostOf,
  type DecodedTx,
  type TxType,
} from '../shared/ethereum/decoded-tx.js';
import type { BuildRejection } from '../shared/actors/messages.js';

export interface TransactionPoolOptions {
  /** `--tx-pool-price-bump`: percent by which a same-nonce replacement must raise its price. */
  priceBump: number;
  /** `--tx-pool-blob-price-bump`: the same for blob transactions, applied to every fee they carry. */
  blobPriceBump: number;
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
  /** `--tx-pool-layer-max-capacity`: bytes (estimated, see `memorySizeOf`) each of ready and sparse may hold. */
  layerMaxCapacity: number;
  /** `--tx-pool-max-prioritized`: transactions the prioritized layer may hold. */
  maxPrioritized: number;
  /** `--tx-pool-max-prioritized-by-type`: per-type caps within the prioritized layer. */
  maxPrioritizedByType: Readonly<Partial<Record<TxType, number>>>;
}

export const DEFAULT_POOL_OPTIONS: Readonly<TransactionPoolOptions> = {
  priceBump: 10,
  blobPriceBump: 100,
  maxFutureBySender: 200,
  minGasPrice: 1000n,
  txFeeCap: 10n ** 18n,
  noLocalPriority: false,
  prioritySenders: [],
  strictTxReplayProtection: false,
  baseFeeFloor: 7n,
  layerMaxCapacity: 25_000_000,
  maxPrioritized: 4000,
  maxPrioritizedByType: { 3: 72 },
};

/** Chain state the pool needs to admit a transaction, as of the current head. */
export interface AdmissionContext {
  account: { nonce: bigint; balance: bigint; hasCode: boolean };
  /**
   * Number of the block whose state `account` was read at. Absent means "the pool's head"; a read at
   * another block (a lookup racing a block import) is used for this check but does not overwrite what
   * the pool learned from blocks.
   */
  stateBlock?: bigint;
  blockGasLimit: bigint;
  /** Base fee of the next block; absent before London. */
  baseFee?: bigint;
  /** Received over RPC (as opposed to gossip). */
  local: boolean;
  /** Milliseconds since the epoch, recorded as the time the transaction entered the pool. */
  now: number;
}

export type Layer = 'prioritized' | 'ready' | 'sparse';

/**
 * Why a transaction left the pool without being mined: `replaced` by a same-nonce one paying more,
 * `evicted` because the pool was full, `stale` because its sender's nonce moved past it (another
 * transaction with that nonce was mined), `invalid` because block building found it invalid.
 */
export type DropReason = 'replaced' | 'evicted' | 'stale' | 'invalid';

export type DroppedListener = (txs: readonly DecodedTx[], reason: DropReason) => void;

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
  /** Upfront cost: what the balance must cover for it to execute (§12.2). */
  readonly cost: bigint;
  /** Estimated memory footprint in bytes (`memorySizeOf`), what the layer capacities count. */
  readonly size: number;
  readonly layer: Layer;
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
  /**
   * Leave out transactions that were selectable already at this point (`arrivalSequence` at an
   * earlier selection): the block has them already. They still count against `gasLimit` and
   * `maxCount`. One that became selectable since — it arrived, or a gap before it was filled — is in.
   */
  fromSequence?: number;
}

export interface PoolStats {
  localCount: number;
  remoteCount: number;
  pendingCount: number;
  queuedCount: number;
}

export interface LayerStats {
  prioritized: { count: number; byType: Record<TxType, number> };
  ready: { count: number; bytes: number };
  sparse: { count: number; bytes: number };
}

/** The smallest gas any transaction can use; below this, block selection stops. */
const MIN_TX_GAS = 21_000n;

/**
 * What one pooled transaction costs in memory beyond its byte strings, measured with
 * bench/pool-memory.ts (heap and external growth per transaction of a pool of plain transfers filled to
 * its default limits, minus their encodings: 1,901 − 103 bytes): the decoded fields with their typed
 * arrays (views of one buffer, see `withOneBuffer` in transaction-decode.ts) and bigints, the pool
 * entry, and its slots in the pool's maps and orders.
 */
const ENTRY_OVERHEAD_BYTES = 1_800;

/**
 * Estimated bytes a pooled transaction occupies, what `--tx-pool-layer-max-capacity` counts: the fixed
 * overhead plus the byte strings it holds (its encoding, its calldata decoded apart from it, a blob
 * transaction's canonical form, access and authorization lists).
 */
export function memorySizeOf(tx: DecodedTx): number {
  let size = ENTRY_OVERHEAD_BYTES + tx.raw.length + tx.data.length + (tx.canonical?.length ?? 0);
  for (const entry of tx.accessList ?? []) size += 64 + 48 * entry.storageKeys.length;
  size += 160 * (tx.authorizationList?.length ?? 0);
  return size;
}

const TX_TYPES: readonly TxType[] = [0, 1, 2, 3, 4];

/** One sender's transactions, its account as the pool knows it, and its layer boundaries. */
class SenderTransactions {
  readonly byNonce = new Map<bigint, Entry>();
  /** End of the unbroken run [stateNonce, runEnd). */
  runEnd: bigint;
  /** End of the part of the run the balance covers. */
  executableEnd: bigint;
  prioritizedEnd: bigint;
  readyEnd: bigint;
  /** Block building found the balance short at this nonce: nothing from here on runs until a fresh balance. */
  holdAt: bigint | undefined;
  /** Transactions the pool did not know were mined, so the balance it holds is stale. */
  balanceStale = false;

  constructor(
    readonly key: string,
    public stateNonce: bigint,
    /** Balance at the head: read from state, minus upfront costs of pool transactions mined since. */
    public balance: bigint,
  ) {
    this.runEnd = this.executableEnd = this.prioritizedEnd = this.readyEnd = stateNonce;
  }

  layerOf(nonce: bigint): Layer {
    if (nonce < this.prioritizedEnd) return 'prioritized';
    return nonce < this.readyEnd ? 'ready' : 'sparse';
  }

  highest(): Entry | undefined {
    let top: Entry | undefined;
    for (const entry of this.byNonce.values()) if (top === undefined || entry.tx.nonce > top.tx.nonce) top = entry;
    return top;
  }

  /** The next transaction the prioritized layer could take from this sender. */
  nextForPrioritized(): Entry | undefined {
    return this.prioritizedEnd < this.executableEnd ? this.byNonce.get(this.prioritizedEnd) : undefined;
  }

  /** The next transaction the ready layer could take back from sparse. */
  nextForReady(): Entry | undefined {
    return this.readyEnd < this.executableEnd ? this.byNonce.get(this.readyEnd) : undefined;
  }
}

class Entry implements PoolEntry {
  /** A new entry starts in sparse; `settle` places it. */
  layer: Layer = 'sparse';
  /** In the pool (not yet mined, dropped or replaced). */
  pooled = true;
  /** Where in arrival order it last joined the prioritized layer (what `fromSequence` compares). */
  selectableFrom = -1;

  constructor(
    readonly tx: DecodedTx,
    readonly hashKey: string,
    readonly owner: SenderTransactions,
    readonly local: boolean,
    readonly priority: boolean,
    readonly addedAt: number,
    readonly sequence: number,
    readonly cost: bigint,
    readonly size: number,
  ) {}

  get senderKey(): string {
    return this.owner.key;
  }
}

/** A prioritized transaction with its effective tip at the base fee the prioritized order was built for. */
interface PrioritizedNode {
  entry: Entry;
  tip: bigint;
}

/**
 * A whole selection that took every prioritized transaction (none priced out by the base fee, none
 * left out for gas or count), as of `sequence`: the pool's arrival point when it was made.
 */
interface SelectionMemo {
  baseFee: bigint | undefined;
  gasLimit: bigint;
  maxCount: number;
  sequence: number;
  taken: number;
  gasTaken: bigint;
  /** Transactions that joined prioritized since, in the order they joined. */
  joined: Entry[];
}

/**
 * Besu's prioritized order: true when `a` ranks below `b` (evicted first, selected last) — no priority
 * before priority, then lower effective tip, lower max fee, and the newer of equals.
 */
function ranksBelow(a: PrioritizedNode, b: PrioritizedNode): boolean {
  if (a.entry.priority !== b.entry.priority) return b.entry.priority;
  if (a.tip !== b.tip) return a.tip < b.tip;
  const aMax = maxFeePerGasOf(a.entry.tx);
  const bMax = maxFeePerGasOf(b.entry.tx);
  if (aMax !== bMax) return aMax < bMax;
  return a.entry.sequence > b.entry.sequence;
}

/** The order of a heap that pops the best-ranked prioritized transaction first. */
const ranksAbove = (a: PrioritizedNode, b: PrioritizedNode): boolean => ranksBelow(b, a);

/** Besu's ready-layer order, by each sender's first ready transaction: lower max fee first, then older. */
function readyRanksBelow(a: Entry, b: Entry): boolean {
  const aMax = maxFeePerGasOf(a.tx);
  const bMax = maxFeePerGasOf(b.tx);
  if (aMax !== bMax) return aMax < bMax;
  return a.sequence < b.sequence;
}

function normalizeAddressKey(address: string | Uint8Array): string {
  if (typeof address !== 'string') return toHexKey(address);
  const lower = address.toLowerCase();
  return lower.startsWith('0x') ? lower : `0x${lower}`;
}

const minBigint = (a: bigint, b: bigint): bigint => (a < b ? a : b);
const maxBigint = (a: bigint, b: bigint): bigint => (a > b ? a : b);

export class TransactionPool {
  private readonly options: TransactionPoolOptions;
  private readonly prioritySenders: ReadonlySet<string>;
  private readonly byHash = new Map<string, Entry>();
  private readonly bySender = new Map<string, SenderTransactions>();
  private nextSequence = 0;
  private localCount = 0;
  /** The head the pool's account knowledge is at (absent until told). */
  private headNumber: bigint | undefined;
  /** Base fee of the block after the head: the prioritized order's effective tips use it. */
  private baseFee: bigint | undefined;

  private readonly prioritized = new Set<Entry>();
  private readonly prioritizedByType: Record<TxType, number> = { 0: 0, 1: 0, 2: 0, 3: 0, 4: 0 };
  private readyCount = 0;
  private readyBytes = 0;
  private sparseCount = 0;
  private sparseBytes = 0;
  /** Per type, prioritized transactions lowest-ranked first. */
  private readonly prioritizedOrder: Record<TxType, LazyHeap<PrioritizedNode>>;
  /** Each sender's first ready transaction, least valuable first. */
  private readonly readyOrder = new LazyHeap<Entry>(
    readyRanksBelow,
    (entry) => entry.pooled && entry.layer === 'ready' && entry.owner.prioritizedEnd === entry.tx.nonce,
  );
  /** Sparse transactions, oldest first. */
  private readonly sparseOrder = new LazyHeap<Entry>(
    (a, b) => a.sequence < b.sequence,
    (entry) => entry.pooled && entry.layer === 'sparse',
  );
  /** Dropped during the current operation, reported when it ends. */
  private drops: { entry: Entry; reason: DropReason }[] = [];
  /** The last whole selection, while it still describes the pool (see `continueSelection`). */
  private selectionMemo: SelectionMemo | undefined;

  constructor(
    options: Partial<TransactionPoolOptions> = {},
    private readonly onDropped: DroppedListener = () => {},
  ) {
    this.options = { ...DEFAULT_POOL_OPTIONS, ...options };
    this.prioritySenders = new Set(this.options.prioritySenders.map((s) => normalizeAddressKey(s)));
    const live = (node: PrioritizedNode) => node.entry.pooled && node.entry.layer === 'prioritized';
    this.prioritizedOrder = { 0: new LazyHeap(ranksBelow, live), 1: new LazyHeap(ranksBelow, live), 2: new LazyHeap(ranksBelow, live), 3: new LazyHeap(ranksBelow, live), 4: new LazyHeap(ranksBelow, live) };
  }

  get size(): number {
    return this.byHash.size;
  }

  /** The head the pool's account knowledge refers to, and the next block's base fee (which reorders prioritized). */
  setHead(number: bigint, nextBaseFee: bigint | undefined): void {
    this.headNumber = number;
    this.forgetSelection();
    if (nextBaseFee === this.baseFee) return;
    this.baseFee = nextBaseFee;
    const byType = new Map(TX_TYPES.map((type) => [type, [] as PrioritizedNode[]]));
    for (const entry of this.prioritized) byType.get(entry.tx.type)!.push(this.prioritizedNode(entry));
    for (const type of TX_TYPES) this.prioritizedOrder[type].reset(byType.get(type)!);
  }

  /**
   * Admits a decoded transaction or throws the `RpcError` Besu would answer with. Nothing changes when
   * it throws. Admitting may evict others (reported to the listener), even the new one when it ranks
   * lowest in a full pool.
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

    const known = this.bySender.get(senderKey);
    const account = this.accountView(known, ctx);
    if (tx.nonce < account.nonce) throw new RpcError(RpcErrors.NONCE_TOO_LOW);
    if (ctx.account.hasCode) throw new RpcError(RpcErrors.TX_SENDER_NOT_AUTHORIZED);
    // Basalt rejects what the sender cannot pay for (older Besu behaviour; see §12.2), counting what
    // its pooled transactions with lower nonces already commit: those run first.
    const cost = upfrontCostOf(tx);
    let committed = cost;
    if (known !== undefined) {
      for (const entry of known.byNonce.values()) {
        if (entry.tx.nonce >= account.nonce && entry.tx.nonce < tx.nonce) committed += entry.cost;
      }
    }
    if (committed > account.balance) throw new RpcError(RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE);
    if (tx.nonce - account.nonce >= BigInt(options.maxFutureBySender)) {
      throw new RpcError(RpcErrors.NONCE_TOO_FAR_IN_FUTURE);
    }
    const existing = known?.byNonce.get(tx.nonce);
    if (existing !== undefined && !this.isPriceBumped(existing.tx, tx)) {
      throw new RpcError(RpcErrors.REPLACEMENT_UNDERPRICED);
    }

    // Every check passed: mutate.
    let sender = known;
    if (sender === undefined) {
      sender = new SenderTransactions(senderKey, account.nonce, account.balance);
      this.bySender.set(senderKey, sender);
    } else if (account.current && this.learnAccount(sender, account)) {
      // Less to spend than the pool thought: some of its transactions may have left their layers.
      this.fill();
    }
    const entry = new Entry(tx, hashKey, sender, ctx.local, priority, ctx.now, this.nextSequence++, cost, memorySizeOf(tx));
    if (existing !== undefined) {
      this.detach(existing);
      this.drops.push({ entry: existing, reason: 'replaced' });
    }
    this.byHash.set(hashKey, entry);
    sender.byNonce.set(tx.nonce, entry);
    this.joinLayer(entry);
    if (entry.local) this.localCount++;
    this.settle(sender, entry);
    this.enforceLimits();
    this.reportDrops();

    const result: AddResult = { pending: tx.nonce < sender.runEnd && entry.pooled };
    if (existing !== undefined) result.replaced = existing.tx;
    return result;
  }

  /** Where the next transaction to arrive will stand in arrival order (see `fromSequence`). */
  get arrivalSequence(): number {
    return this.nextSequence;
  }

  /**
   * Transactions for the next block, from the prioritized layer: each sender's run in nonce order,
   * senders interleaved by priority, then effective tip, then max fee (highest first), then arrival. A
   * transaction that cannot pay the base fee, or does not fit in the remaining gas, ends its sender's
   * run for this block.
   *
   * Block building asks again and again while transactions arrive, each time `fromSequence` where it
   * stopped. When the last whole selection took every prioritized transaction and the newcomers fit
   * too, they are the answer, ordered among themselves by the same rule: worked out from the
   * newcomers alone (`continueSelection`) instead of from the whole layer, which under a burst was
   * hundreds of selections over thousands of transactions while admissions waited.
   */
  selectForBlock(request: BlockSelectionRequest): DecodedTx[] {
    return this.continueSelection(request) ?? this.selectWhole(request);
  }

  private selectWhole(request: BlockSelectionRequest): DecodedTx[] {
    const { baseFee, maxCount } = request;
    const candidates = new BinaryHeap<PrioritizedNode>(ranksAbove);
    let pricedOut = false;
    const offer = (entry: Entry | undefined): void => {
      if (entry === undefined || entry.layer !== 'prioritized') return;
      if (baseFee !== undefined && maxFeePerGasOf(entry.tx) < baseFee) {
        pricedOut = true;
        return;
      }
      candidates.push({ entry, tip: effectiveTipOf(entry.tx, baseFee) });
    };
    for (const [senderKey, sender] of this.bySender) {
      offer(sender.byNonce.get(request.senderNonce?.(senderKey) ?? sender.stateNonce));
    }

    const selected: DecodedTx[] = [];
    const fromSequence = request.fromSequence ?? 0;
    let taken = 0;
    let gasLeft = request.gasLimit;
    let leftOut = false;
    while (taken < maxCount && gasLeft >= MIN_TX_GAS) {
      const best = candidates.pop();
      if (best === undefined) break;
      const { tx } = best.entry;
      if (tx.gasLimit > gasLeft) {
        leftOut = true;
        continue;
      }
      if (best.entry.selectableFrom >= fromSequence) selected.push(tx);
      taken += 1;
      gasLeft -= tx.gasLimit;
      offer(best.entry.owner.byNonce.get(tx.nonce + 1n));
    }
    // Only a selection from the pool's own nonces that took all there was can be continued; one from
    // the caller's nonces says nothing about those and leaves the memo as it was.
    if (request.senderNonce === undefined) {
      const complete = !pricedOut && !leftOut && candidates.size === 0;
      this.selectionMemo = complete
        ? { baseFee, gasLimit: request.gasLimit, maxCount, sequence: this.nextSequence, taken, gasTaken: request.gasLimit - gasLeft, joined: [] }
        : undefined;
    }
    return selected;
  }

  /**
   * The answer from the transactions that joined prioritized since the last whole selection, when
   * that selection took every prioritized transaction, nothing left prioritized since (a departure,
   * a new head or a changed account may change any sender's run: `forgetSelection`), the request is
   * the same but for starting where the last one ended, and the newcomers can all be taken too; else
   * undefined. Joining prioritized only ever extends a sender's run at its end, so the newcomers are
   * each sender's next nonces after what was taken, and with everything taken and nothing binding
   * the whole selection is the old one plus them.
   */
  private continueSelection(request: BlockSelectionRequest): DecodedTx[] | undefined {
    const memo = this.selectionMemo;
    const { baseFee } = request;
    if (memo === undefined || request.senderNonce !== undefined || request.fromSequence !== memo.sequence) return undefined;
    if (memo.baseFee !== baseFee || memo.gasLimit !== request.gasLimit || memo.maxCount !== request.maxCount) return undefined;
    const { joined } = memo;
    let gas = memo.gasTaken;
    for (const entry of joined) {
      if (baseFee !== undefined && maxFeePerGasOf(entry.tx) < baseFee) return undefined;
      gas += entry.tx.gasLimit;
    }
    if (memo.taken + joined.length > memo.maxCount || gas > memo.gasLimit) return undefined;

    // As the whole selection walks each sender's run, from each sender's first newcomer (the first of
    // its to join): the prioritized nonces after a newcomer are newcomers too.
    const candidates = new BinaryHeap<PrioritizedNode>(ranksAbove);
    const offer = (entry: Entry): void => candidates.push({ entry, tip: effectiveTipOf(entry.tx, baseFee) });
    const started = new Set<SenderTransactions>();
    for (const entry of joined) {
      if (started.has(entry.owner)) continue;
      started.add(entry.owner);
      offer(entry);
    }
    const selected: DecodedTx[] = [];
    for (let best = candidates.pop(); best !== undefined; best = candidates.pop()) {
      const { tx, owner } = best.entry;
      selected.push(tx);
      const next = owner.byNonce.get(tx.nonce + 1n);
      if (next !== undefined && next.layer === 'prioritized') offer(next);
    }
    this.selectionMemo = { ...memo, sequence: this.nextSequence, taken: memo.taken + joined.length, gasTaken: gas, joined: [] };
    return selected;
  }

  /** Something other than an arrival changed the prioritized layer or a sender's run: the next selection is a whole one. */
  private forgetSelection(): void {
    this.selectionMemo = undefined;
  }

  /**
   * Drops the transactions a new head included (by hash, or by hash key as `toHexKey` gives it), and
   * those its senders' nonces made stale (e.g. a
   * same-nonce transaction mined from elsewhere), then promotes what became executable.
   * `senderNonces` are account nonces after the block (any `0x` hex case); for senders of included
   * pool transactions it may omit, the nonce after the highest included one is assumed. Balances are
   * lowered by the upfront cost of each included pool transaction (at least what it paid), so the
   * pool never overestimates what a sender can still afford from its own transactions.
   * Returns how many transactions left the pool.
   */
  onBlockImported(includedHashes: readonly (Uint8Array | string)[], senderNonces: ReadonlyMap<string, bigint>): number {
    this.forgetSelection();
    const sizeBefore = this.byHash.size;
    const newNonces = new Map<SenderTransactions, bigint>();
    for (const hash of includedHashes) {
      const entry = this.byHash.get(typeof hash === 'string' ? hash : toHexKey(hash));
      if (entry === undefined) continue;
      this.detach(entry);
      const sender = entry.owner;
      sender.balance = sender.balance > entry.cost ? sender.balance - entry.cost : 0n;
      const after = entry.tx.nonce + 1n;
      newNonces.set(sender, maxBigint(after, newNonces.get(sender) ?? after));
    }
    for (const [address, nonce] of senderNonces) {
      const sender = this.bySender.get(normalizeAddressKey(address));
      if (sender === undefined) continue;
      const explained = newNonces.get(sender);
      // Transactions of this sender the pool did not hold were mined: its balance paid for them too.
      if (nonce > (explained ?? sender.stateNonce)) sender.balanceStale = true;
      newNonces.set(sender, nonce);
    }
    for (const [sender, nonce] of newNonces) {
      // Blocks that extend the head never move a nonce back (a re-org does: see onReorg); an older figure is a stale read.
      if (nonce > sender.stateNonce) this.advanceStateNonce(sender, nonce);
      this.settle(sender);
      this.forgetIfEmpty(sender);
    }
    this.fill();
    this.enforceLimits();
    this.reportDrops();
    return sizeBefore - this.byHash.size;
  }

  /**
   * The head moved to another branch (a re-org): `senderNonces` are account nonces at the new head
   * (any `0x` hex case), which replace what the pool learned from the old branch even where they
   * moved back — a transaction the old branch mined and the new one lacks is due again. Balances are
   * read again (`sendersToRefresh`). Call before `onBlockImported` with the added blocks.
   */
  onReorg(senderNonces: ReadonlyMap<string, bigint>): void {
    this.forgetSelection();
    for (const [address, nonce] of senderNonces) {
      const sender = this.bySender.get(normalizeAddressKey(address));
      if (sender === undefined) continue;
      sender.balanceStale = true;
      if (nonce < sender.stateNonce) {
        sender.stateNonce = nonce;
        this.settle(sender);
      }
    }
    this.fill();
    this.enforceLimits();
    this.reportDrops();
  }

  /**
   * What block building found about candidates it could not include (see `BuildRejection`): a nonce
   * below the account's is final (another transaction took it), so the transaction goes; a nonce above
   * it only means a predecessor was left out of that block, and a price below the block's base fees
   * may suffice for a later block (Besu keeps both); a balance short of the upfront cost may change,
   * so the transaction stays, held back until the pool reads the sender's balance again
   * (`sendersToRefresh`); anything else makes it invalid.
   */
  onBuildRejected(rejected: readonly { hash: Uint8Array; reason: BuildRejection }[]): void {
    this.forgetSelection();
    for (const { hash, reason } of rejected) {
      const entry = this.byHash.get(toHexKey(hash));
      if (entry === undefined) continue;
      if (reason === 'nonce-too-high' || reason === 'underpriced') continue;
      if (reason === 'insufficient-funds') {
        const sender = entry.owner;
        sender.holdAt = sender.holdAt === undefined ? entry.tx.nonce : minBigint(sender.holdAt, entry.tx.nonce);
        this.settle(sender);
        continue;
      }
      this.dropOne(entry, reason === 'nonce-too-low' ? 'stale' : 'invalid');
    }
    this.fill();
    this.enforceLimits();
    this.reportDrops();
  }

  /**
   * Fresh reads of senders' accounts (`stateBlock` as in `AdmissionContext`). A read at the pool's
   * head replaces the balance the pool estimated, releases a hold and may make held or unaffordable
   * transactions executable again; reads at another block are ignored.
   */
  updateAccounts(reads: readonly { address: Uint8Array | string; nonce: bigint; balance: bigint }[], stateBlock?: bigint): void {
    if (this.ageOf(stateBlock) !== 'current') return;
    this.forgetSelection();
    let shrunk = false;
    for (const read of reads) {
      const sender = this.bySender.get(normalizeAddressKey(read.address));
      if (sender === undefined) continue;
      shrunk = this.learnAccount(sender, read) || shrunk;
      this.settle(sender);
      this.forgetIfEmpty(sender);
    }
    if (shrunk) this.fill();
    this.enforceLimits();
    this.reportDrops();
  }

  /**
   * Senders whose balance the pool should read again: those with transactions held or unaffordable
   * (a deposit may change that) and those whose balance paid for transactions the pool did not hold.
   */
  sendersToRefresh(): string[] {
    const keys: string[] = [];
    for (const sender of this.bySender.values()) {
      if (sender.balanceStale || sender.holdAt !== undefined || sender.executableEnd < sender.runEnd) keys.push(sender.key);
    }
    return keys;
  }

  /** Removes one transaction (reported as `reason`); its successors wait for the gap to fill. */
  remove(hash: Uint8Array, reason: DropReason = 'invalid'): boolean {
    const entry = this.byHash.get(toHexKey(hash));
    if (entry === undefined) return false;
    this.dropOne(entry, reason);
    this.fill();
    this.enforceLimits();
    this.reportDrops();
    return true;
  }

  /** The nonce after the sender's pending run, or `undefined` when it has no pending transaction. */
  nextNonce(sender: Uint8Array | string): bigint | undefined {
    const senderTxs = this.bySender.get(normalizeAddressKey(sender));
    if (senderTxs === undefined || senderTxs.runEnd === senderTxs.stateNonce) return undefined;
    return senderTxs.runEnd;
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
    for (const { tx } of sorted) (tx.nonce < senderTxs.runEnd ? pending : queued).push(tx);
    return { pending, queued };
  }

  /** Every pooled transaction with its pool metadata, in no particular order. */
  entries(): IterableIterator<PoolEntry> {
    return this.byHash.values();
  }

  stats(): PoolStats {
    let pendingCount = 0;
    for (const sender of this.bySender.values()) pendingCount += Number(sender.runEnd - sender.stateNonce);
    return {
      localCount: this.localCount,
      remoteCount: this.byHash.size - this.localCount,
      pendingCount,
      queuedCount: this.byHash.size - pendingCount,
    };
  }

  layerStats(): LayerStats {
    return {
      prioritized: { count: this.prioritized.size, byType: { ...this.prioritizedByType } },
      ready: { count: this.readyCount, bytes: this.readyBytes },
      sparse: { count: this.sparseCount, bytes: this.sparseBytes },
    };
  }

  /**
   * Besu's replacement rule: the new price must reach old × (100 + bump) / 100 (integer division, as
   * Besu's Wei arithmetic does). Gas-priced pairs compare gasPrice; when either side is 1559-style both
   * the max fee and the priority fee must be bumped (a gasPrice stands in for both). A blob replacement
   * uses the blob price bump, for its blob fee too.
   */
  private isPriceBumped(existing: DecodedTx, replacement: DecodedTx): boolean {
    const blob = replacement.type === 3;
    const bump = BigInt(blob ? this.options.blobPriceBump : this.options.priceBump);
    const reaches = (oldPrice: bigint, newPrice: bigint): boolean => newPrice >= (oldPrice * (100n + bump)) / 100n;
    if (existing.gasPrice !== undefined && replacement.gasPrice !== undefined) {
      return reaches(existing.gasPrice, replacement.gasPrice);
    }
    return (
      reaches(maxFeePerGasOf(existing), maxFeePerGasOf(replacement)) &&
      reaches(maxPriorityFeePerGasOf(existing), maxPriorityFeePerGasOf(replacement)) &&
      (!blob || reaches(existing.maxFeePerBlobGas ?? 0n, replacement.maxFeePerBlobGas ?? 0n))
    );
  }

  /** Whether an account read at `stateBlock` is at the pool's head, ahead of it, or behind it. */
  private ageOf(stateBlock: bigint | undefined): 'current' | 'ahead' | 'behind' {
    if (stateBlock === undefined || this.headNumber === undefined || stateBlock === this.headNumber) return 'current';
    return stateBlock > this.headNumber ? 'ahead' : 'behind';
  }

  /**
   * The account an admission is checked against: a read at the head (or ahead of it, racing a block
   * the pool has not processed yet) is the truth, though the pool may know a later nonce; a read
   * behind the head is older than what the pool learned from blocks since.
   */
  private accountView(known: SenderTransactions | undefined, ctx: AdmissionContext): { nonce: bigint; balance: bigint; current: boolean } {
    const age = this.ageOf(ctx.stateBlock);
    if (known === undefined) return { nonce: ctx.account.nonce, balance: ctx.account.balance, current: age !== 'ahead' };
    if (age === 'behind') return { nonce: known.stateNonce, balance: known.balance, current: false };
    return { nonce: maxBigint(ctx.account.nonce, known.stateNonce), balance: ctx.account.balance, current: age === 'current' };
  }

  /**
   * Takes a read of the account at the head as the truth (the caller settles). Returns whether the
   * sender can now afford less than the pool thought (a lower balance or a later nonce).
   */
  private learnAccount(sender: SenderTransactions, account: { nonce: bigint; balance: bigint }): boolean {
    const shrunk = account.balance < sender.balance || account.nonce > sender.stateNonce;
    sender.balance = account.balance;
    sender.holdAt = undefined;
    sender.balanceStale = false;
    if (account.nonce > sender.stateNonce) this.advanceStateNonce(sender, account.nonce);
    return shrunk;
  }

  /** Moves a sender's account nonce forward, dropping what it made stale (the caller settles). */
  private advanceStateNonce(sender: SenderTransactions, nonce: bigint): void {
    for (const entry of [...sender.byNonce.values()]) {
      if (entry.tx.nonce < nonce) {
        this.detach(entry);
        this.drops.push({ entry, reason: 'stale' });
      }
    }
    sender.stateNonce = nonce;
  }

  /**
   * Recomputes a sender's run and executable part, moves transactions out of layers they no longer
   * qualify for, then promotes what fits: into prioritized while there is room or it outranks the
   * lowest prioritized transaction, into ready while there is room — `added` (just admitted) enters
   * ready whatever its size, as it would in Besu, and the ready layer's overflow rule decides.
   */
  private settle(sender: SenderTransactions, added?: Entry): void {
    let nonce = sender.stateNonce;
    let committed = 0n;
    let executableEnd: bigint | undefined;
    for (let entry = sender.byNonce.get(nonce); entry !== undefined; entry = sender.byNonce.get(++nonce)) {
      if (executableEnd !== undefined) continue;
      committed += entry.cost;
      if (committed > sender.balance || nonce === sender.holdAt) executableEnd = nonce;
    }
    sender.runEnd = nonce;
    sender.executableEnd = executableEnd ?? nonce;
    sender.prioritizedEnd = maxBigint(sender.stateNonce, minBigint(sender.prioritizedEnd, sender.executableEnd));
    sender.readyEnd = maxBigint(sender.prioritizedEnd, minBigint(sender.readyEnd, sender.executableEnd));
    for (const entry of sender.byNonce.values()) this.setLayer(entry, sender.layerOf(entry.tx.nonce));

    for (let next = sender.nextForPrioritized(); next !== undefined; next = sender.nextForPrioritized()) {
      if (!this.hasPrioritizedRoomFor(next) && !this.outranksLowestPrioritized(next)) break;
      this.promoteToPrioritized(next);
      let demotedOwn = false;
      while (this.prioritizedOverflowType() !== undefined) demotedOwn = this.demoteLowestPrioritized().owner === sender || demotedOwn;
      if (demotedOwn) break;
    }
    const capacity = this.options.layerMaxCapacity;
    for (let next = sender.nextForReady(); next !== undefined; next = sender.nextForReady()) {
      if (this.readyBytes + next.size > capacity && next !== added) break;
      this.setLayer(next, 'ready');
      sender.readyEnd++;
    }
    this.noteFirstReady(sender);
  }

  /**
   * Refills layers from below after transactions left: prioritized takes each sender's next executable
   * transaction, best ranked first; ready takes executable transactions back from sparse, highest max
   * fee first.
   */
  private fill(): void {
    const touched = new Set<SenderTransactions>();
    if (this.prioritized.size < this.options.maxPrioritized) {
      const candidates = new BinaryHeap<PrioritizedNode>(ranksAbove);
      for (const sender of this.bySender.values()) {
        const next = sender.nextForPrioritized();
        if (next !== undefined) candidates.push(this.prioritizedNode(next));
      }
      while (this.prioritized.size < this.options.maxPrioritized) {
        const best = candidates.pop();
        if (best === undefined) break;
        // A sender whose next transaction's type is at its cap waits, as a sequence cannot skip it.
        if (!this.hasPrioritizedRoomFor(best.entry)) continue;
        this.promoteToPrioritized(best.entry);
        touched.add(best.entry.owner);
        const next = best.entry.owner.nextForPrioritized();
        if (next !== undefined) candidates.push(this.prioritizedNode(next));
      }
    }
    const capacity = this.options.layerMaxCapacity;
    const readyCandidates = new BinaryHeap<Entry>((a, b) => readyRanksBelow(b, a));
    for (const sender of this.bySender.values()) {
      const next = sender.nextForReady();
      if (next !== undefined) readyCandidates.push(next);
    }
    for (let best = readyCandidates.pop(); best !== undefined; best = readyCandidates.pop()) {
      if (this.readyBytes + best.size > capacity) continue;
      this.setLayer(best, 'ready');
      best.owner.readyEnd++;
      touched.add(best.owner);
      const next = best.owner.nextForReady();
      if (next !== undefined) readyCandidates.push(next);
    }
    for (const sender of touched) this.noteFirstReady(sender);
  }

  /** Brings every layer back within its limits, top down, so each overflow lands in the next layer. */
  private enforceLimits(): void {
    while (this.prioritizedOverflowType() !== undefined) this.demoteLowestPrioritized();
    const capacity = this.options.layerMaxCapacity;
    while (this.readyBytes > capacity) {
      // The least valuable sender gives up its latest nonce first.
      const sender = this.readyOrder.peek()?.owner;
      if (sender === undefined) throw new Error('ready layer over capacity with no sender to demote');
      this.setLayer(sender.byNonce.get(sender.readyEnd - 1n)!, 'sparse');
      sender.readyEnd--;
    }
    while (this.sparseBytes > capacity) {
      // The sender of the oldest sparse transaction loses its latest nonce first: no gap is created.
      const sender = this.sparseOrder.peek()?.owner;
      const victim = sender?.highest();
      if (sender === undefined || victim === undefined) throw new Error('sparse layer over capacity with nothing to evict');
      const { nonce } = victim.tx;
      this.detach(victim);
      this.drops.push({ entry: victim, reason: 'evicted' });
      if (nonce < sender.runEnd) sender.runEnd = nonce;
      if (nonce < sender.executableEnd) sender.executableEnd = nonce;
      this.forgetIfEmpty(sender);
    }
    this.compactOrders();
  }

  private prioritizedNode(entry: Entry): PrioritizedNode {
    return { entry, tip: effectiveTipOf(entry.tx, this.baseFee) };
  }

  private hasPrioritizedRoomFor(entry: Entry): boolean {
    if (this.prioritized.size >= this.options.maxPrioritized) return false;
    const cap = this.options.maxPrioritizedByType[entry.tx.type];
    return cap === undefined || this.prioritizedByType[entry.tx.type] < cap;
  }

  /** Whether `entry` ranks above the transaction that would leave prioritized to make room for it. */
  private outranksLowestPrioritized(entry: Entry): boolean {
    const node = this.prioritizedNode(entry);
    if (this.prioritized.size >= this.options.maxPrioritized) {
      const lowest = this.lowestPrioritized();
      if (lowest === undefined || !ranksBelow(lowest, node)) return false;
    }
    const cap = this.options.maxPrioritizedByType[entry.tx.type];
    if (cap !== undefined && this.prioritizedByType[entry.tx.type] >= cap) {
      const lowestOfType = this.prioritizedOrder[entry.tx.type].peek();
      if (lowestOfType === undefined || !ranksBelow(lowestOfType, node)) return false;
    }
    return true;
  }

  private lowestPrioritized(): PrioritizedNode | undefined {
    let lowest: PrioritizedNode | undefined;
    for (const type of TX_TYPES) {
      const node = this.prioritizedOrder[type].peek();
      if (node !== undefined && (lowest === undefined || ranksBelow(node, lowest))) lowest = node;
    }
    return lowest;
  }

  /** A type over its own cap, or `'all'` when the layer is over its total; undefined when within limits. */
  private prioritizedOverflowType(): TxType | 'all' | undefined {
    for (const type of TX_TYPES) {
      const cap = this.options.maxPrioritizedByType[type];
      if (cap !== undefined && this.prioritizedByType[type] > cap) return type;
    }
    return this.prioritized.size > this.options.maxPrioritized ? 'all' : undefined;
  }

  private promoteToPrioritized(entry: Entry): void {
    const sender = entry.owner;
    this.setLayer(entry, 'prioritized');
    sender.prioritizedEnd++;
    if (sender.readyEnd < sender.prioritizedEnd) sender.readyEnd = sender.prioritizedEnd;
  }

  /**
   * Moves the latest prioritized nonce of the sender of the lowest-ranked prioritized transaction (of
   * the overflowing type, if a type is over its cap) down to ready; returns the moved transaction.
   */
  private demoteLowestPrioritized(): Entry {
    const overflow = this.prioritizedOverflowType();
    const lowest = overflow === 'all' || overflow === undefined ? this.lowestPrioritized() : this.prioritizedOrder[overflow].peek();
    const sender = lowest!.entry.owner;
    const last = sender.byNonce.get(sender.prioritizedEnd - 1n)!;
    this.setLayer(last, 'ready');
    sender.prioritizedEnd--;
    this.noteFirstReady(sender);
    return last;
  }

  /** Records the sender's first ready transaction in the ready order (stale records are skipped there). */
  private noteFirstReady(sender: SenderTransactions): void {
    const first = sender.byNonce.get(sender.prioritizedEnd);
    if (first !== undefined && first.layer === 'ready') this.readyOrder.push(first);
  }

  /** Moves an entry between layers, keeping counts, bytes and orders right. */
  private setLayer(entry: Entry, layer: Layer): void {
    if (entry.layer === layer) return;
    this.leaveLayer(entry);
    entry.layer = layer;
    this.joinLayer(entry);
  }

  /** Counts an entry in the layer it names. */
  private joinLayer(entry: Entry): void {
    const { layer } = entry;
    if (layer === 'prioritized') {
      entry.selectableFrom = this.nextSequence++;
      this.selectionMemo?.joined.push(entry);
      this.prioritized.add(entry);
      this.prioritizedByType[entry.tx.type]++;
      this.prioritizedOrder[entry.tx.type].push(this.prioritizedNode(entry));
    } else if (layer === 'ready') {
      this.readyCount++;
      this.readyBytes += entry.size;
    } else {
      this.sparseCount++;
      this.sparseBytes += entry.size;
      this.sparseOrder.push(entry);
    }
  }

  private leaveLayer(entry: Entry): void {
    if (entry.layer === 'prioritized') {
      this.forgetSelection();
      this.prioritized.delete(entry);
      this.prioritizedByType[entry.tx.type]--;
    } else if (entry.layer === 'ready') {
      this.readyCount--;
      this.readyBytes -= entry.size;
    } else {
      this.sparseCount--;
      this.sparseBytes -= entry.size;
    }
  }

  /** Rebuilds an order once most of what it holds went stale. */
  private compactOrders(): void {
    for (const type of TX_TYPES) {
      this.prioritizedOrder[type].compact(this.prioritizedByType[type], () =>
        [...this.prioritized].filter((e) => e.tx.type === type).map((e) => this.prioritizedNode(e)),
      );
    }
    this.readyOrder.compact(this.readyCount, () =>
      [...this.bySender.values()].flatMap((sender) => {
        const first = sender.byNonce.get(sender.prioritizedEnd);
        return first !== undefined && first.layer === 'ready' ? [first] : [];
      }),
    );
    this.sparseOrder.compact(this.sparseCount, () => [...this.byHash.values()].filter((e) => e.layer === 'sparse'));
  }

  /** Drops one transaction from anywhere in its sender's sequence; its successors wait behind the gap. */
  private dropOne(entry: Entry, reason: DropReason): void {
    this.detach(entry);
    this.drops.push({ entry, reason });
    this.settle(entry.owner);
    this.forgetIfEmpty(entry.owner);
  }

  /** Takes an entry out of the maps and its layer (the caller fixes its sender's boundaries). */
  private detach(entry: Entry): void {
    this.byHash.delete(entry.hashKey);
    entry.owner.byNonce.delete(entry.tx.nonce);
    if (entry.local) this.localCount--;
    this.leaveLayer(entry);
    entry.pooled = false;
  }

  private forgetIfEmpty(sender: SenderTransactions): void {
    if (sender.byNonce.size === 0 && this.bySender.get(sender.key) === sender) this.bySender.delete(sender.key);
  }

  private reportDrops(): void {
    if (this.drops.length === 0) return;
    const drops = this.drops;
    this.drops = [];
    const byReason = new Map<DropReason, DecodedTx[]>();
    for (const { entry, reason } of drops) {
      const list = byReason.get(reason);
      if (list === undefined) byReason.set(reason, [entry.tx]);
      else list.push(entry.tx);
    }
    for (const [reason, txs] of byReason) this.onDropped(txs, reason);
  }
}
