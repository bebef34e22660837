/**
 * The transaction pool actor's core: admission (decode and sender recovery handed to a task pool,
 * state checks against per-head account snapshots from the chain), the pool's JSON-RPC methods and
 * pending-transaction filters, and what it answers consensus, the chain and peers. No ports here:
 * workers/txpool.worker.ts opens the channels and hands them these handler tables.
 */
import type { ChannelHandlers } from '../shared/actors/channel.js';
import type { ConsensusTxPool, P2pTxPool, TransportTxPool, TxPoolChain } from '../shared/actors/channels.js';
import type {
  AccountSnapshot,
  GossipTx,
  HeadInfo,
  NewHeadEvent,
  PendingTransactionsEvent,
  PoolSubscriptionInterest,
  RejectedTx,
  TransactionRecord,
} from '../shared/actors/messages.js';
import type { DecodedTx, TxRules } from '../shared/ethereum/decoded-tx.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { serveMethodsAsJsonText } from '../shared/rpc/dispatch.js';
import type { JsonTextServer } from '../shared/rpc/dispatch.js';
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { FilterRegistry } from '../shared/rpc/filter-registry.js';
import { formatPendingTransactionDetail } from '../shared/rpc/format-pending-detail.js';
import { matchesPendingFilters } from '../shared/rpc/pending-filter.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { Json, RpcErrorObject } from '../shared/rpc/types.js';
import { bytesToHex, hexToBytes } from '../shared/util/bytes.js';
import { errorMessage } from '../shared/util/errors.js';
import type { Logger } from '../shared/util/log.js';
import { perTick } from '../shared/util/per-tick.js';
import { RecentKeys } from '../shared/util/recent-keys.js';
import { TransactionPool } from './pool.js';
import type { DropReason, TransactionPoolOptions } from './pool.js';
import type { PendingViewFormatter } from './pending-view.js';
import { txRulesFor } from './tx-rules.js';

/** What decoding one raw transaction gives: the decoded transaction, or Besu's error for it. */
export type DecodeOutcome = { ok: DecodedTx } | { error: RpcErrorObject };

export interface TxPoolActorDeps {
  genesis: Genesis;
  pool: Partial<TransactionPoolOptions>;
  /** Decodes and recovers a raw transaction off this thread. */
  decode(raw: Uint8Array, rules: TxRules): Promise<DecodeOutcome>;
  /** Account snapshots at the chain's head. */
  accounts(addresses: Uint8Array[]): Promise<{ head: HeadInfo; accounts: AccountSnapshot[] }>;
  /** Transactions just admitted, once per tick, to gossip to peers. */
  gossip?(txs: GossipTx[]): void;
  /** Where the transports' subscriptions hear of the pool, transport number `transport` being its channel's index. */
  transports?: PoolPublication;
  /** Loads the pending-transaction view (pending-view.ts, by default with `import()`), at the first pooled transaction shown. */
  loadPendingView?: () => Promise<typeof import('./pending-view.js')>;
  log: Logger;
}

/** The pool's events for the transports' subscriptions; each goes only to transports that declared an interest. */
export interface PoolPublication {
  /** Transactions just added to the pool, once per tick (`newPendingTransactions`). */
  pending(transport: number, event: PendingTransactionsEvent): void;
  /** Transactions that left the pool without being mined: replaced, evicted, made stale, found invalid. */
  dropped(transport: number, hashes: string[]): void;
}

/** An account read at a block: the pool tells reads at its head from reads racing a block import. */
interface AccountRead {
  account: AccountSnapshot;
  block: bigint;
}

/** How many local senders the pool remembers for re-admission after a re-org. */
const LOCAL_SENDERS_REMEMBERED = 10_000;

/** How many included transaction hashes the pool remembers, to ignore peers' late copies undecoded: two blocks of a full prioritized layer (4000). */
const RECENTLY_INCLUDED_REMEMBERED = 8192;

/** How many hashes a drop log line lists before it only counts. */
const HASHES_PER_LOG_LINE = 10;

/** Java's `Instant.toString()`: ISO-8601 UTC, milliseconds shown only when not zero. */
function javaInstant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export class TxPoolActor {
  readonly consensus: ChannelHandlers<ConsensusTxPool, 'txpool'>;
  readonly chain: ChannelHandlers<TxPoolChain, 'txpool'>;
  readonly p2p: ChannelHandlers<P2pTxPool, 'txpool'>;

  private readonly pool: TransactionPool;
  /** Loaded at the first pending-transaction view (pending-view.ts says why). */
  private pendingFormatter: Promise<PendingViewFormatter> | undefined;
  private head!: HeadInfo;
  private rules: TxRules | undefined;
  /** Account reads valid for the current head; cleared when the head moves. */
  private accountCache = new Map<string, Promise<AccountRead>>();
  /** Hashes of the transactions of the last blocks: peers still forward them after they left the pool. */
  private readonly recentlyIncluded = new RecentKeys(RECENTLY_INCLUDED_REMEMBERED);
  /** Peers' transactions between arrival and the pool's verdict (decoding takes a while under load). */
  private readonly admittingFromPeers = new Set<string>();
  /** Senders that submitted over JSON-RPC (Besu's local senders): their re-org'd transactions come back as local. */
  private readonly localSenders = new RecentKeys(LOCAL_SENDERS_REMEMBERED);
  /** Pending-transaction filters: hashes of transactions added to the pool since the last poll. */
  private readonly pendingFilters = new FilterRegistry<{ hashes: Uint8Array[]; lastUsed: number }>();
  private readonly serveRpc: JsonTextServer;
  /** What each transport's subscriptions want from the pool; transports that want nothing are absent. */
  private readonly interests = new Map<number, PoolSubscriptionInterest>();
  /** Transactions between arrival and the pool's verdict: block building waits for them when it catches up. */
  private admitting = 0;

  constructor(private readonly deps: TxPoolActorDeps) {
    this.pool = new TransactionPool({ ...deps.pool }, (txs, reason) => this.announceDropped(txs, reason));
    this.serveRpc = serveMethodsAsJsonText('txpool', this.rpcHandlers());
    this.consensus = {
      select: ({ maxCount, gasLimit, baseFee, fromSequence }) => {
        const nextSequence = this.pool.arrivalSequence;
        const transactions = this.pool
          .selectForBlock({ maxCount, gasLimit, baseFee, fromSequence })
          .map((tx) => ({ raw: tx.canonical ?? tx.raw, hash: tx.hash, senderPublicKey: tx.senderPublicKey }));
        return { transactions, nextSequence, admitting: this.admitting };
      },
      buildRejected: ({ rejected }) => {
        this.onBuildRejected(rejected);
        return null;
      },
    };
    this.chain = {
      nextNonce: ({ address }) => this.pool.nextNonce(address) ?? null,
      senderKeys: ({ hashes }) => hashes.map((hash) => this.pool.getByHash(hash)?.senderPublicKey ?? null),
    };
    this.p2p = {
      peerTransactions: async ({ raws, hashes }) => {
        // One the pool holds, is admitting, or a recent block included is known before any decoding:
        // with several peers the same transaction arrives from more than one, and recovering its
        // sender again each time was most of the decode threads' work.
        const fresh: Promise<unknown>[] = [];
        raws.forEach((raw, i) => {
          const key = bytesToHex(hashes[i]!);
          if (this.isKnown(hashes[i]!, key)) return;
          this.admittingFromPeers.add(key);
          fresh.push(this.admit(raw, false).finally(() => this.admittingFromPeers.delete(key)));
        });
        // A peer's transaction the pool refuses (known, underpriced, nonce too low) is simply not kept.
        const outcomes = await Promise.allSettled(fresh);
        return { added: outcomes.filter((o) => o.status === 'fulfilled').length };
      },
      pooledTransactions: ({ hashes }) =>
        hashes.flatMap((hash) => {
          const tx = this.pool.getByHash(hash);
          return tx ? [tx.raw] : [];
        }),
      unknownTransactions: ({ hashes }) => hashes.filter((hash) => !this.isKnown(hash, bytesToHex(hash))),
    };
  }

  /** Held, being admitted from a peer, or included in a recent block: not worth fetching or decoding. */
  private isKnown(hash: Uint8Array, key: string): boolean {
    return this.pool.getByHash(hash) !== undefined || this.admittingFromPeers.has(key) || this.recentlyIncluded.has(key);
  }

  /** Transactions in the pool (`besu_transaction_pool_transactions`). */
  get size(): number {
    return this.pool.size;
  }

  /** What transport number `index` may ask: its JSON-RPC calls, and what its subscriptions need. */
  transportHandlers(index: number): ChannelHandlers<TransportTxPool, 'txpool'> {
    return {
      rpc: ({ method, params }) => this.serveRpc(method, params),
      // Besu's GraphQL `pending`: every pooled transaction, whatever its layer.
      pending: () => {
        const transactions = [...this.pool.entries()].map((entry) => this.recordOf(entry.tx));
        return { count: transactions.length, transactions };
      },
      transactions: ({ hashes }) =>
        hashes.map((hash) => {
          const tx = this.pool.getByHash(hash);
          return tx === undefined ? null : this.recordOf(tx);
        }),
      subscriptionInterest: (interest) => {
        if (interest.pending || interest.pendingDetails || interest.dropped) this.interests.set(index, interest);
        else this.interests.delete(index);
        return null;
      },
    };
  }

  /** The head the pool checks transactions against; transactions are checked for the block after it. */
  setHead(head: HeadInfo): void {
    this.head = head;
    this.accountCache = new Map();
    this.pool.setHead(head.number, head.nextBaseFeePerGas);
    const hardfork = head.nextHardfork;
    if (!this.rules || this.rules.hardfork !== hardfork) this.rules = txRulesFor(this.deps.genesis.chainId, hardfork);
  }

  onNewHead(event: NewHeadEvent): void {
    this.setHead(event.head);
    // The block's senders as they are at this head: their next transactions need no account read.
    for (const [address, account] of event.senderAccounts ?? []) {
      this.accountCache.set(address.toLowerCase(), Promise.resolve({ account, block: event.head.number }));
    }
    const senderNonces = new Map(event.senderNonces);
    if (event.removedBlocks.length > 0) this.pool.onReorg(senderNonces);
    // Each hash's key once: the pool and the recently-included set both look it up (thousands a block under load).
    const includedKeys = event.includedTxHashes.map(bytesToHex);
    this.pool.onBlockImported(includedKeys, senderNonces);
    for (const key of includedKeys) this.recentlyIncluded.add(key);
    this.refreshAccounts();
    if (event.removedTransactions.length > 0) void this.readmit(event.removedTransactions);
  }

  /**
   * Besu puts the transactions of blocks a re-org removed back in the pool (those the new branch did
   * not mine again): admitted as any transaction from the sender's origin would be, in block order so
   * that each sender's nonces come in sequence. One the new branch made invalid (its nonce used by
   * another transaction, its balance spent) is refused like any other, with a DEBUG line.
   */
  private async readmit(raws: readonly Uint8Array[]): Promise<void> {
    let readmitted = 0;
    for (const raw of raws) {
      try {
        const tx = await this.decode(raw);
        await this.admitDecoded(tx, this.localSenders.has(bytesToHex(tx.sender)));
        readmitted++;
      } catch (err) {
        this.deps.log.debug(`Transaction of a removed block not put back in the pool: ${errorMessage(err)}`);
      }
    }
    this.deps.log.info(`Re-org: ${readmitted} of ${raws.length} transaction(s) of the removed blocks are back in the pool`);
  }

  /** Block building's verdicts on candidates it left out; held senders get their balance read again. */
  private onBuildRejected(rejected: readonly RejectedTx[]): void {
    for (const { hash, reason, detail } of rejected) {
      if (reason !== 'nonce-too-high' && reason !== 'underpriced') this.deps.log.debug(`Block building left out ${bytesToHex(hash)}: ${detail ?? reason}`);
    }
    this.pool.onBuildRejected(rejected);
    this.refreshAccounts();
  }

  /** Reads again the accounts of senders whose balance the pool cannot trust or whose transactions wait for funds. */
  private refreshAccounts(): void {
    const senders = this.pool.sendersToRefresh();
    if (senders.length === 0) return;
    const block = this.head.number;
    Promise.all(senders.map((sender) => this.accountAt(hexToBytes(sender as `0x${string}`)))).then(
      (reads) => {
        // Reads from one head (the cache is per head); a head that moved meanwhile makes them stale.
        if (reads.some((read) => read.block !== block)) return;
        this.pool.updateAccounts(reads.map(({ account }, i) => ({ address: senders[i]!, ...account })), block);
      },
      (err: unknown) => this.deps.log.debug(`Could not read ${senders.length} account(s) for the pool: ${errorMessage(err)}`),
    );
  }

  /** Logs (DEBUG) and hands on transactions that left the pool without being mined. */
  private announceDropped(txs: readonly DecodedTx[], reason: DropReason): void {
    const hashes = txs.slice(0, HASHES_PER_LOG_LINE).map((tx) => bytesToHex(tx.hash));
    const more = txs.length > HASHES_PER_LOG_LINE ? ` and ${txs.length - HASHES_PER_LOG_LINE} more` : '';
    this.deps.log.debug(`Dropped ${txs.length} pending transaction(s) (${reason}): ${hashes.join(', ')}${more}`);
    const publication = this.deps.transports;
    if (publication === undefined) return;
    let hashesHex: string[] | undefined;
    for (const [transport, interest] of this.interests) {
      if (interest.dropped) publication.dropped(transport, (hashesHex ??= txs.map((tx) => bytesToHex(tx.hash))));
    }
  }

  /** Transactions added in this tick, for the transports' `newPendingTransactions` subscriptions. */
  private readonly publishPending = perTick<DecodedTx>((txs) => {
    const publication = this.deps.transports;
    if (publication === undefined) return;
    const wanting = [...this.interests].filter(([, interest]) => interest.pending || interest.pendingDetails);
    if (wanting.length === 0) return;
    const event: PendingTransactionsEvent = { hashes: txs.map((tx) => bytesToHex(tx.hash)) };
    if (wanting.some(([, interest]) => interest.pendingDetails)) event.details = txs.map((tx) => JSON.stringify(formatPendingTransactionDetail(tx)));
    for (const [transport] of wanting) publication.pending(transport, event);
  });

  /**
   * Decodes, checks and pools one transaction (from JSON-RPC when `local`, else from a peer); throws
   * the RpcError Besu answers with. Admitted transactions are gossiped to peers.
   */
  private async admit(raw: Uint8Array, local: boolean): Promise<Uint8Array> {
    this.admitting++;
    try {
      return await this.admitDecoded(await this.decode(raw), local);
    } finally {
      this.admitting--;
    }
  }

  private async decode(raw: Uint8Array): Promise<DecodedTx> {
    if (!this.rules) throw new Error('the pool has no chain head yet');
    const decoded = await this.deps.decode(raw, this.rules);
    if ('error' in decoded) throw new RpcError(decoded.error);
    return decoded.ok;
  }

  private async admitDecoded(tx: DecodedTx, local: boolean): Promise<Uint8Array> {
    const { account, block } = await this.accountAt(tx.sender);
    this.pool.add(tx, {
      account,
      stateBlock: block,
      blockGasLimit: this.head.gasLimit,
      baseFee: this.head.nextBaseFeePerGas,
      local,
      now: Date.now(),
    });
    if (local) this.localSenders.add(bytesToHex(tx.sender));
    for (const filter of this.pendingFilters.all()) filter.hashes.push(tx.hash);
    if (this.deps.gossip) this.gossipToPeers({ hash: tx.hash, type: tx.type, raw: tx.raw, local });
    if (this.interests.size > 0) this.publishPending(tx);
    return tx.hash;
  }

  private readonly gossipToPeers = perTick<GossipTx>((txs) => this.deps.gossip?.(txs));

  /**
   * The sender's account at the head. Lookups made in the same tick go to the chain as one request,
   * which keeps the chain's mailbox quiet under a burst of submissions.
   */
  private accountAt(address: Uint8Array): Promise<AccountRead> {
    const key = bytesToHex(address);
    let cached = this.accountCache.get(key);
    if (!cached) {
      cached = new Promise<AccountRead>((resolve, reject) => this.requestAccount({ address, resolve, reject }));
      this.accountCache.set(key, cached);
      const cache = this.accountCache;
      cached.catch(() => cache.delete(key));
    }
    return cached;
  }

  private readonly requestAccount = perTick<{ address: Uint8Array; resolve: (a: AccountRead) => void; reject: (e: unknown) => void }>((waiting) => {
    this.deps.accounts(waiting.map((w) => w.address)).then(
      (answer) => waiting.forEach((w, i) => w.resolve({ account: answer.accounts[i]!, block: answer.head.number })),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  });

  /** A pooled transaction as a bulk-reading transport (GraphQL) reads it. */
  private recordOf(tx: DecodedTx): TransactionRecord {
    const record: TransactionRecord = {
      hash: tx.hash,
      type: tx.type,
      nonce: tx.nonce,
      gasLimit: tx.gasLimit,
      value: tx.value,
      input: tx.data,
      v: tx.v,
      r: tx.r,
      s: tx.s,
      from: tx.sender,
      raw: tx.canonical ?? tx.raw,
    };
    if (tx.to !== undefined) record.to = tx.to;
    if (tx.gasPrice !== undefined) record.gasPrice = tx.gasPrice;
    if (tx.maxFeePerGas !== undefined) record.maxFeePerGas = tx.maxFeePerGas;
    if (tx.maxPriorityFeePerGas !== undefined) record.maxPriorityFeePerGas = tx.maxPriorityFeePerGas;
    if (tx.accessList !== undefined) record.accessList = tx.accessList;
    if (tx.maxFeePerBlobGas !== undefined) record.maxFeePerBlobGas = tx.maxFeePerBlobGas;
    if (tx.blobVersionedHashes !== undefined) record.blobVersionedHashes = tx.blobVersionedHashes;
    return record;
  }

  /** The pending-transaction JSON of a pooled transaction, or null when it is not in the pool. */
  /**
   * The pool answers eth_getTransactionByHash before the chain, for every hash: the view is loaded only
   * for a transaction the pool holds, not for the mined and unknown ones it answers null.
   */
  private async pendingView(hash: Uint8Array): Promise<Json> {
    const tx = this.pool.getByHash(hash);
    if (tx === undefined) return null;
    return (await this.pendingFormat())(tx);
  }

  /** Formats pooled transactions as pending-transaction JSON, at the fork of the pool's next block. */
  private async pendingFormat(): Promise<(tx: DecodedTx) => Json> {
    const load = this.deps.loadPendingView ?? (() => import('./pending-view.js'));
    const format = await (this.pendingFormatter ??= load().then(({ pendingViewFormatter }) => pendingViewFormatter(this.deps.genesis)));
    return (tx) => format(tx, this.head.nextHardfork);
  }

  private rpcHandlers(): MethodHandlers<'txpool'> {
    return {
      eth_sendRawTransaction: async ({ raw }) => bytesToHex(await this.admit(raw, true)),
      eth_getTransactionByHash: ({ hash }) => this.pendingView(hash),
      // --- Besu's pool views and pending-transaction filters (spec §3.5, §5) ---
      txpool_besuTransactions: () =>
        [...this.pool.entries()].map((entry) => ({
          hash: bytesToHex(entry.tx.hash),
          isReceivedFromLocalSource: entry.local,
          addedToPoolAt: javaInstant(entry.addedAt),
        })),
      txpool_besuStatistics: () => {
        const stats = this.pool.stats();
        // The layered pool has no fixed capacity in transactions: Besu reports -1.
        return { maxSize: -1, localCount: stats.localCount, remoteCount: stats.remoteCount };
      },
      txpool_besuPendingTransactions: async ({ limit, filters }) => {
        const format = await this.pendingFormat();
        // Besu filters first, then takes `limit` of what matched.
        const views: Json[] = [];
        for (const entry of this.pool.entries()) {
          if (limit !== undefined && views.length >= limit) break;
          if (!matchesPendingFilters(entry.tx, filters)) continue;
          views.push(format(entry.tx));
        }
        return views;
      },
      eth_newPendingTransactionFilter: () => this.pendingFilters.install({ hashes: [], lastUsed: Date.now() }),
      eth_getFilterChanges: ({ id }) => {
        const filter = this.pendingFilters.use(id);
        if (!filter) throw new RpcError(RpcErrors.FILTER_NOT_FOUND);
        const hashes = filter.hashes.map(bytesToHex);
        filter.hashes = [];
        return hashes;
      },
      eth_uninstallFilter: ({ id }) => this.pendingFilters.uninstall(id),
    };
  }
}
