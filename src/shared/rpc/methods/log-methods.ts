/**
 * Registry entries: Logs and filters (rpc-auth-cli.md §5): logs, block and log filters in the log
 * index actor (src/logindex/), pending-transaction filters in the pool.
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { parseFilterId, parseLogFilter } from '../params.js';
import { noParams, type FilterIdParams, type LogFilterParams } from './param-shapes.js';

export const logMethods = {
  eth_getLogs: {
    group: 'ETH',
    owner: 'logindex',
    parseParams: (raw: readonly unknown[]): LogFilterParams => ({ filter: parseLogFilter(raw[0]) }),
  },
  eth_newFilter: {
    group: 'ETH',
    owner: 'logindex',
    parseParams: (raw: readonly unknown[]): LogFilterParams => ({ filter: parseLogFilter(raw[0]) }),
  },
  eth_newBlockFilter: { group: 'ETH', owner: 'logindex', parseParams: noParams },
  eth_newPendingTransactionFilter: { group: 'ETH', owner: 'txpool', parseParams: noParams },
  /** Block and log filters live in the log index, pending-transaction filters in the pool. */
  eth_getFilterChanges: {
    group: 'ETH',
    owner: 'logindex',
    fallbackOwner: 'txpool',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },
  eth_getFilterLogs: {
    group: 'ETH',
    owner: 'logindex',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },
  eth_uninstallFilter: {
    group: 'ETH',
    owner: 'logindex',
    fallbackOwner: 'txpool',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },
} as const satisfies Record<string, MethodSpec>;
