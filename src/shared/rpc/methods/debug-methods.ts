/**
 * Registry entries: Raw chain data and transaction tracing (chain actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseHash } from '../params.js';
import { blockTagOnly, parseTraceOptions, type RawByHashParams, type TraceTransactionParams } from './param-shapes.js';

export const debugMethods = {
  debug_getRawBlock: { group: 'DEBUG', owner: 'chain', parseParams: blockTagOnly() },
  debug_getRawHeader: { group: 'DEBUG', owner: 'chain', parseParams: blockTagOnly() },
  debug_getRawReceipts: { group: 'DEBUG', owner: 'chain', parseParams: blockTagOnly() },
  debug_getRawTransaction: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): RawByHashParams => ({ hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS) }),
  },
  debug_traceTransaction: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TraceTransactionParams => {
      const hash = parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS);
      return { hash, options: parseTraceOptions(raw[1]) };
    },
  },
} as const satisfies Record<string, MethodSpec>;
