/**
 * The filter object of txpool_besuPendingTransactions (Besu's PendingTransactionsParams and
 * PendingTransactionFilter): per field at most one operator; every filter must match.
 */
import type { DecodedTx } from '../ethereum/decoded-tx.js';

export type PendingTxField = 'from' | 'to' | 'gas' | 'gasPrice' | 'value' | 'nonce';
export type PendingTxOperator = 'eq' | 'gt' | 'lt' | 'action';

export type PendingTxFilter =
  | { field: 'from' | 'to'; operator: 'eq'; address: Uint8Array }
  | { field: 'to'; operator: 'action' }
  | { field: 'gas' | 'gasPrice' | 'value' | 'nonce'; operator: 'eq' | 'gt' | 'lt'; quantity: bigint };

/** Besu's order of evaluation; it does not change the result, only which error a bad filter gets first. */
export const PENDING_TX_FIELDS: readonly PendingTxField[] = ['from', 'to', 'gas', 'gasPrice', 'value', 'nonce'];

export function matchesPendingFilters(tx: DecodedTx, filters: readonly PendingTxFilter[]): boolean {
  return filters.every((filter) => matches(tx, filter));
}

function matches(tx: DecodedTx, filter: PendingTxFilter): boolean {
  switch (filter.field) {
    case 'from':
      return sameBytes(tx.sender, filter.address);
    case 'to':
      // `action` (whatever its value) selects contract creations, as in Besu.
      if (filter.operator === 'action') return tx.to === undefined;
      return tx.to !== undefined && sameBytes(tx.to, filter.address);
    case 'gas':
      return compare(tx.gasLimit, filter.operator, filter.quantity);
    case 'gasPrice':
      // Besu reads Transaction.getGasPrice(), which only legacy and access-list transactions have.
      return tx.gasPrice !== undefined && compare(tx.gasPrice, filter.operator, filter.quantity);
    case 'value':
      return compare(tx.value, filter.operator, filter.quantity);
    case 'nonce':
      return compare(tx.nonce, filter.operator, filter.quantity);
  }
}

function compare(actual: bigint, operator: 'eq' | 'gt' | 'lt', expected: bigint): boolean {
  if (operator === 'eq') return actual === expected;
  return operator === 'gt' ? actual > expected : actual < expected;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
