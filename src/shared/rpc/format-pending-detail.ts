/**
 * The `newPendingTransactions` object (Besu's PendingTransactionDetailResult) from a decoded pool
 * transaction. Apart from format.ts, whose formatters take ethereumjs transactions, so that the pool's
 * thread formats it without loading @ethereumjs/tx.
 */
import type { JsonObject } from './types.js';
import { toData, toQuantity } from './encoding.js';

/** What a `newPendingTransactions` object is made of: a decoded pool transaction has all of it. */
export interface PendingTxFields {
  hash: Uint8Array;
  type: number;
  nonce: bigint;
  gasLimit: bigint;
  /** Types 0 and 1 only. */
  gasPrice?: bigint;
  to?: Uint8Array;
  value: bigint;
  data: Uint8Array;
  v: bigint;
  r: bigint;
  s: bigint;
  yParity: 0 | 1;
  sender: Uint8Array;
}

/**
 * A transaction as `newPendingTransactions` with includeTransactions shows it (Besu's
 * PendingTransactionDetailResult, §6.3): `gasPrice` null for 1559-style types, `to` null for a
 * creation, `yParity` for typed transactions and `v` for types 0, 1 and 2 only.
 */
export function formatPendingTransactionDetail(tx: PendingTxFields): JsonObject {
  const out: JsonObject = {
    from: toData(tx.sender),
    gas: toQuantity(tx.gasLimit),
    gasPrice: tx.gasPrice === undefined ? null : toQuantity(tx.gasPrice),
    hash: toData(tx.hash),
    input: toData(tx.data),
    nonce: toQuantity(tx.nonce),
    to: tx.to === undefined ? null : toData(tx.to),
    type: toQuantity(tx.type),
    value: toQuantity(tx.value),
  };
  if (tx.type !== 0) out.yParity = toQuantity(tx.yParity);
  if (tx.type <= 2) out.v = toQuantity(tx.v);
  out.r = toQuantity(tx.r);
  out.s = toQuantity(tx.s);
  return out;
}
