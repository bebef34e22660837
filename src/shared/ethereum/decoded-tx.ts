/**
 * Data shared by the transaction decoder (which runs in a piscina worker) and the pool actor. Every
 * type here is structured-clone data — bigint, Uint8Array, arrays and plain objects — so a decoded
 * transaction crosses threads without a custom codec.
 */

import { bytesToHex } from '../util/bytes.js';

/** EIP-2718 transaction type: 0 legacy, 1 EIP-2930, 2 EIP-1559, 3 EIP-4844 blob, 4 EIP-7702 set-code. */
export type TxType = 0 | 1 | 2 | 3 | 4;

/** What the decoder must know about the chain: the fork of the block a pooled tx would land in. */
export interface TxRules {
  chainId: bigint;
  /** ethereumjs hardfork name (`'london'`, `'shanghai'`, `'cancun'`, `'prague'`, `'osaka'`, …). */
  hardfork: string;
  /** Transaction types accepted at this fork; anything else is `Invalid transaction type`. */
  allowedTypes: readonly TxType[];
}

export interface AccessListEntry {
  address: Uint8Array;
  storageKeys: Uint8Array[];
}

/** An EIP-7702 authorization tuple exactly as signed (its signature is checked at execution, not here). */
export interface AuthorizationEntry {
  chainId: bigint;
  address: Uint8Array;
  nonce: bigint;
  yParity: number;
  r: bigint;
  s: bigint;
}

/**
 * A transaction that passed every stateless check (encoding, chain id, signature, type, fee fields,
 * intrinsic gas), with its sender recovered. Fee fields follow the type: `gasPrice` for types 0/1,
 * `maxPriorityFeePerGas` + `maxFeePerGas` for 1559-style types.
 */
export interface DecodedTx {
  /** keccak256 of the canonical encoding. */
  hash: Uint8Array;
  /** The pooled encoding as received (what `raw` in the pending-transaction JSON shows). */
  raw: Uint8Array;
  /** For a blob transaction: the encoding without its network wrapper, the form that goes into blocks. */
  canonical?: Uint8Array;
  type: TxType;
  /** Absent only for a legacy transaction signed without EIP-155 replay protection. */
  chainId?: bigint;
  nonce: bigint;
  gasLimit: bigint;
  gasPrice?: bigint;
  maxPriorityFeePerGas?: bigint;
  maxFeePerGas?: bigint;
  /** Absent for contract creation. */
  to?: Uint8Array;
  value: bigint;
  data: Uint8Array;
  /** Present (possibly empty) for types 1, 2 and 4. */
  accessList?: AccessListEntry[];
  /** Present for type 4. */
  authorizationList?: AuthorizationEntry[];
  /** Present for type 3. */
  maxFeePerBlobGas?: bigint;
  /** Type 3: the versioned hashes of its blobs (one per blob: their count sets the blob gas). */
  blobVersionedHashes?: Uint8Array[];
  /** The signature `v` as encoded: 27/28 or chainId·2+35/36 for legacy, the y-parity for typed txs. */
  v: bigint;
  r: bigint;
  s: bigint;
  /** Recovery id of the signature (0 or 1), whatever the type. */
  yParity: 0 | 1;
  sender: Uint8Array;
  /** Uncompressed public key without the 0x04 prefix (64 bytes). */
  senderPublicKey: Uint8Array;
  /** Minimum gas the transaction needs: intrinsic gas, or the EIP-7623 calldata floor if higher. */
  intrinsicGas: bigint;
}

/** The most the sender pays per gas: `maxFeePerGas` for 1559-style txs, `gasPrice` otherwise. */
export function maxFeePerGasOf(tx: DecodedTx): bigint {
  return tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
}

/** The most the sender tips per gas: `maxPriorityFeePerGas` for 1559-style txs, `gasPrice` otherwise. */
export function maxPriorityFeePerGasOf(tx: DecodedTx): bigint {
  return tx.maxPriorityFeePerGas ?? tx.gasPrice ?? 0n;
}

/**
 * What the block producer earns per gas at `baseFee`: min(tip, maxFee − baseFee). Negative when the
 * transaction cannot pay the base fee (callers skip those).
 */
export function effectiveTipOf(tx: DecodedTx, baseFee: bigint | undefined): bigint {
  const maxFee = maxFeePerGasOf(tx);
  const headroom = maxFee - (baseFee ?? 0n);
  const tip = maxPriorityFeePerGasOf(tx);
  return tip < headroom ? tip : headroom;
}

/** Blob gas per blob (EIP-4844; unchanged by later forks). */
export const GAS_PER_BLOB = 131_072n;

/**
 * What the sender's balance must cover for the transaction to execute (§12.2): gas limit × max price
 * per gas + value, plus blob gas × max fee per blob gas for a blob transaction.
 */
export function upfrontCostOf(tx: DecodedTx): bigint {
  const blobGas = BigInt(tx.blobVersionedHashes?.length ?? 0) * GAS_PER_BLOB;
  return tx.gasLimit * maxFeePerGasOf(tx) + tx.value + blobGas * (tx.maxFeePerBlobGas ?? 0n);
}

/** Lower-case `0x`-prefixed hex: the form used for map keys across the pool API. */
export function toHexKey(bytes: Uint8Array): string {
  return bytesToHex(bytes);
}
