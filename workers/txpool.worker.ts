/**
 * Transaction pool actor: admits transactions (decode and sender recovery in a piscina pool, state
 * checks against a per-head account snapshot from the chain), hands batches to block building, and
 * forgets what the chain included. The pool's logic lives in src/txpool; this file wires ports.
 */
import { availableParallelism } from 'node:os';
import { workerData } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createTxFromRLP } from '@ethereumjs/tx';
import { bytesToHex } from '@ethereumjs/util';
import { exposeControl } from '../src/shared/actors/control.js';
import { Mailbox } from '../src/shared/actors/mailbox.js';
import type { AccountSnapshot, ChainEvents, ChainProtocol, GossipTx, TxPoolEvents, TxPoolProtocol } from '../src/shared/actors/channels.js';
import type { TxPoolActorData } from '../src/shared/actors/worker-data.js';
import type { HeadInfo } from '../src/chain/chain.js';
import { createChainCommon } from '../src/shared/ethereum/common.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { formatPendingTransaction } from '../src/shared/rpc/format.js';
import { RpcError, RpcErrors } from '../src/shared/rpc/errors.js';
import { FilterRegistry } from '../src/shared/rpc/filter-registry.js';
import type { MethodHandlers } from '../src/shared/rpc/registry.js';
import type { Json } from '../src/shared/rpc/types.js';
import type { DecodeTaskResult } from './tasks/transaction-decode.task.js';
import { txRulesFor } from '../src/txpool/tx-rules.js';
import { TransactionPool } from '../src/txpool/pool.js';
import { matchesPendingFilters } from '../src/shared/rpc/pending-filter.js';
import type { DecodedTx, TxRules } from '../src/shared/ethereum/decoded-tx.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import { perTick } from '../src/shared/util/per-tick.js';

const data = workerData as TxPoolActorData;
setLogLevel(data.logLevel);
const log = new Logger('TxPool');

const genesis = parseGenesisJson(data.genesisJson);
const common = createChainCommon(genesis);
const blockPeriod = BigInt(genesis.qbft?.blockPeriodSeconds ?? 1);
const pool = new TransactionPool({ ...data.pool });
const decoders = new Piscina({
  filename: new URL('./tasks/transaction-decode.task.js', import.meta.url).href,
  maxThreads: Math.max(1, availableParallelism()),
  idleTimeout: 60_000,
});

let chain: Mailbox<ChainProtocol, TxPoolProtocol, Record<never, never>, ChainEvents>;
let p2p: Mailbox<Record<never, never>, TxPoolProtocol, TxPoolEvents> | undefined;
let head: HeadInfo;
let rules: TxRules;
/** Account snapshots valid for the current head; cleared when the head moves. */
let accountCache = new Map<string, Promise<AccountSnapshot>>();

function setHead(next: HeadInfo): void {
  head = next;
  accountCache = new Map();
  // Transactions are checked against the fork of the block they would land in.
  common.setHardforkBy({ blockNumber: head.number + 1n, timestamp: head.timestamp + blockPeriod });
  const hardfork = common.hardfork();
  if (!rules || rules.hardfork !== hardfork) rules = txRulesFor(genesis.chainId, hardfork);
}

/**
 * The sender's account at the head. Lookups made in the same tick go to the chain as one request,
 * which keeps the chain's mailbox quiet under a burst of submissions.
 */
function accountAt(address: Uint8Array): Promise<AccountSnapshot> {
  const key = bytesToHex(address);
  let cached = accountCache.get(key);
  if (!cached) {
    cached = new Promise<AccountSnapshot>((resolve, reject) => requestAccount({ address, resolve, reject }));
    accountCache.set(key, cached);
    cached.catch(() => accountCache.delete(key));
  }
  return cached;
}

const requestAccount = perTick<{ address: Uint8Array; resolve: (a: AccountSnapshot) => void; reject: (e: unknown) => void }>((waiting) => {
  chain.request('accounts', { addresses: waiting.map((w) => w.address) }).then(
    (answer) => waiting.forEach((w, i) => w.resolve(answer.accounts[i]!)),
    (err: unknown) => waiting.forEach((w) => w.reject(err)),
  );
});

/**
 * Decodes, checks and pools one transaction (from JSON-RPC when `local`, else from a peer); throws
 * the RpcError Besu answers with. Admitted transactions are gossiped to peers.
 */
async function admit(raw: Uint8Array, local: boolean): Promise<Uint8Array> {
  const decoded = (await decoders.run({ raw, rules })) as DecodeTaskResult;
  if ('error' in decoded) throw new RpcError(decoded.error);
  const tx = decoded.ok;
  const account = await accountAt(tx.sender);
  pool.add(tx, { account, blockGasLimit: head.gasLimit, baseFee: head.nextBaseFeePerGas, local, now: Date.now() });
  for (const filter of pendingFilters.all()) filter.hashes.push(tx.hash);
  gossip(tx);
  return tx.hash;
}

const gossipToPeers = perTick<GossipTx>((txs) => p2p?.emit('newTransactions', { txs }));

/** Hands admitted transactions to the p2p actor, one message per tick. */
function gossip(tx: DecodedTx): void {
  if (p2p) gossipToPeers({ hash: tx.hash, type: tx.type, raw: tx.raw });
}

const rpcHandlers: MethodHandlers<'txpool'> = {
  async eth_sendRawTransaction({ raw }) {
    return bytesToHex(await admit(raw, true));
  },
  eth_getTransactionByHash({ hash }) {
    return pendingView(hash);
  },
  // --- Besu parity: pool views and pending-transaction filters (spec §3.5, §5) ---
  txpool_besuTransactions() {
    return [...pool.entries()].map((entry) => ({
      hash: bytesToHex(entry.tx.hash),
      isReceivedFromLocalSource: entry.local,
      addedToPoolAt: javaInstant(entry.addedAt),
    }));
  },
  txpool_besuStatistics() {
    const stats = pool.stats();
    // The layered pool has no fixed capacity in transactions: Besu reports -1.
    return { maxSize: -1, localCount: stats.localCount, remoteCount: stats.remoteCount };
  },
  txpool_besuPendingTransactions({ limit, filters }) {
    // Besu filters first, then takes `limit` of what matched.
    const views: Json[] = [];
    for (const entry of pool.entries()) {
      if (limit !== undefined && views.length >= limit) break;
      if (!matchesPendingFilters(entry.tx, filters)) continue;
      views.push(pendingView(entry.tx.hash));
    }
    return views;
  },
  eth_newPendingTransactionFilter() {
    return pendingFilters.install({ hashes: [], lastUsed: Date.now() });
  },
  eth_getFilterChanges({ id }) {
    const filter = pendingFilters.use(id);
    if (!filter) throw new RpcError(RpcErrors.FILTER_NOT_FOUND);
    const hashes = filter.hashes.map(bytesToHex);
    filter.hashes = [];
    return hashes;
  },
  eth_uninstallFilter({ id }) {
    return pendingFilters.uninstall(id);
  },
};

/** Pending-transaction filters: hashes of transactions added to the pool since the last poll. */
const pendingFilters = new FilterRegistry<{ hashes: Uint8Array[]; lastUsed: number }>();

/** Java's `Instant.toString()`: ISO-8601 UTC, milliseconds shown only when not zero. */
function javaInstant(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** The pending-transaction JSON of a pooled transaction, or null when it is not in the pool. */
function pendingView(hash: Uint8Array): Json {
  const tx = pool.getByHash(hash);
  if (!tx) return null;
  return formatPendingTransaction(createTxFromRLP(tx.canonical ?? tx.raw, { common }), { address: tx.sender, publicKey: tx.senderPublicKey });
}

const handlers = {
  rpc: async ({ method, params }: { method: string; params: unknown }): Promise<Json> => {
    const handler = rpcHandlers[method as keyof typeof rpcHandlers] as ((p: unknown) => Json | Promise<Json>) | undefined;
    if (!handler) throw new Error(`txpool does not own ${method}`);
    return handler(params);
  },
  select: ({ maxCount, gasLimit, baseFee }: { maxCount: number; gasLimit: bigint; baseFee?: bigint }) =>
    pool.selectForBlock({ maxCount, gasLimit, baseFee }).map((tx) => ({ raw: tx.canonical ?? tx.raw, hash: tx.hash, senderPublicKey: tx.senderPublicKey })),
  nextNonce: ({ address }: { address: Uint8Array }) => pool.nextNonce(address) ?? null,
  pendingTx: ({ hash }: { hash: Uint8Array }) => pendingView(hash),
  drop: ({ hashes }: { hashes: Uint8Array[] }) => {
    for (const hash of hashes) pool.remove(hash);
    if (hashes.length > 0) log.debug(`Dropped ${hashes.length} transactions that block building rejected`);
    return null;
  },
  async peerTransactions({ raws }: { raws: Uint8Array[] }) {
    // A peer's transaction the pool refuses (known, underpriced, nonce too low) is simply not kept.
    const outcomes = await Promise.allSettled(raws.map((raw) => admit(raw, false)));
    return { added: outcomes.filter((o) => o.status === 'fulfilled').length };
  },
  pooledTransactions: ({ hashes }: { hashes: Uint8Array[] }) =>
    hashes.flatMap((hash) => {
      const tx = pool.getByHash(hash);
      return tx ? [tx.raw] : [];
    }),
  unknownTransactions: ({ hashes }: { hashes: Uint8Array[] }) => hashes.filter((hash) => !pool.getByHash(hash)),
} satisfies Parameters<Mailbox<Record<never, never>, TxPoolProtocol>['serve']>[0];

exposeControl<null>({
  async start() {
    chain = new Mailbox(data.ports.chain);
    chain.serve(handlers);
    new Mailbox<Record<never, never>, TxPoolProtocol>(data.ports.consensus).serve(handlers);
    for (const port of data.ports.http) new Mailbox<Record<never, never>, TxPoolProtocol>(port).serve(handlers);
    if (data.ports.p2p) {
      p2p = new Mailbox(data.ports.p2p);
      p2p.serve(handlers);
    }
    setHead(await chain.request('head', {}));
    chain.on({
      newHead(event) {
        setHead(event.head);
        pool.onBlockImported(event.includedTxHashes, new Map(event.senderNonces));
      },
    });
    return null;
  },
  async stop() {
    await decoders.destroy();
  },
});

