/**
 * Payloads that cross threads on the actor channels (channels.ts). Structured-clone data only:
 * bigint, Uint8Array, plain objects and arrays.
 */
import type { Wire } from '../rpc/types.js';
import type { LogLocation } from '../rpc/format-logs.js';
import type { BlockRef, CallRequest, TopicFilter } from '../rpc/params.js';
import type { RawLog, StoredReceipt } from '../ethereum/chain-records.js';

/** The chain head as the rest of the node needs it. */
export interface HeadInfo {
  number: bigint;
  hash: Uint8Array;
  timestamp: bigint;
  gasLimit: bigint;
  baseFeePerGas?: bigint;
  /** Base fee of the block that would follow, for the pool's selection. */
  nextBaseFeePerGas?: bigint;
  /**
   * Fork (ethereumjs' name) of the block that would follow, one genesis block period after this one:
   * which transaction types the pool admits. Given by the chain, so that the pool needs no Common.
   */
  nextHardfork: string;
  stateRoot: Uint8Array;
  coinbase: Uint8Array;
  extraData: Uint8Array;
  totalDifficulty: bigint;
}

/** What the rest of the node learns when a block becomes the head. */
export interface NewHeadEvent {
  head: HeadInfo;
  /**
   * Hashes of the blocks that left the canonical chain, newest first: empty unless the head moved to
   * another branch (a re-org during full sync). They stay in the database, off the canonical index.
   */
  removedBlocks: Uint8Array[];
  /** Hashes of the blocks that joined the canonical chain, oldest first; the head's alone without a re-org. */
  addedBlocks: Uint8Array[];
  includedTxHashes: Uint8Array[];
  /**
   * Post-block nonce of every sender with a transaction in the block, as [address hex, nonce]; after a
   * re-org, the nonce at the new head of every sender on either branch (it may have moved back).
   */
  senderNonces: [string, bigint][];
  /**
   * Without a re-org, and when the block has at most a few hundred senders: each sender's account at
   * the new head, as [address hex, account] (what the pool's account reads would answer there).
   */
  senderAccounts?: [string, AccountSnapshot][];
  /**
   * Transactions of the removed blocks that the added ones do not carry, oldest first, as the blocks
   * hold them: Besu puts them back in the pool. Empty without a re-org.
   */
  removedTransactions: Uint8Array[];
}

/** A JSON-RPC call routed to the actor that owns the method, params already parsed by the transport. */
export interface RpcCall {
  method: string;
  params: Wire;
}

/** Account facts the pool needs to admit a transaction. */
export interface AccountSnapshot {
  nonce: bigint;
  balance: bigint;
  hasCode: boolean;
}

/** A pooled transaction as block building needs it: decoded and its sender recovered by the pool. */
export interface PoolTxForBlock {
  raw: Uint8Array;
  hash: Uint8Array;
  senderPublicKey: Uint8Array;
}

/** What consensus asks the pool for when it builds a block. */
export interface BlockSelection {
  maxCount: number;
  gasLimit: bigint;
  baseFee?: bigint;
  /**
   * Only transactions that became selectable (arrived, or had the gap before them filled) at or after
   * this point of the pool's arrival order: the `nextSequence` an earlier selection answered.
   */
  fromSequence?: number;
}

/** The pool's answer to a `BlockSelection`. */
export interface PoolSelection {
  transactions: PoolTxForBlock[];
  /** Where the pool's arrival order stands: the `fromSequence` of a later selection for only what arrives after. */
  nextSequence: number;
  /** Transactions received and still being decoded or checked: more may become selectable in a moment. */
  admitting: number;
}

/** What consensus asks the chain to build on its head. */
export interface BuildRequest {
  timestamp: bigint;
  coinbase: Uint8Array;
  /** Unsealed extraData; sealing replaces it before import. */
  extraData: Uint8Array;
  /** Upper bound on how long the transaction loop may run, in ms. */
  maxBuildMs: number;
  /** At most this many transactions in the block, counting those a prebuild put in already. */
  maxTransactions?: number;
  transactions: PoolTxForBlock[];
}

/**
 * Transactions for the chain to execute ahead of the block timer into the block on `parentHash` at
 * `timestamp` by `coinbase`, which a later `BuildRequest` with the same time and coinbase finishes.
 */
export interface PrebuildRequest {
  parentHash: Uint8Array;
  timestamp: bigint;
  coinbase: Uint8Array;
  maxTransactions?: number;
  transactions: PoolTxForBlock[];
  /** Set once the block timer has fired (the build catching up with what arrived meanwhile): execution stops after this many ms. */
  maxBuildMs?: number;
}

/**
 * Why block building left a pool transaction out, judged from the block and state it met: its nonce
 * was already used, a predecessor is missing from the block, it offers less than the block's base fee
 * (or blob base fee), the balance could not cover its upfront cost, or anything else that makes it
 * invalid.
 */
export type BuildRejection = 'nonce-too-low' | 'nonce-too-high' | 'underpriced' | 'insufficient-funds' | 'invalid';

export interface RejectedTx {
  hash: Uint8Array;
  reason: BuildRejection;
  /** For `invalid`: what execution said. */
  detail?: string;
}

/** A block the chain built and holds until it is imported or discarded. */
export interface BuiltBlockInfo {
  number: bigint;
  hash: Uint8Array;
  /** The block's RLP, for the proposal. */
  rlp: Uint8Array;
  txCount: number;
  /** How many of its transactions were executed ahead of the block timer (`prebuild`). */
  executedAhead: number;
  gasUsed: bigint;
  /** Candidates that could not be included, and why. */
  rejected: RejectedTx[];
}

/** eth/68 GetBlockHeaders. */
export interface HeaderQuery {
  origin: bigint | Uint8Array;
  amount: number;
  skip: number;
  reverse: boolean;
}

export interface SyncImportResult {
  imported: number;
  head: HeadInfo;
  /** Why the first block that was not imported was refused. */
  error?: string;
}

/** A transaction admitted to the pool, in network form, to gossip to peers. */
export interface GossipTx {
  hash: Uint8Array;
  type: number;
  /** Network form: the RLP list of a legacy transaction, `type ‖ payload` of a typed one. */
  raw: Uint8Array;
  /** Submitted to this node (JSON-RPC), not received from a peer. */
  local: boolean;
}

/** A QBFT message consensus sends through the p2p actor (qbft-and-p2p.md §4.7). */
export interface IstanbulSend {
  /** QBFT message code 0x12–0x15 (istanbul-relative). */
  code: number;
  data: Uint8Array;
  /** Validator addresses that should receive it (validators at the head). */
  recipients: Uint8Array[];
  /** Addresses never sent to (a gossiped message's author). */
  excludeAddresses: Uint8Array[];
  /** Node id (hex) of the peer a gossiped message came from. */
  excludePeer?: string;
}

/** A QBFT message a peer sent; `origin` is its node id (hex). */
export interface IstanbulReceived {
  code: number;
  data: Uint8Array;
  origin: string;
}

// ---------------------------------------------------------------------------------------------
// Subscriptions (eth_subscribe over WebSocket and IPC): what the actors publish to the transports
// ---------------------------------------------------------------------------------------------

/** A log of a published block, which each transport matches against its own `logs` subscriptions. */
export interface PublishedLog {
  address: Uint8Array;
  topics: Uint8Array[];
  /** The log as a subscription shows it (§4.5), JSON text; `removed` is true for a block that left the chain. */
  json: string;
}

/** A block as subscriptions need it, formatted once by the chain for every transport. */
export interface PublishedBlock {
  number: bigint;
  /** The newHeads result (§4.1, transaction hashes), JSON text; absent when no transport subscribes to newHeads. */
  header?: string;
  /** The same with full transaction objects; present only when a transport subscribes with includeTransactions. */
  headerWithTransactions?: string;
  /** Empty when no transport has a `logs` subscription. */
  logs: PublishedLog[];
}

/** What changed in the canonical chain, published once per new head. */
export interface CanonicalBlocksEvent {
  /** Blocks that left the canonical chain, newest first: only their logs, with `removed: true`. */
  removed: PublishedBlock[];
  /** Blocks that joined the canonical chain, oldest first. */
  added: PublishedBlock[];
}

/** Which parts of each new block a transport's subscriptions need (the chain formats only those). */
export interface ChainSubscriptionInterest {
  newHeads: boolean;
  newHeadsWithTransactions: boolean;
  logs: boolean;
}

/** Which pool events a transport's subscriptions need. */
export interface PoolSubscriptionInterest {
  /** Hashes of transactions added to the pool. */
  pending: boolean;
  /** The same transactions as objects (`newPendingTransactions` with includeTransactions). */
  pendingDetails: boolean;
  dropped: boolean;
}

/** Transactions added to the pool in one turn of its event loop. */
export interface PendingTransactionsEvent {
  hashes: string[];
  /** The `newPendingTransactions` objects as JSON text, in the order of `hashes`; only when a transport asked. */
  details?: string[];
}

/** The sync state as eth_syncing shows it; null when in sync. */
export type SyncStateEvent = { startingBlock: bigint; currentBlock: bigint; highestBlock: bigint } | null;

// ---------------------------------------------------------------------------------------------
// Bulk reads for transports that resolve many fields of many blocks per request (GraphQL)
// ---------------------------------------------------------------------------------------------

/** A transaction's own fields, as mined or pooled. Fee fields follow the type, as in `DecodedTx`. */
export interface TransactionRecord {
  hash: Uint8Array;
  type: number;
  nonce: bigint;
  gasLimit: bigint;
  /** Absent for a contract creation. */
  to?: Uint8Array;
  value: bigint;
  input: Uint8Array;
  /** Types 0 and 1. */
  gasPrice?: bigint;
  /** 1559-style types (2, 3, 4). */
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  /** Type 3. */
  maxFeePerBlobGas?: bigint;
  blobVersionedHashes?: Uint8Array[];
  /** Types 1 and later. */
  accessList?: { address: Uint8Array; storageKeys: Uint8Array[] }[];
  /** As encoded: 27/28 or chainId·2+35/36 for legacy, the y-parity for typed transactions. */
  v: bigint;
  r: bigint;
  s: bigint;
  /** A pooled transaction's sender and encoding; a mined one's come from its receipt and its block's RLP. */
  from?: Uint8Array;
  raw?: Uint8Array;
}

export interface WithdrawalRecord {
  index: bigint;
  validatorIndex: bigint;
  address: Uint8Array;
  /** In gwei. */
  amount: bigint;
}

/**
 * A block's header fields, ommers and withdrawals; its transactions are read apart (TransportChain
 * `blockTransactions`), only by a query that asks for them: a block of 2,000 transactions cost a
 * GraphQL query for its number 14 ms against 2.5 for a block of one. An ommer is a record too: its
 * header, no transactions, `ommer` set.
 */
export interface BlockRecord {
  /** The hash the chain knows the block by (a QBFT hash leaves the seals out). */
  hash: Uint8Array;
  number: bigint;
  parentHash: Uint8Array;
  nonce: Uint8Array;
  mixHash: Uint8Array;
  ommerHash: Uint8Array;
  logsBloom: Uint8Array;
  transactionsRoot: Uint8Array;
  stateRoot: Uint8Array;
  receiptsRoot: Uint8Array;
  coinbase: Uint8Array;
  difficulty: bigint;
  totalDifficulty: bigint;
  extraData: Uint8Array;
  gasLimit: bigint;
  gasUsed: bigint;
  timestamp: bigint;
  baseFeePerGas?: bigint;
  /** The base fee of the block that follows this one, when this one has a base fee. */
  nextBaseFeePerGas?: bigint;
  withdrawalsRoot?: Uint8Array;
  withdrawals?: WithdrawalRecord[];
  blobGasUsed?: bigint;
  excessBlobGas?: bigint;
  transactionCount: number;
  ommers: BlockRecord[];
  ommer: boolean;
}

/** A log with where it sits: its block, transaction, and index within the block. */
export interface LogRecord {
  log: RawLog;
  location: LogLocation;
}

// ---------------------------------------------------------------------------------------------
// The log index (src/logindex/): what the chain sends it of each canonical block
// ---------------------------------------------------------------------------------------------

/** One log of a block with the index of the transaction that emitted it. */
export interface BlockLog {
  log: RawLog;
  txIndex: number;
}

/** A block as the log index keeps it: where it sits in the chain, and its logs in order. */
export interface IndexedBlock {
  number: bigint;
  hash: Uint8Array;
  parentHash: Uint8Array;
  timestamp: bigint;
  /** The hashes of the block's transactions, in order; empty when the block has no log. */
  txHashes: Uint8Array[];
  logs: BlockLog[];
}

/**
 * Blocks that joined the canonical chain, oldest first, sent to the log index after each new head.
 * Whatever the index holds above the first one's parent has left the canonical chain.
 */
export interface CanonicalLogsEvent {
  added: IndexedBlock[];
}

/** Canonical logs of blocks `fromBlock..toBlock` (clamped at the head) that match addresses and topics. */
export interface LogQuery {
  fromBlock: bigint;
  toBlock: bigint;
  /** Empty: any address. */
  addresses: Uint8Array[];
  topics: TopicFilter[];
}

/** What to read of one account in the state after a block: its balance and nonce always. */
export interface AccountRead {
  at: BlockRef;
  address: Uint8Array;
  code: boolean;
  slots: Uint8Array[];
}

/** An account as read; a block that does not exist reads as an empty account. */
export interface AccountState {
  balance: bigint;
  nonce: bigint;
  /** Present when asked for. */
  code?: Uint8Array;
  /** The asked slots' 32-byte values, in order. */
  storage: Uint8Array[];
}

/** A call simulated on the state after a block (GraphQL's `call` and `estimateGas`). */
export interface SimulationRequest {
  call: CallRequest;
  at: BlockRef;
}

/** A simulation's outcome: a failed call is a result too (status 0), not an error. */
export interface SimulationResult {
  status: 0 | 1;
  /** Gas the call used before refunds. */
  gasUsed: bigint;
  output: Uint8Array;
}

/**
 * A mined transaction, its block, its index there and its receipt (read alone: a query about one
 * transaction does not take its block's receipts), with where its logs start in the block.
 */
export interface MinedTransaction {
  tx: TransactionRecord;
  block: BlockRecord;
  index: number;
  receipt: StoredReceipt;
  logIndexStart: number;
}

/** The pool's pending transactions and how many it holds. */
export interface PendingView {
  count: number;
  transactions: TransactionRecord[];
}
