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
 * A block's stored receipts with where each one starts and how many logs the receipts before it hold,
 * found in one pass over the encoding (rlp-walk.ts) without decoding them: each receipt is then
 * decoded alone (receiptAt). About 480 bytes per ERC-20 transfer's receipt, against ~1.2 kB decoded.
 */
export interface IndexedReceipts {
  bytes: Uint8Array;
  /** Where receipt i's encoding starts in `bytes`; one more entry, where the last one ends. */
  starts: Int32Array;
  /** How many logs receipts 0..i-1 hold: where receipt i's logs start in the block's numbering. */
  logsBefore: Int32Array;
}

export function indexReceipts(bytes: Uint8Array): IndexedReceipts {
  const items = rlpListItems(bytes);
  const starts = new Int32Array(items.length + 1);
  const logsBefore = new Int32Array(items.length);
  let logs = 0;
  items.forEach((item, i) => {
    starts[i] = item.byteOffset - bytes.byteOffset;
    logsBefore[i] = logs;
    const logList = rlpListItem(item, LOGS_FIELD);
    if (logList === undefined) throw new Error('invalid stored receipt: no logs field');
    logs += rlpListLength(logList);
  });
  const last = items[items.length - 1];
  starts[items.length] = last === undefined ? 0 : last.byteOffset - bytes.byteOffset + last.length;
  return { bytes, starts, logsBefore };
}

/**
 * Receipt `index` of indexed receipts, decoded alone and copied out of them, and where its logs start
 * in the block's numbering; undefined when the block has fewer.
 */
export function receiptAt(receipts: IndexedReceipts, index: number): { receipt: StoredReceipt; logIndexStart: number } | undefined {
  if (!Number.isInteger(index) || index < 0 || index >= receipts.logsBefore.length) return undefined;
  const item = receipts.bytes.slice(receipts.starts[index], receipts.starts[index + 1]);
  return { receipt: receiptOfFields(RLP.decode(item) as unknown as Uint8Array[]), logIndexStart: receipts.logsBefore[index]! };
}

/**
 * The sender of each transaction of indexed receipts, read from its receipt without decoding the rest
 * of it: what a block's transactions would otherwise recover from their signatures (~60 µs each).
 */
export function sendersOfReceipts(receipts: IndexedReceipts): Uint8Array[] {
  const senders: Uint8Array[] = [];
  for (let i = 0; i < receipts.logsBefore.length; i++) {
    const from = rlpListItem(receipts.bytes.subarray(receipts.starts[i], receipts.starts[i + 1]), FROM_FIELD);
    if (from === undefined) throw new Error('invalid stored receipt: no sender field');
    senders.push((RLP.decode(from) as Uint8Array).slice());
  }
  return senders;
}

/** Where the logs and the sender are in a stored receipt's list. */
const LOGS_FIELD = 4;
const FROM_FIELD = 7;

function receiptOfFields(f: Uint8Array[]): StoredReceipt {
  const statusOrRoot = f[0] as Uint8Array;
  const receipt: StoredReceipt = {
    cumulativeGasUsed: bytesToBigInt(f[1] as Uint8Array),
    gasUsed: bytesToBigInt(f[2] as Uint8Array),
    logsBloom: f[3] as Uint8Array,
    logs: f[LOGS_FIELD] as unknown as RawLog[],
    txType: Number(bytesToBigInt(f[5] as Uint8Array)),
    effectiveGasPrice: bytesToBigInt(f[6] as Uint8Array),
    from: f[FROM_FIELD] as Uint8Array,
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
