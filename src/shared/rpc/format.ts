/**
 * JSON-RPC result shapes built from ethereumjs objects, with Besu's member order and null/absent
 * rules (spec rpc-auth-cli.md §4). Member order is part of the contract: Besu's clients and
 * fixtures compare it, so every object here is built member by member in the documented order.
 */
import type { Block } from '@ethereumjs/block';
import {
  isBlob4844Tx,
  isEOACode7702Tx,
  isFeeMarket1559Tx,
  isLegacyTx,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { effectiveGasPrice } from '../ethereum/fees.js';
import type { RawLog, StoredReceipt } from '../ethereum/chain-records.js';
import type { Json, JsonObject } from './types.js';
import { toData, toQuantity } from './encoding.js';
import { formatReceiptLog } from './format-logs.js';

// Encodings and logs live apart, for threads that format them without loading @ethereumjs/tx.
export { toData, toQuantity } from './encoding.js';
export { formatFilterLog, formatReceiptLog, type LogLocation } from './format-logs.js';

// ---------------------------------------------------------------------------------------------
// Encodings
// ---------------------------------------------------------------------------------------------

/** Quantity from big-endian bytes (leading zeros stripped). */
function bytesToQuantity(bytes: Uint8Array): string {
  let hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex').replace(/^0+/, '');
  if (hex === '') hex = '0';
  return '0x' + hex;
}

function signatureOf(tx: TypedTransaction): { v: bigint; r: bigint; s: bigint } {
  const { v, r, s } = tx;
  if (v === undefined || r === undefined || s === undefined) throw new Error('transaction is not signed');
  return { v, r, s };
}

/** A legacy tx carries a chain id only when EIP-155 signed (v = chainId * 2 + 35/36). */
function legacyChainId(v: bigint): bigint | undefined {
  return v >= 35n ? (v - 35n) >> 1n : undefined;
}

function formatAccessList(list: [Uint8Array, Uint8Array[]][]): Json {
  return list.map(([address, keys]) => ({ address: toData(address), storageKeys: keys.map(toData) }));
}

function formatAuthorizationList(tx: TypedTransaction): Json {
  if (!isEOACode7702Tx(tx)) return [];
  return tx.authorizationList.map(([chainId, address, nonce, yParity, r, s]) => ({
    chainId: bytesToQuantity(chainId),
    address: toData(address),
    nonce: bytesToQuantity(nonce),
    yParity: bytesToQuantity(yParity),
    r: bytesToQuantity(r),
    s: bytesToQuantity(s),
  }));
}

/** True for the types that price gas with maxFeePerGas / maxPriorityFeePerGas. */
function hasFeeMarket(tx: TypedTransaction): tx is TypedTransaction & { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  return isFeeMarket1559Tx(tx) || isBlob4844Tx(tx) || isEOACode7702Tx(tx);
}

function chainIdOf(tx: TypedTransaction): bigint | undefined {
  if (isLegacyTx(tx)) return legacyChainId(signatureOf(tx).v);
  return (tx as { chainId: bigint }).chainId;
}

function accessListOf(tx: TypedTransaction): [Uint8Array, Uint8Array[]][] | undefined {
  return isLegacyTx(tx) ? undefined : (tx as { accessList: [Uint8Array, Uint8Array[]][] }).accessList;
}

// ---------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------

/** Where a mined transaction sits, plus what its shape needs from the block. */
export interface MinedTxLocation {
  blockHash: Uint8Array;
  blockNumber: bigint;
  blockTimestamp: bigint;
  index: number;
  /** Base fee of the including block; needed for the effective gasPrice of 1559-style types. */
  baseFeePerGas?: bigint;
  /** Sender if already known (saves an ecrecover). */
  sender?: Uint8Array;
}

/**
 * A mined transaction (§4.2): eth_getTransactionBy*, full-transaction blocks. gasPrice is the
 * effective price min(maxFee, baseFee + tip) for 1559-style types; `v` is the raw v for legacy
 * and yParity otherwise; r and s are quantities.
 */
export function formatMinedTransaction(tx: TypedTransaction, loc: MinedTxLocation): JsonObject {
  const { v, r, s } = signatureOf(tx);
  const legacy = isLegacyTx(tx);
  const out: JsonObject = {};
  const accessList = accessListOf(tx);
  if (accessList !== undefined) out.accessList = formatAccessList(accessList);
  if (isEOACode7702Tx(tx)) out.authorizationList = formatAuthorizationList(tx);
  out.blockHash = toData(loc.blockHash);
  out.blockNumber = toQuantity(loc.blockNumber);
  out.blockTimestamp = toQuantity(loc.blockTimestamp);
  const chainId = chainIdOf(tx);
  if (chainId !== undefined) out.chainId = toQuantity(chainId);
  out.from = toData(loc.sender ?? tx.getSenderAddress().bytes);
  out.gas = toQuantity(tx.gasLimit);
  if (hasFeeMarket(tx)) {
    out.gasPrice = toQuantity(effectiveGasPrice(tx, loc.baseFeePerGas));
    out.maxPriorityFeePerGas = toQuantity(tx.maxPriorityFeePerGas);
    out.maxFeePerGas = toQuantity(tx.maxFeePerGas);
  } else {
    out.gasPrice = toQuantity((tx as { gasPrice: bigint }).gasPrice);
  }
  if (isBlob4844Tx(tx)) out.maxFeePerBlobGas = toQuantity(tx.maxFeePerBlobGas);
  out.hash = toData(tx.hash());
  out.input = toData(tx.data);
  out.nonce = toQuantity(tx.nonce);
  out.to = tx.to === undefined ? null : toData(tx.to.bytes);
  out.transactionIndex = toQuantity(loc.index);
  out.type = toQuantity(tx.type);
  out.value = toQuantity(tx.value);
  if (!legacy) out.yParity = toQuantity(v);
  out.v = toQuantity(v);
  out.r = toQuantity(r);
  out.s = toQuantity(s);
  if (isBlob4844Tx(tx)) out.blobVersionedHashes = tx.blobVersionedHashes.map((hash) => hash.toLowerCase());
  return out;
}

export interface PendingTxSender {
  address: Uint8Array;
  /** Uncompressed secp256k1 public key: 64 bytes, or 65 with the 0x04 prefix (stripped). */
  publicKey: Uint8Array;
}

/**
 * A pooled transaction (§4.3): eth_getTransactionByHash for a pending tx, txpool_* methods. Carries
 * explicit null block fields, gasPrice = maxFeePerGas for 1559-style types, `publicKey` and `raw`
 * (the pooled encoding; the network wrapper for blob transactions that carry blobs).
 */
export function formatPendingTransaction(tx: TypedTransaction, sender?: PendingTxSender): JsonObject {
  const { v, r, s } = signatureOf(tx);
  const legacy = isLegacyTx(tx);
  let publicKey = sender?.publicKey ?? tx.getSenderPublicKey();
  if (publicKey.length === 65) publicKey = publicKey.subarray(1);
  const out: JsonObject = {
    blockHash: null,
    blockNumber: null,
    from: toData(sender?.address ?? tx.getSenderAddress().bytes),
    gas: toQuantity(tx.gasLimit),
  };
  if (hasFeeMarket(tx)) {
    out.gasPrice = toQuantity(tx.maxFeePerGas);
    out.maxPriorityFeePerGas = toQuantity(tx.maxPriorityFeePerGas);
    out.maxFeePerGas = toQuantity(tx.maxFeePerGas);
  } else {
    out.gasPrice = toQuantity((tx as { gasPrice: bigint }).gasPrice);
  }
  if (isBlob4844Tx(tx)) out.maxFeePerBlobGas = toQuantity(tx.maxFeePerBlobGas);
  out.hash = toData(tx.hash());
  out.input = toData(tx.data);
  out.nonce = toQuantity(tx.nonce);
  out.to = tx.to === undefined ? null : toData(tx.to.bytes);
  out.transactionIndex = null;
  out.value = toQuantity(tx.value);
  if (!legacy) out.yParity = toQuantity(v);
  out.v = toQuantity(v);
  out.r = toQuantity(r);
  out.s = toQuantity(s);
  if (isBlob4844Tx(tx)) out.blobVersionedHashes = tx.blobVersionedHashes.map((hash) => hash.toLowerCase());
  const accessList = accessListOf(tx);
  if (accessList !== undefined) out.accessList = formatAccessList(accessList);
  const chainId = chainIdOf(tx);
  out.chainId = chainId === undefined ? null : toQuantity(chainId);
  out.publicKey = toData(publicKey);
  const raw = isBlob4844Tx(tx) && tx.blobs !== undefined ? tx.serializeNetworkWrapper() : tx.serialize();
  out.raw = toData(raw);
  out.type = toQuantity(tx.type);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------------------------

export interface FormatBlockOptions {
  /** true: full mined-tx objects; false: tx hashes. */
  fullTransactions: boolean;
  /** The block hash as the chain knows it (QBFT hashes exclude seals, so not `header.hash()`). */
  hash: Uint8Array;
  /** Omitted from the result when the block's own difficulty is zero. */
  totalDifficulty: bigint;
  /** RLP length of the block; computed from `block.serialize()` when not given. */
  size?: number;
  /** Senders of the transactions in order, if already known (saves ecrecover for full blocks). */
  senders?: readonly Uint8Array[];
}

/**
 * A block (§4.1): eth_getBlockByHash/Number, newHeads. Fork-dependent header fields appear only
 * when the header has them; `uncles` lists the ommer header hashes.
 */
export function formatBlock(block: Block, opts: FormatBlockOptions): JsonObject {
  const header = block.header;
  const out: JsonObject = {
    number: toQuantity(header.number),
    hash: toData(opts.hash),
    mixHash: toData(header.mixHash),
    parentHash: toData(header.parentHash),
    nonce: toData(header.nonce),
    sha3Uncles: toData(header.uncleHash),
    logsBloom: toData(header.logsBloom),
    transactionsRoot: toData(header.transactionsTrie),
    stateRoot: toData(header.stateRoot),
    receiptsRoot: toData(header.receiptTrie),
    miner: toData(header.coinbase.bytes),
    difficulty: toQuantity(header.difficulty),
  };
  if (header.difficulty !== 0n) out.totalDifficulty = toQuantity(opts.totalDifficulty);
  out.extraData = toData(header.extraData);
  if (header.baseFeePerGas !== undefined) out.baseFeePerGas = toQuantity(header.baseFeePerGas);
  out.size = toQuantity(opts.size ?? block.serialize().length);
  out.gasLimit = toQuantity(header.gasLimit);
  out.gasUsed = toQuantity(header.gasUsed);
  out.timestamp = toQuantity(header.timestamp);
  out.uncles = block.uncleHeaders.map((uncle) => toData(uncle.hash()));
  out.transactions = opts.fullTransactions
    ? block.transactions.map((tx, index) => {
        const loc: MinedTxLocation = {
          blockHash: opts.hash,
          blockNumber: header.number,
          blockTimestamp: header.timestamp,
          index,
        };
        if (header.baseFeePerGas !== undefined) loc.baseFeePerGas = header.baseFeePerGas;
        const sender = opts.senders?.[index];
        if (sender !== undefined) loc.sender = sender;
        return formatMinedTransaction(tx, loc);
      })
    : block.transactions.map((tx) => toData(tx.hash()));
  if (header.withdrawalsRoot !== undefined) out.withdrawalsRoot = toData(header.withdrawalsRoot);
  if (block.withdrawals !== undefined) {
    out.withdrawals = block.withdrawals.map((withdrawal) => ({
      index: toQuantity(withdrawal.index),
      validatorIndex: toQuantity(withdrawal.validatorIndex),
      address: toData(withdrawal.address.bytes),
      amount: toQuantity(withdrawal.amount),
    }));
  }
  if (header.requestsHash !== undefined) out.requestsHash = toData(header.requestsHash);
  if (header.blockAccessListHash !== undefined) out.balHash = toData(header.blockAccessListHash);
  if (header.slotNumber !== undefined) out.slotNumber = toQuantity(header.slotNumber);
  if (header.blobGasUsed !== undefined) out.blobGasUsed = toQuantity(header.blobGasUsed);
  if (header.excessBlobGas !== undefined) out.excessBlobGas = toQuantity(header.excessBlobGas);
  if (header.parentBeaconBlockRoot !== undefined) out.parentBeaconBlockRoot = toData(header.parentBeaconBlockRoot);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Receipts and logs
// ---------------------------------------------------------------------------------------------

export interface ReceiptContext {
  txHash: Uint8Array;
  blockHash: Uint8Array;
  blockNumber: bigint;
  blockTimestamp: bigint;
  /** Index of the transaction within the block. */
  index: number;
  /** Block-level index of this receipt's first log. */
  logIndexStart: number;
}

/**
 * A receipt (§4.4). `status` post-Byzantium, `root` before; `contractAddress` and `to` are null
 * when absent; revertReason and blob gas members only when present.
 */
export function formatReceipt(receipt: StoredReceipt, ctx: ReceiptContext): JsonObject {
  const out: JsonObject = {
    blockHash: toData(ctx.blockHash),
    blockNumber: toQuantity(ctx.blockNumber),
    contractAddress: receipt.contractAddress === undefined ? null : toData(receipt.contractAddress),
    cumulativeGasUsed: toQuantity(receipt.cumulativeGasUsed),
    from: toData(receipt.from),
    gasUsed: toQuantity(receipt.gasUsed),
    effectiveGasPrice: toQuantity(receipt.effectiveGasPrice),
    logs: receipt.logs.map((log, i) =>
      formatReceiptLog(log, {
        blockHash: ctx.blockHash,
        blockNumber: ctx.blockNumber,
        blockTimestamp: ctx.blockTimestamp,
        txHash: ctx.txHash,
        txIndex: ctx.index,
        logIndex: ctx.logIndexStart + i,
      }),
    ),
    logsBloom: toData(receipt.logsBloom),
  };
  if (receipt.root !== undefined) out.root = toData(receipt.root);
  else out.status = toQuantity(receipt.status ?? 0);
  out.to = receipt.to === undefined ? null : toData(receipt.to);
  out.transactionHash = toData(ctx.txHash);
  out.transactionIndex = toQuantity(ctx.index);
  if (receipt.revertReason !== undefined) out.revertReason = toData(receipt.revertReason);
  out.type = toQuantity(receipt.txType);
  if (receipt.blobGasUsed !== undefined) out.blobGasUsed = toQuantity(receipt.blobGasUsed);
  if (receipt.blobGasPrice !== undefined) out.blobGasPrice = toQuantity(receipt.blobGasPrice);
  return out;
}
