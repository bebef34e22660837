/**
 * Registry entries: Raw chain data and transaction tracing (chain actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseBlockRef, parseBlockTag, parseCallRequest, parseData, parseHash } from '../params.js';
import {
  blockTagOnly,
  parseTraceOptions,
  type RawByHashParams,
  type TraceBlockByHashParams,
  type TraceBlockByNumberParams,
  type TraceBlockRlpParams,
  type TraceCallParams,
  type TraceTransactionParams,
} from './param-shapes.js';

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
  debug_traceBlockByNumber: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TraceBlockByNumberParams => ({
      block: parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS),
      options: parseTraceOptions(raw[1]),
    }),
  },
  debug_traceBlockByHash: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TraceBlockByHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_BLOCK_HASH_PARAMS),
      options: parseTraceOptions(raw[1]),
    }),
  },
  /** A block given as RLP (it need not be stored); its parent must be. */
  debug_traceBlock: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TraceBlockRlpParams => ({
      rlp: parseData(raw[0], RpcErrors.INVALID_BLOCK_PARAMS),
      options: parseTraceOptions(raw[1]),
    }),
  },
  debug_traceCall: {
    group: 'DEBUG',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TraceCallParams => ({
      call: parseCallRequest(raw[0]),
      block: raw[1] === undefined || raw[1] === null ? { kind: 'tag', tag: 'latest' } : parseBlockRef(raw[1]),
      options: parseTraceOptions(raw[2]),
    }),
  },
} as const satisfies Record<string, MethodSpec>;
