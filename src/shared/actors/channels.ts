/**
 * Every edge of the actor graph, declared once. Each declaration names its two ends, who sends each
 * request (and what it answers), and who emits each event; both ends' types derive from it, and an
 * end serves and hears only what its edge declares (channel.ts).
 *
 *   transport ─rpc→ chain | txpool | consensus | p2p | logindex | reader
 *   transport ─blocks, receipts, accounts…→ chain    transport ─pending, transactions→ txpool
 *   transport ─logs→ logindex                                    chain ⇒ canonicalLogs ⇒ logindex
 *   logindex ─head, canonicalLogs, canonicalHashes, blockLogs→ chain
 *   reader ─stateValues, block, canonicalHash→ chain
 *   transport ─subscriptionInterest→ chain | txpool          chain ⇒ canonicalBlocks ⇒ transport
 *   txpool ⇒ pendingTransactions, droppedTransactions ⇒ transport                  p2p ⇒ syncState ⇒ transport
 *   txpool ─head, accounts→ chain          chain ─nextNonce→ txpool        chain ⇒ newHead ⇒ txpool
 *   consensus ─build, import…→ chain                                       chain ⇒ newHead ⇒ consensus
 *   consensus ─select, buildRejected→ txpool
 *   p2p ─sync…→ chain                                                      chain ⇒ newHead ⇒ p2p
 *   p2p ─peer transactions…→ txpool                                        txpool ⇒ newTransactions ⇒ p2p
 *   consensus ⇒ istanbulSend ⇒ p2p                                         p2p ⇒ istanbulMessage ⇒ consensus
 */
import type { Json } from '../rpc/types.js';
import type { JsonText } from '../rpc/json-text.js';
import type { BlockRef } from '../rpc/params.js';
import type { StoredReceipt } from '../ethereum/chain-records.js';
import type { HeaderSummary } from '../qbft/validators.js';
import { declareChannel } from './channel.js';
import type {
  AccountRead,
  AccountSnapshot,
  AccountState,
  BlockRecord,
  BlockSelection,
  BuildRequest,
  BuiltBlockInfo,
  CanonicalBlocksEvent,
  CanonicalLogsEvent,
  ChainSubscriptionInterest,
  GossipTx,
  HeadInfo,
  HeaderQuery,
  IndexedBlock,
  IstanbulReceived,
  IstanbulSend,
  LogQuery,
  LogRecord,
  MinedTransaction,
  NewHeadEvent,
  PendingTransactionsEvent,
  PendingView,
  PoolSelection,
  PoolSubscriptionInterest,
  PoolTxForBlock,
  PrebuildRequest,
  RejectedTx,
  RpcCall,
  SimulationRequest,
  SimulationResult,
  SyncImportResult,
  SyncStateEvent,
  TransactionRecord,
} from './messages.js';

// ---------------------------------------------------------------------------------------------
// Transports → the actors that own JSON-RPC methods
// ---------------------------------------------------------------------------------------------

/**
 * A JSON-RPC call to the owning actor: the one request every transport edge carries. The answer is
 * the result's JSON text: a large result (hundreds of logs, a block with its transactions) crosses
 * the thread as text rather than a tree of objects to clone, and the transport writes it out as it
 * is instead of serialising it again; past a size, as UTF-8 bytes moved, not copied (json-text.ts).
 */
type RpcRequest = { from: 'transport'; req: RpcCall; res: JsonText };

/**
 * Besides JSON-RPC calls, the chain answers bulk reads: a transport that resolves many fields of
 * many blocks for one request (GraphQL) asks for all it needs of one kind in one message.
 */
export type TransportChain = {
  ends: ['transport', 'chain'];
  requests: {
    rpc: RpcRequest;
    /** What this transport's subscriptions need from each new head from now on; answered once it applies. */
    subscriptionInterest: { from: 'transport'; req: ChainSubscriptionInterest; res: null };
    /** Blocks without their transactions, by number (canonical) or hash; null for each one not found. */
    blocks: { from: 'transport'; req: { refs: BlockRef[] }; res: (BlockRecord | null)[] };
    /** The transactions of blocks, by block hash; null for a block not found. */
    blockTransactions: { from: 'transport'; req: { blockHashes: Uint8Array[] }; res: (TransactionRecord[] | null)[] };
    /** The receipts of blocks, by block hash; null for a block not found. */
    receipts: { from: 'transport'; req: { blockHashes: Uint8Array[] }; res: (StoredReceipt[] | null)[] };
    /** Mined transactions by hash, with their block; null for each one not mined on the canonical chain. */
    transactions: { from: 'transport'; req: { hashes: Uint8Array[] }; res: (MinedTransaction | null)[] };
    /** Accounts (balance, nonce, and code and storage slots when asked) in the state after blocks. */
    accounts: { from: 'transport'; req: { reads: AccountRead[] }; res: AccountState[] };
    /** Blocks' RLP, by hash; null for a block not found. */
    rawBlocks: { from: 'transport'; req: { hashes: Uint8Array[] }; res: (Uint8Array | null)[] };
    /** Calls simulated on the state after blocks, in order. */
    simulations: { from: 'transport'; req: { calls: SimulationRequest[] }; res: SimulationResult[] };
  };
  /** Each new head for the subscriptions, sent only to a transport that declared an interest. */
  events: { canonicalBlocks: { from: 'chain'; body: CanonicalBlocksEvent } };
};
export const TRANSPORT_CHAIN = declareChannel<TransportChain>({
  name: 'transport→chain',
  ends: ['transport', 'chain'],
  requests: {
    rpc: 'transport',
    subscriptionInterest: 'transport',
    blocks: 'transport',
    blockTransactions: 'transport',
    receipts: 'transport',
    transactions: 'transport',
    accounts: 'transport',
    rawBlocks: 'transport',
    simulations: 'transport',
  },
  events: { canonicalBlocks: 'chain' },
});

export type TransportTxPool = {
  ends: ['transport', 'txpool'];
  requests: {
    rpc: RpcRequest;
    /** What this transport's subscriptions need from the pool from now on; answered once it applies. */
    subscriptionInterest: { from: 'transport'; req: PoolSubscriptionInterest; res: null };
    /** The pending transactions, and how many the pool holds. */
    pending: { from: 'transport'; req: null; res: PendingView };
    /** Pooled transactions by hash; null for each one the pool does not hold. */
    transactions: { from: 'transport'; req: { hashes: Uint8Array[] }; res: (TransactionRecord | null)[] };
  };
  events: {
    pendingTransactions: { from: 'txpool'; body: PendingTransactionsEvent };
    /** Hashes of transactions that left the pool without being mined. */
    droppedTransactions: { from: 'txpool'; body: { hashes: string[] } };
  };
};
export const TRANSPORT_TXPOOL = declareChannel<TransportTxPool>({
  name: 'transport→txpool',
  ends: ['transport', 'txpool'],
  requests: { rpc: 'transport', subscriptionInterest: 'transport', pending: 'transport', transactions: 'transport' },
  events: { pendingTransactions: 'txpool', droppedTransactions: 'txpool' },
});

/** Logs (eth_getLogs, log and block filters, GraphQL's logs) are the log index's (src/logindex/). */
export type TransportLogIndex = {
  ends: ['transport', 'logindex'];
  requests: {
    rpc: RpcRequest;
    /** Canonical logs of a block range that match a filter, oldest first. */
    logs: { from: 'transport'; req: LogQuery; res: LogRecord[] };
  };
  events: Record<never, never>;
};
export const TRANSPORT_LOGINDEX = declareChannel<TransportLogIndex>({
  name: 'transport→logindex',
  ends: ['transport', 'logindex'],
  requests: { rpc: 'transport', logs: 'transport' },
  events: {},
});

export type TransportConsensus = { ends: ['transport', 'consensus']; requests: { rpc: RpcRequest }; events: Record<never, never> };
export const TRANSPORT_CONSENSUS = declareChannel<TransportConsensus>({
  name: 'transport→consensus',
  ends: ['transport', 'consensus'],
  requests: { rpc: 'transport' },
  events: {},
});

export type TransportP2p = {
  ends: ['transport', 'p2p'];
  requests: { rpc: RpcRequest };
  /** The sync state each time the local head or the highest block a peer has changes. */
  events: { syncState: { from: 'p2p'; body: SyncStateEvent } };
};
export const TRANSPORT_P2P = declareChannel<TransportP2p>({
  name: 'transport→p2p',
  ends: ['transport', 'p2p'],
  requests: { rpc: 'transport' },
  events: { syncState: 'p2p' },
});

/**
 * State reads and simulations at a block (the registry's `reader` methods) to one of the state reader
 * threads; without reader threads the transport sends them to the chain instead.
 */
export type TransportReader = { ends: ['transport', 'reader']; requests: { rpc: RpcRequest }; events: Record<never, never> };
export const TRANSPORT_READER = declareChannel<TransportReader>({
  name: 'transport→reader',
  ends: ['transport', 'reader'],
  requests: { rpc: 'transport' },
  events: {},
});

// ---------------------------------------------------------------------------------------------
// Between actors
// ---------------------------------------------------------------------------------------------

export type TxPoolChain = {
  ends: ['txpool', 'chain'];
  requests: {
    head: { from: 'txpool'; req: null; res: HeadInfo };
    /** Nonce, balance and code presence of each address at the head (admission checks). */
    accounts: { from: 'txpool'; req: { addresses: Uint8Array[] }; res: { head: HeadInfo; accounts: AccountSnapshot[] } };
    /** The pool's next nonce for an address (eth_getTransactionCount at `pending`), null when it holds none. */
    nextNonce: { from: 'chain'; req: { address: Uint8Array }; res: bigint | null };
    /**
     * The sender public key of each transaction among `hashes` that the pool holds, null for the
     * others: the pool recovered them at admission, so a proposal's need not be recovered again.
     */
    senderKeys: { from: 'chain'; req: { hashes: Uint8Array[] }; res: (Uint8Array | null)[] };
  };
  events: { newHead: { from: 'chain'; body: NewHeadEvent } };
};
export const TXPOOL_CHAIN = declareChannel<TxPoolChain>({
  name: 'txpool↔chain',
  ends: ['txpool', 'chain'],
  requests: { head: 'txpool', accounts: 'txpool', nextNonce: 'chain', senderKeys: 'chain' },
  events: { newHead: 'chain' },
});

export type ConsensusChain = {
  ends: ['consensus', 'chain'];
  requests: {
    head: { from: 'consensus'; req: null; res: HeadInfo };
    /**
     * Executes transactions ahead of the block timer into the block a later `build` with the same time
     * and coinbase finishes; answers how many the block holds so far.
     */
    prebuild: { from: 'consensus'; req: PrebuildRequest; res: { included: number } };
    /** Builds a block on the head and holds it (dropping any block held before); answers with its RLP. */
    build: { from: 'consensus'; req: BuildRequest; res: BuiltBlockInfo };
    /** Drops the held block and puts the building state back at the head. */
    discardBuilt: { from: 'consensus'; req: null; res: null };
    /**
     * Stores a committed block as the new head: the held block when it is the same block (only its
     * sealed extraData is new), else a full execution.
     */
    importCommitted: { from: 'consensus'; req: { rlp: Uint8Array }; res: { number: bigint; hash: Uint8Array } };
    /** Checks and executes a block another validator proposed, storing nothing (a later import may reuse the execution). */
    validateProposal: { from: 'consensus'; req: { rlp: Uint8Array }; res: { valid: boolean; reason?: string } };
    /** Canonical headers `from..to` inclusive, as QBFT reads them (vote tally, signer metrics). */
    headers: { from: 'consensus'; req: { from: bigint; to: bigint }; res: HeaderSummary[] };
    headerByHash: { from: 'consensus'; req: { hash: Uint8Array }; res: HeaderSummary | null };
    /** A read-only call on the state after a block (the QBFT validator contract). */
    call: { from: 'consensus'; req: { blockNumber: bigint; to: Uint8Array; data: Uint8Array }; res: Uint8Array };
  };
  events: { newHead: { from: 'chain'; body: NewHeadEvent } };
};
export const CONSENSUS_CHAIN = declareChannel<ConsensusChain>({
  name: 'consensus↔chain',
  ends: ['consensus', 'chain'],
  requests: {
    head: 'consensus',
    prebuild: 'consensus',
    build: 'consensus',
    discardBuilt: 'consensus',
    importCommitted: 'consensus',
    validateProposal: 'consensus',
    headers: 'consensus',
    headerByHash: 'consensus',
    call: 'consensus',
  },
  events: { newHead: 'chain' },
});

/**
 * The chain feeds the log index: each new head's added blocks with their logs as an event, and on
 * request what the index needs to catch up or to find where its blocks left the canonical chain.
 */
export type LogIndexChain = {
  ends: ['logindex', 'chain'];
  requests: {
    head: { from: 'logindex'; req: null; res: HeadInfo };
    /** Canonical blocks `from..to` (stopping at the head) with their logs, oldest first. */
    canonicalLogs: { from: 'logindex'; req: { from: bigint; to: bigint }; res: IndexedBlock[] };
    /** Canonical hashes of blocks `from..to` (stopping at the head), oldest first. */
    canonicalHashes: { from: 'logindex'; req: { from: bigint; to: bigint }; res: Uint8Array[] };
    /** Any stored block with its logs, canonical or not; null when the chain does not hold it. */
    blockLogs: { from: 'logindex'; req: { hash: Uint8Array }; res: IndexedBlock | null };
  };
  events: { canonicalLogs: { from: 'chain'; body: CanonicalLogsEvent } };
};
export const LOGINDEX_CHAIN = declareChannel<LogIndexChain>({
  name: 'logindex↔chain',
  ends: ['logindex', 'chain'],
  requests: { head: 'logindex', canonicalLogs: 'logindex', canonicalHashes: 'logindex', blockLogs: 'logindex' },
  events: { canonicalLogs: 'chain' },
});

export type ConsensusTxPool = {
  ends: ['consensus', 'txpool'];
  requests: {
    /**
     * Transactions for the next block, in the order to execute them; with `fromSequence` (a
     * `nextSequence` an earlier selection answered) only those that arrived since.
     */
    select: { from: 'consensus'; req: BlockSelection; res: PoolSelection };
    /** Transactions block building left out, and why: the pool decides whether each stays. */
    buildRejected: { from: 'consensus'; req: { rejected: RejectedTx[] }; res: null };
  };
  events: Record<never, never>;
};
export const CONSENSUS_TXPOOL = declareChannel<ConsensusTxPool>({
  name: 'consensus→txpool',
  ends: ['consensus', 'txpool'],
  requests: { select: 'consensus', buildRejected: 'consensus' },
  events: {},
});

export type P2pChain = {
  ends: ['p2p', 'chain'];
  requests: {
    head: { from: 'p2p'; req: null; res: HeadInfo };
    /** eth/68 GetBlockHeaders, serving side: canonical headers, RLP each. */
    headers: { from: 'p2p'; req: HeaderQuery; res: Uint8Array[] };
    /** eth/68 GetBlockBodies, serving side: bodies by hash, RLP each. */
    bodies: { from: 'p2p'; req: { hashes: Uint8Array[] }; res: Uint8Array[] };
    /** Blocks from a peer, checked as `blocks import` checks them, stored in order. */
    importSynced: { from: 'p2p'; req: { blocks: Uint8Array[] }; res: SyncImportResult };
  };
  events: { newHead: { from: 'chain'; body: NewHeadEvent } };
};
export const P2P_CHAIN = declareChannel<P2pChain>({
  name: 'p2p↔chain',
  ends: ['p2p', 'chain'],
  requests: { head: 'p2p', headers: 'p2p', bodies: 'p2p', importSynced: 'p2p' },
  events: { newHead: 'chain' },
});

export type P2pTxPool = {
  ends: ['p2p', 'txpool'];
  requests: {
    /**
     * Transactions from a peer (eth/68 Transactions / PooledTransactions), network form, each with the
     * keccak of its bytes (its hash, except for a blob transaction's network form); bad ones are skipped.
     */
    peerTransactions: { from: 'p2p'; req: { raws: Uint8Array[]; hashes: Uint8Array[] }; res: { added: number } };
    /** Network forms of the pooled transactions among `hashes` (eth/68 GetPooledTransactions). */
    pooledTransactions: { from: 'p2p'; req: { hashes: Uint8Array[] }; res: Uint8Array[] };
    /** Which of `hashes` the pool does not hold (what to fetch after NewPooledTransactionHashes). */
    unknownTransactions: { from: 'p2p'; req: { hashes: Uint8Array[] }; res: Uint8Array[] };
  };
  events: { newTransactions: { from: 'txpool'; body: { txs: GossipTx[] } } };
};
export const P2P_TXPOOL = declareChannel<P2pTxPool>({
  name: 'p2p↔txpool',
  ends: ['p2p', 'txpool'],
  requests: { peerTransactions: 'p2p', pooledTransactions: 'p2p', unknownTransactions: 'p2p' },
  events: { newTransactions: 'txpool' },
});

export type ConsensusP2p = {
  ends: ['consensus', 'p2p'];
  requests: Record<never, never>;
  events: { istanbulSend: { from: 'consensus'; body: IstanbulSend }; istanbulMessage: { from: 'p2p'; body: IstanbulReceived } };
};
export const CONSENSUS_P2P = declareChannel<ConsensusP2p>({
  name: 'consensus↔p2p',
  ends: ['consensus', 'p2p'],
  requests: {},
  events: { istanbulSend: 'consensus', istanbulMessage: 'p2p' },
});

/**
 * What a state reader thread reads through the chain, the one RocksDB owner. Trie nodes and code are
 * content-addressed (the key is the value's hash), so whatever the chain answers for a key is the
 * value under that key for every root, and a reader may keep it for good.
 */
export type ReaderChain = {
  ends: ['reader', 'chain'];
  requests: {
    /** State database values (trie nodes, code) by their hex keys; null for a key not stored. */
    stateValues: { from: 'reader'; req: { keys: string[] }; res: (Uint8Array | null)[] };
    /**
     * The block a block parameter names, as the chain resolves it (its errors included), encoded with
     * an empty body (a call needs the header only); null when there is no such block.
     */
    block: { from: 'reader'; req: { ref: BlockRef }; res: { hash: Uint8Array; rlp: Uint8Array } | null };
    /** The canonical block hash at a number (BLOCKHASH), null when there is none. */
    canonicalHash: { from: 'reader'; req: { number: bigint }; res: Uint8Array | null };
  };
  events: Record<never, never>;
};
export const READER_CHAIN = declareChannel<ReaderChain>({
  name: 'reader→chain',
  ends: ['reader', 'chain'],
  requests: { stateValues: 'reader', block: 'reader', canonicalHash: 'reader' },
  events: {},
});
