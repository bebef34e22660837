/**
 * What one GraphQL query reads from the actors, batched and cached for that query only: blocks,
 * receipts, transactions, accounts, logs, raw blocks and simulations from the chain, pending
 * transactions from the pool. Resolvers ask here; each kind of read becomes one bulk request per
 * turn of the event loop (batcher.ts), and a query past its deadline asks nothing more.
 */
import type { ChannelEnd } from '../../shared/actors/channel.js';
import type { TransportChain, TransportLogIndex, TransportTxPool } from '../../shared/actors/channels.js';
import type {
  AccountRead,
  AccountState,
  BlockRecord,
  LogQuery,
  LogRecord,
  MinedTransaction,
  PendingView,
  SimulationRequest,
  SimulationResult,
  TransactionRecord,
} from '../../shared/actors/messages.js';
import type { StoredReceipt } from '../../shared/ethereum/chain-records.js';
import type { BlockRef } from '../../shared/rpc/params.js';
import { Batcher } from './batcher.js';

/** The node a query reads: actor channels and what the transport knows itself. */
export interface GraphqlBackend {
  chain: Pick<ChannelEnd<TransportChain, 'transport'>, 'request'>;
  txpool: Pick<ChannelEnd<TransportTxPool, 'transport'>, 'request'>;
  logindex: Pick<ChannelEnd<TransportLogIndex, 'transport'>, 'request'>;
  chainId: bigint;
  /** The head number published by the chain (shared memory), null before it publishes one. */
  headNumber(): bigint | null;
  /** The sync in progress, undefined when in sync. */
  syncStatus(): { startingBlock: bigint; currentBlock: bigint; highestBlock: bigint } | undefined;
}

/** Blocks per `blocks` request: a long range goes as several messages, so the chain serves others between them. */
export const BLOCKS_PER_REQUEST = 128;
/** Blocks a `logs` request scans; a longer range is scanned a request at a time, stopping at the deadline. */
export const LOG_BLOCKS_PER_REQUEST = 1000n;

export class QueryTimeoutError extends Error {
  constructor() {
    super('Timeout expired');
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

function refKey(ref: BlockRef): string {
  switch (ref.kind) {
    case 'hash':
      return `h:${hex(ref.hash)}`;
    case 'number':
      return `n:${ref.number}`;
    case 'tag':
      return `t:${ref.tag}`;
  }
}

export const atHash = (hash: Uint8Array): BlockRef => ({ kind: 'hash', hash, requireCanonical: false });
export const atNumber = (number: bigint): BlockRef => ({ kind: 'number', number });
export const LATEST: BlockRef = { kind: 'tag', tag: 'latest' };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One account at one block: what has been asked of it, and what is still to ask. */
interface AccountEntry {
  at: BlockRef;
  address: Uint8Array;
  basics?: Deferred<AccountState>;
  code?: Deferred<Uint8Array>;
  slots: Map<string, Deferred<Uint8Array>>;
  unasked: { basics: boolean; code: boolean; slots: Uint8Array[] };
}

export class QueryData {
  private readonly blocks: Batcher<BlockRef, BlockRecord | null>;
  private readonly receipts: Batcher<Uint8Array, StoredReceipt[] | null>;
  private readonly transactions: Batcher<Uint8Array, TransactionRecord[] | null>;
  private readonly raws: Batcher<Uint8Array, Uint8Array | null>;
  private readonly mined: Batcher<Uint8Array, MinedTransaction | null>;
  private readonly pooled: Batcher<Uint8Array, TransactionRecord | null>;
  private readonly simulations: Batcher<SimulationRequest, SimulationResult>;
  private readonly accounts = new Map<string, AccountEntry>();
  private accountsUnasked: AccountEntry[] = [];
  private pendingView: Promise<PendingView> | undefined;

  constructor(
    readonly backend: GraphqlBackend,
    /** When the query's time is up (ms since the epoch): later reads fail with "Timeout expired". */
    private readonly deadline: number,
  ) {
    const { chain, txpool } = backend;
    this.blocks = new Batcher(
      async (refs) => {
        this.checkDeadline();
        const records = await chain.request('blocks', { refs });
        for (const record of records) if (record !== null) this.remember(record);
        return records;
      },
      refKey,
      BLOCKS_PER_REQUEST,
    );
    this.receipts = new Batcher((blockHashes) => this.ask(() => chain.request('receipts', { blockHashes })), hex, BLOCKS_PER_REQUEST);
    this.transactions = new Batcher((blockHashes) => this.ask(() => chain.request('blockTransactions', { blockHashes })), hex, BLOCKS_PER_REQUEST);
    this.raws = new Batcher((hashes) => this.ask(() => chain.request('rawBlocks', { hashes })), hex, BLOCKS_PER_REQUEST);
    this.mined = new Batcher(
      async (hashes) => {
        this.checkDeadline();
        const found = await chain.request('transactions', { hashes });
        for (const tx of found) if (tx !== null) this.remember(tx.block);
        return found;
      },
      hex,
    );
    this.pooled = new Batcher((hashes) => this.ask(() => txpool.request('transactions', { hashes })), hex);
    // Every simulation is its own (no two share a key); batching them only saves messages.
    let simulations = 0;
    this.simulations = new Batcher(
      (calls) => this.ask(() => chain.request('simulations', { calls })),
      () => String(simulations++),
    );
  }

  private checkDeadline(): void {
    if (Date.now() > this.deadline) throw new QueryTimeoutError();
  }

  private ask<T>(request: () => Promise<T>): Promise<T> {
    this.checkDeadline();
    return request();
  }

  /** A block read once is known by hash, and by number when canonical; its parent is often asked next. */
  private remember(record: BlockRecord): void {
    this.blocks.prime(atHash(record.hash), record);
  }

  /** A canonical block by number, the block with a hash, or the head (`latest`); null when there is none. */
  block(ref: BlockRef): Promise<BlockRecord | null> {
    return this.blocks.get(ref);
  }

  /** The head block number: published in shared memory, or read from the chain before it is. */
  async headNumber(): Promise<bigint> {
    const published = this.backend.headNumber();
    if (published !== null) return published;
    const head = await this.block(LATEST);
    return head?.number ?? 0n;
  }

  /** Canonical blocks `from..to` that exist, in order (a range reaching past the head stops there). */
  async blockRange(from: bigint, to: bigint): Promise<BlockRecord[]> {
    const head = await this.headNumber();
    const last = to > head ? head : to;
    const reads: Promise<BlockRecord | null>[] = [];
    for (let number = from < 0n ? 0n : from; number <= last; number++) reads.push(this.block(atNumber(number)));
    return (await Promise.all(reads)).filter((record): record is BlockRecord => record !== null);
  }

  /** A block's transactions, read only when a query asks for them (BlockRecord says why). */
  async transactionsOf(block: BlockRecord): Promise<TransactionRecord[]> {
    if (block.transactionCount === 0) return [];
    const transactions = await this.transactions.get(block.hash);
    if (transactions === null) throw new Error(`Block hash 0x${hex(block.hash)} was not found`);
    return transactions;
  }

  async receiptsOf(block: BlockRecord): Promise<StoredReceipt[]> {
    return (await this.receipts.get(block.hash)) ?? [];
  }

  async rawBlock(block: BlockRecord): Promise<Uint8Array> {
    const raw = await this.raws.get(block.hash);
    if (raw === null) throw new Error(`Block hash 0x${hex(block.hash)} was not found`);
    return raw;
  }

  minedTransaction(hash: Uint8Array): Promise<MinedTransaction | null> {
    return this.mined.get(hash);
  }

  pooledTransaction(hash: Uint8Array): Promise<TransactionRecord | null> {
    return this.pooled.get(hash);
  }

  pending(): Promise<PendingView> {
    this.pendingView ??= this.ask(() => this.backend.txpool.request('pending', null));
    return this.pendingView;
  }

  simulate(call: SimulationRequest): Promise<SimulationResult> {
    return this.simulations.get(call);
  }

  /** Matching canonical logs of a range, a bounded number of blocks per request. */
  async logs(query: LogQuery): Promise<LogRecord[]> {
    const head = await this.headNumber();
    const last = query.toBlock > head ? head : query.toBlock;
    const logs: LogRecord[] = [];
    for (let from = query.fromBlock; from <= last; from += LOG_BLOCKS_PER_REQUEST) {
      const to = from + LOG_BLOCKS_PER_REQUEST - 1n < last ? from + LOG_BLOCKS_PER_REQUEST - 1n : last;
      logs.push(...(await this.ask(() => this.backend.logindex.request('logs', { ...query, fromBlock: from, toBlock: to }))));
    }
    return logs;
  }

  // --- Accounts: every field asked of every account in one turn goes in one `accounts` request ---

  account(at: BlockRef, address: Uint8Array): Promise<AccountState> {
    const entry = this.accountEntry(at, address);
    if (entry.basics === undefined) {
      entry.basics = deferred();
      this.unasked(entry).basics = true;
    }
    return entry.basics.promise;
  }

  code(at: BlockRef, address: Uint8Array): Promise<Uint8Array> {
    const entry = this.accountEntry(at, address);
    if (entry.code === undefined) {
      entry.code = deferred();
      this.unasked(entry).code = true;
    }
    return entry.code.promise;
  }

  storage(at: BlockRef, address: Uint8Array, slot: Uint8Array): Promise<Uint8Array> {
    const entry = this.accountEntry(at, address);
    const key = hex(slot);
    let value = entry.slots.get(key);
    if (value === undefined) {
      value = deferred();
      entry.slots.set(key, value);
      this.unasked(entry).slots.push(slot);
    }
    return value.promise;
  }

  private accountEntry(at: BlockRef, address: Uint8Array): AccountEntry {
    const key = `${refKey(at)}|${hex(address)}`;
    let entry = this.accounts.get(key);
    if (entry === undefined) {
      entry = { at, address, slots: new Map(), unasked: { basics: false, code: false, slots: [] } };
      this.accounts.set(key, entry);
    }
    return entry;
  }

  private unasked(entry: AccountEntry): AccountEntry['unasked'] {
    if (this.accountsUnasked.length === 0) setImmediate(() => this.askAccounts());
    if (!this.accountsUnasked.includes(entry)) this.accountsUnasked.push(entry);
    return entry.unasked;
  }

  private askAccounts(): void {
    const entries = this.accountsUnasked;
    this.accountsUnasked = [];
    const asked = entries.map((entry) => {
      const unasked = entry.unasked;
      entry.unasked = { basics: false, code: false, slots: [] };
      return { entry, unasked };
    });
    const reads: AccountRead[] = asked.map(({ entry, unasked }) => ({ at: entry.at, address: entry.address, code: unasked.code, slots: unasked.slots }));
    new Promise<AccountState[]>((resolve) => resolve(this.ask(() => this.backend.chain.request('accounts', { reads })))).then(
      (states) =>
        asked.forEach(({ entry, unasked }, i) => {
          const state = states[i]!;
          if (unasked.basics) entry.basics!.resolve(state);
          if (unasked.code) entry.code!.resolve(state.code ?? new Uint8Array());
          unasked.slots.forEach((slot, j) => entry.slots.get(hex(slot))!.resolve(state.storage[j]!));
        }),
      (error: unknown) =>
        asked.forEach(({ entry, unasked }) => {
          if (unasked.basics) entry.basics!.reject(error);
          if (unasked.code) entry.code!.reject(error);
          for (const slot of unasked.slots) entry.slots.get(hex(slot))!.reject(error);
        }),
    );
  }
}
