/**
 * The typed messages of every channel between actors. Each channel is a Protocol (request → answer)
 * plus one-way Events; all payloads are structured-clone data (bigint, Uint8Array, plain objects).
 */
import type { HeadInfo, NewHeadEvent } from '../../chain/chain.js';
import type { HeaderQuery, SyncImportResult } from '../../chain/block-serving.js';
import type { Json, Wire } from '../rpc/types.js';
import type { DecodedTx } from '../ethereum/decoded-tx.js';
import type { HeaderSummary } from '../qbft/validators.js';

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

/** Anyone → chain. */
export type ChainProtocol = {
  rpc: { req: RpcCall; res: Json };
  head: { req: Record<string, never>; res: HeadInfo };
  accounts: { req: { addresses: Uint8Array[] }; res: { head: HeadInfo; accounts: AccountSnapshot[] } };
  /** Builds a block on the head and holds it; answers with what consensus must seal. */
  build: {
    req: { timestamp: bigint; coinbase: Uint8Array; extraData: Uint8Array; maxBuildMs: number; transactions: PoolTxForBlock[] };
    res: { number: bigint; hash: Uint8Array; txCount: number; gasUsed: bigint; rejected: Uint8Array[] };
  };
  /** Stores the held block with its sealed extraData as the new head. */
  importBuilt: { req: { hash: Uint8Array; sealedExtraData: Uint8Array }; res: { number: bigint; hash: Uint8Array } };
  discardBuilt: { req: Record<string, never>; res: null };
  /** RLP of the block `build` holds (consensus puts it in its proposal), or null. */
  heldBlock: { req: Record<string, never>; res: Uint8Array | null };
  /** Canonical headers `from..to` inclusive, as QBFT reads them (vote tally, signer metrics). */
  consensusHeaders: { req: { from: bigint; to: bigint }; res: HeaderSummary[] };
  consensusHeaderByHash: { req: { hash: Uint8Array }; res: HeaderSummary | null };
  /** A read-only call on the state after a block (the QBFT validator contract). */
  consensusCall: { req: { blockNumber: bigint; to: Uint8Array; data: Uint8Array }; res: Uint8Array };
  /** Executes and stores a sealed block committed by the validators but built elsewhere. */
  consensusImportBlock: { req: { rlp: Uint8Array }; res: { number: bigint; hash: Uint8Array } };
  /** Checks and executes a block another validator proposed, storing nothing (a later import may reuse the execution). */
  consensusValidateBlock: { req: { rlp: Uint8Array }; res: { valid: boolean; reason?: string } };
  /** devp2p sync, serving side: canonical headers (eth/68 GetBlockHeaders), RLP each. */
  syncHeaders: { req: HeaderQuery; res: Uint8Array[] };
  /** devp2p sync, serving side: block bodies by hash (eth/68 GetBlockBodies), RLP each. */
  syncBodies: { req: { hashes: Uint8Array[] }; res: Uint8Array[] };
  /** devp2p sync: blocks from a peer, checked as `blocks import` checks them, stored in order. */
  syncImport: { req: { blocks: Uint8Array[] }; res: SyncImportResult };
};

/** Chain → subscribers (pool, consensus). */
export type ChainEvents = {
  newHead: NewHeadEvent;
};

/** A pooled transaction as block building needs it. */
export interface PoolTxForBlock {
  raw: Uint8Array;
  hash: Uint8Array;
  senderPublicKey: Uint8Array;
}

/** Anyone → transaction pool. */
export type TxPoolProtocol = {
  rpc: { req: RpcCall; res: Json };
  select: { req: { maxCount: number; gasLimit: bigint; baseFee?: bigint }; res: PoolTxForBlock[] };
  nextNonce: { req: { address: Uint8Array }; res: bigint | null };
  /** The pending-shape view of a pooled transaction, or null when it is not in the pool. */
  pendingTx: { req: { hash: Uint8Array }; res: Json };
  /** Drops transactions that block building found invalid against the state. */
  drop: { req: { hashes: Uint8Array[] }; res: null };
  /** Transactions from a peer (eth/68 Transactions / PooledTransactions), in network form; bad ones are skipped. */
  peerTransactions: { req: { raws: Uint8Array[] }; res: { added: number } };
  /** Network forms of the pooled transactions among `hashes` (eth/68 GetPooledTransactions). */
  pooledTransactions: { req: { hashes: Uint8Array[] }; res: Uint8Array[] };
  /** Which of `hashes` the pool does not hold (what to fetch after NewPooledTransactionHashes). */
  unknownTransactions: { req: { hashes: Uint8Array[] }; res: Uint8Array[] };
};

/** Transaction pool → p2p: transactions just admitted, to gossip to peers. */
export type TxPoolEvents = {
  newTransactions: { txs: GossipTx[] };
};

export interface GossipTx {
  hash: Uint8Array;
  type: number;
  /** Network form: the RLP list of a legacy transaction, `type ‖ payload` of a typed one. */
  raw: Uint8Array;
}

/** Anyone → consensus. */
export type ConsensusProtocol = {
  rpc: { req: RpcCall; res: Json };
};

export type { DecodedTx };

/** Anyone → p2p: the admin_* / net_enode methods the p2p actor owns. */
export type P2pProtocol = {
  rpc: { req: RpcCall; res: Json };
};

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

/** Consensus → p2p. */
export type ConsensusToP2pEvents = { istanbulSend: IstanbulSend };
/** P2p → consensus. */
export type P2pToConsensusEvents = { istanbulMessage: IstanbulReceived };
