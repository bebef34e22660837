/**
 * Registry entries: Transaction submission and the pool's views (transaction pool actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseRawTransaction, parsePendingTxFilters, parseUnsignedInt } from '../params.js';
import { noParams, type PendingTransactionsParams, type RawTransactionParams } from './param-shapes.js';

export const txpoolMethods = {
  eth_sendRawTransaction: {
    group: 'ETH',
    owner: 'txpool',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): RawTransactionParams => ({ raw: parseRawTransaction(raw[0]) }),
  },
  txpool_besuTransactions: { group: 'TXPOOL', owner: 'txpool', parseParams: noParams },
  txpool_besuStatistics: { group: 'TXPOOL', owner: 'txpool', parseParams: noParams },
  txpool_besuPendingTransactions: {
    group: 'TXPOOL',
    owner: 'txpool',
    parseParams: (raw: readonly unknown[]): PendingTransactionsParams => ({
      ...(raw[0] === undefined || raw[0] === null ? {} : { limit: parseUnsignedInt(raw[0], RpcErrors.INVALID_TRANSACTION_LIMIT_PARAMS) }),
      filters: parsePendingTxFilters(raw[1]),
    }),
  },
} as const satisfies Record<string, MethodSpec>;
