/**
 * Plain data the chain actor stores and hands to formatters. Everything here is structured-clone
 * friendly (bigint, Uint8Array, plain objects) so it can cross a thread boundary unchanged.
 */

/** A log as recorded in a receipt: [address, topics, data], the ethereumjs/RLP order. */
export type RawLog = [address: Uint8Array, topics: Uint8Array[], data: Uint8Array];

/** What the chain keeps per transaction besides the consensus receipt fields. */
export interface StoredReceipt {
  /** 1 = success, 0 = failure (post-Byzantium). Absent when `root` is set (pre-Byzantium). */
  status?: 0 | 1;
  /** Post-transaction state root, for pre-Byzantium receipts only. */
  root?: Uint8Array;
  cumulativeGasUsed: bigint;
  /** Gas used by this transaction alone. */
  gasUsed: bigint;
  logsBloom: Uint8Array;
  logs: RawLog[];
  /** EIP-2718 type byte, 0 for legacy. */
  txType: number;
  /** The price per gas actually paid: min(maxFee, baseFee + tip) for 1559-style transactions. */
  effectiveGasPrice: bigint;
  from: Uint8Array;
  /** Absent for a contract creation. */
  to?: Uint8Array;
  /** Present only for a successful contract creation. */
  contractAddress?: Uint8Array;
  /** Blob gas for type-3 transactions. */
  blobGasUsed?: bigint;
  blobGasPrice?: bigint;
  /** The REVERT data of a reverted transaction, kept only with `--revert-reason-enabled`. */
  revertReason?: Uint8Array;
}

/** Where a mined transaction sits. */
export interface TxLocation {
  blockHash: Uint8Array;
  blockNumber: bigint;
  index: number;
}
