/**
 * The transaction pool actor's core: admission (decode and sender recovery handed to a task pool,
 * state checks against per-head account snapshots from the chain), the pool's JSON-RPC methods and
 * pending-transaction filters, and what it answers consensus, the chain and peers. No ports here:
 * workers/txpool.worker.ts opens the channels and hands them these handler tables.
 */
import { createTxFromRLP } from '@ethereumjs/tx';
import { bytesToHex } from '@ethereumjs/util';
import type { ChannelHandlers } from '../shared/actors/channel.js';
import type { ConsensusTxPool, P2pTxPool, TransportTxPool, TxPoolChain } from '../shared/actors/channels.js';
import type { AccountSnapshot, GossipTx, HeadInfo, NewHeadEvent } from '../shared/actors/messages.js';
import { createChainCommon } from '../shared/ethereum/common.js';
import type { DecodedTx, TxRules } from '../shared/ethereum/decoded-tx.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { serveMethods } from '../shared/rpc/dispatch.js';
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { FilterRegistry } from '../shared/rpc/filter-registry.js';
import { formatPendingTransaction } from '../shared/rpc/format.js';
import { matchesPendingFilters } from '../shared/rpc/pending-filter.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { Json, RpcErrorObject } from '../shared/rpc/types.js';
import type { Logger } from '../shared/util/log.js';
import { perTick } from '../shared/util/per-tick.js';
import { TransactionPool } from './pool.js';
import type { TransactionPoolOptions } from './pool.js';
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
  log: Logger;
}

/** Java's `Instant.toString()`: ISO-8601 UTC, milliseconds shown only when not zero. */
function javaInstant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export class TxPoolActor {
  readonly transport: ChannelHandlers<TransportTxPool, 'txpool'>;
  readonly consensus: ChannelHandlers<ConsensusTxPool, 'txpool'>;
  readonly chain: ChannelHandlers<TxPoolChain, 'txpool'>;
  readonly p2p: ChannelHandlers<P2pTxPool, 'txpool'>;

  private readonly pool: TransactionPool;
  private readonly common;
  private readonly blockPeriod: bigint;
  private head!: HeadInfo;
  private rules: TxRules | undefined;
  /** Account snapshots valid for the current head; cleared when the head moves. */
  private accountCache = new Map<string, Promise<AccountSnapshot>>();
  /** Pending-transaction filters: hashes of transactions added to the pool since the last poll. */
  private readonly pendingFilters = new FilterRegistry<{ hashes: Uint8Array[]; lastUsed: number }>();

  constructor(private readonly deps: TxPoolActorDeps) {
    this.pool = new TransactionPool({ ...deps.pool });
    this.common = createChainCommon(deps.genesis);
    this.blockPeriod = BigInt(deps.genesis.qbft?.blockPeriodSeconds ?? 1);
    const serve = serveMethods('txpool', this.rpcHandlers());
    this.transport = { rpc: ({ method, params }) => serve(method, params) };
    this.consensus = {
      select: ({ maxCount, gasLimit, baseFee }) =>
        this.pool
          .selectForBlock({ maxCount, gasLimit, baseFee })
          .map((tx) => ({ raw: tx.canonical ?? tx.raw, hash: tx.hash, senderPublicKey: tx.senderPublicKey })),
      drop: ({ hashes }) => {
        for (const hash of hashes) this.pool.remove(hash);
        if (hashes.length > 0) deps.log.debug(`Dropped ${hashes.length} transactions that block building rejected`);
        return null;
      },
    };
    this.chain = { nextNonce: ({ address }) => this.pool.nextNonce(address) ?? null };
    this.p2p = {
      peerTransactions: async ({ raws }) => {
        // A peer's transaction the pool refuses (known, underpriced, nonce too low) is simply not kept.
        const outcomes = await Promise.allSettled(raws.map((raw) => this.admit(raw, false)));
        return { added: outcomes.filter((o) => o.status === 'fulfilled').length };
      },
      pooledTransactions: ({ hashes }) =>
        hashes.flatMap((hash) => {
          const tx = this.pool.getByHash(hash);
          return tx ? [tx.raw] : [];
        }),
      unknownTransactions: ({ hashes }) => hashes.filter((hash) => !this.pool.getByHash(hash)),
    };
  }

  /** The head the pool checks transactions against; transactions are checked for the block after it. */
  setHead(head: HeadInfo): void {
    this.head = head;
    this.accountCache = new Map();
    this.common.setHardforkBy({ blockNumber: head.number + 1n, timestamp: head.timestamp + this.blockPeriod });
    const hardfork = this.common.hardfork();
    if (!this.rules || this.rules.hardfork !== hardfork) this.rules = txRulesFor(this.deps.genesis.chainId, hardfork);
  }

  onNewHead(event: NewHeadEvent): void {
    this.setHead(event.head);
    this.pool.onBlockImported(event.includedTxHashes, new Map(event.senderNonces));
  }

  /**
   * Decodes, checks and pools one transaction (from JSON-RPC when `local`, else from a peer); throws
   * the RpcError Besu answers with. Admitted transactions are gossiped to peers.
   */
  private async admit(raw: Uint8Array, local: boolean): Promise<Uint8Array> {
    if (!this.rules) throw new Error('the pool has no chain head yet');
    const decoded = await this.deps.decode(raw, this.rules);
    if ('error' in decoded) throw new RpcError(decoded.error);
    const tx = decoded.ok;
    const account = await this.accountAt(tx.sender);
    this.pool.add(tx, { account, blockGasLimit: this.head.gasLimit, baseFee: this.head.nextBaseFeePerGas, local, now: Date.now() });
    for (const filter of this.pendingFilters.all()) filter.hashes.push(tx.hash);
    if (this.deps.gossip) this.gossipToPeers({ hash: tx.hash, type: tx.type, raw: tx.raw });
    return tx.hash;
  }

  private readonly gossipToPeers = perTick<GossipTx>((txs) => this.deps.gossip?.(txs));

  /**
   * The sender's account at the head. Lookups made in the same tick go to the chain as one request,
   * which keeps the chain's mailbox quiet under a burst of submissions.
   */
  private accountAt(address: Uint8Array): Promise<AccountSnapshot> {
    const key = bytesToHex(address);
    let cached = this.accountCache.get(key);
    if (!cached) {
      cached = new Promise<AccountSnapshot>((resolve, reject) => this.requestAccount({ address, resolve, reject }));
      this.accountCache.set(key, cached);
      const cache = this.accountCache;
      cached.catch(() => cache.delete(key));
    }
    return cached;
  }

  private readonly requestAccount = perTick<{ address: Uint8Array; resolve: (a: AccountSnapshot) => void; reject: (e: unknown) => void }>((waiting) => {
    this.deps.accounts(waiting.map((w) => w.address)).then(
      (answer) => waiting.forEach((w, i) => w.resolve(answer.accounts[i]!)),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  });

  /** The pending-transaction JSON of a pooled transaction, or null when it is not in the pool. */
  private pendingView(hash: Uint8Array): Json {
    const tx = this.pool.getByHash(hash);
    if (!tx) return null;
    return formatPendingTransaction(createTxFromRLP(tx.canonical ?? tx.raw, { common: this.common }), { address: tx.sender, publicKey: tx.senderPublicKey });
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
      txpool_besuPendingTransactions: ({ limit, filters }) => {
        // Besu filters first, then takes `limit` of what matched.
        const views: Json[] = [];
        for (const entry of this.pool.entries()) {
          if (limit !== undefined && views.length >= limit) break;
          if (!matchesPendingFilters(entry.tx, filters)) continue;
          views.push(this.pendingView(entry.tx.hash));
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
