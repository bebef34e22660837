import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';
import type { RawLog, StoredReceipt } from '../shared/ethereum/chain-records.js';
import { encodeRlp } from '../shared/ethereum/rlp-encode.js';
import { rlpListItem, rlpListItems, rlpListLength } from '../shared/ethereum/rlp-walk.js';

/**
 * Storage encoding of a block's receipts (prefix `r`): one RLP list per receipt,
 * [status-or-root, cumulativeGasUsed, gasUsed, logsBloom, logs, txType, effectiveGasPrice, from, to,
 *  contractAddress, blobGasUsed, blobGasPrice, revertReason?]. This is Basalt's own layout, richer than the
 * consensus receipt, so answering eth_getTransactionReceipt needs no re-execution. The revert reason
 * (`--revert-reason-enabled`) is a 13th item present only when kept (it may be empty: a bare REVERT), so
 * receipts written without it, by older versions too, keep their 12 items.
 */
const EMPTY = new Uint8Array(0);

export function encodeReceipts(receipts: StoredReceipt[]): Uint8Array {
  return encodeRlp(
    receipts.map((r) => [
      r.root ?? (r.status === 1 ? Uint8Array.of(1) : EMPTY),
      bigIntToUnpaddedBytes(r.cumulativeGasUsed),
      bigIntToUnpaddedBytes(r.gasUsed),
      r.logsBloom,
      r.logs,
      bigIntToUnpaddedBytes(BigInt(r.txType)),
      bigIntToUnpaddedBytes(r.effectiveGasPrice),
      r.from,
      r.to ?? EMPTY,
      r.contractAddress ?? EMPTY,
      r.blobGasUsed === undefined ? EMPTY : bigIntToUnpaddedBytes(r.blobGasUsed),
      r.blobGasPrice === undefined ? EMPTY : bigIntToUnpaddedBytes(r.blobGasPrice),
      ...(r.revertReason === undefined ? [] : [r.revertReason]),
    ]),
  );
}

export function decodeReceipts(bytes: Uint8Array): StoredReceipt[] {
  return (RLP.decode(bytes) as unknown as Uint8Array[][]).map(receiptOfFields);
}

/**
 * Receipt `index` of a block's stored receipts, decoded alone, and the number of logs the receipts
 * before it hold (where its logs start in the block's numbering); undefined when the block has fewer.
 * The receipt is copied out of `bytes`: it does not keep the block's receipts alive.
 */
export function decodeReceiptAt(bytes: Uint8Array, index: number): { receipt: StoredReceipt; logIndexStart: number } | undefined {
  const items = rlpListItems(bytes);
  const item = items[index];
  if (item === undefined) return undefined;
  let logIndexStart = 0;
  for (let i = 0; i < index; i++) {
    const logs = rlpListItem(items[i]!, LOGS_FIELD);
    if (logs === undefined) throw new Error('invalid stored receipt: no logs field');
    logIndexStart += rlpListLength(logs);
  }
  return { receipt: receiptOfFields(RLP.decode(item.slice()) as unknown as Uint8Array[]), logIndexStart };
}

/** Where the logs are in a stored receipt's list. */
const LOGS_FIELD = 4;

function receiptOfFields(f: Uint8Array[]): StoredReceipt {
  const statusOrRoot = f[0] as Uint8Array;
  const receipt: StoredReceipt = {
    cumulativeGasUsed: bytesToBigInt(f[1] as Uint8Array),
    gasUsed: bytesToBigInt(f[2] as Uint8Array),
    logsBloom: f[3] as Uint8Array,
    logs: f[LOGS_FIELD] as unknown as RawLog[],
    txType: Number(bytesToBigInt(f[5] as Uint8Array)),
    effectiveGasPrice: bytesToBigInt(f[6] as Uint8Array),
    from: f[7] as Uint8Array,
  };
  if (statusOrRoot.length === 32) receipt.root = statusOrRoot;
  else receipt.status = statusOrRoot.length === 1 && statusOrRoot[0] === 1 ? 1 : 0;
  const to = f[8] as Uint8Array;
  if (to.length > 0) receipt.to = to;
  const contractAddress = f[9] as Uint8Array;
  if (contractAddress.length > 0) receipt.contractAddress = contractAddress;
  const blobGasUsed = f[10] as Uint8Array;
  if (blobGasUsed.length > 0) receipt.blobGasUsed = bytesToBigInt(blobGasUsed);
  const blobGasPrice = f[11] as Uint8Array;
  if (blobGasPrice.length > 0) receipt.blobGasPrice = bytesToBigInt(blobGasPrice);
  const revertReason = f[12];
  if (revertReason !== undefined) receipt.revertReason = revertReason;
  return receipt;
}
