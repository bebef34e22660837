/**
 * Registry entries: The rest of Besu's ETH/NET/WEB3/TXPOOL/ADMIN/MINER/DEBUG methods (Besu parity).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 *
 * Param order matters for errors: Besu parses params left to right except for block-or-hash
 * methods, whose block param is parsed first (see accountAtBlock in registry.ts).
 */
import type { MethodSpec } from '../registry.js';
import { RpcError, RpcErrors } from '../errors.js';
import type { RpcErrorObject } from '../types.js';
import { LOG_LEVELS } from '../../util/log.js';
import type { LogLevel } from '../../util/log.js';
import type { PendingTxFilter } from '../pending-filter.js';
import { parseEnode as parseEnodeUrl } from '../../ethereum/enode.js';
import type { Enode } from '../../ethereum/enode.js';
import {
  javaLongDecode,
  parseAddress,
  parseBlockCount,
  parseBlockRef,
  parseBlockTag,
  parseBoolean,
  parseCallRequest,
  parseEnode,
  parseFilterId,
  parseHash,
  parseLogFilter,
  parsePendingTxFilters,
  parseRewardPercentiles,
  parseStorageKeys,
  parseUnsignedInt,
  type BlockRef,
  type BlockTag,
  type CallRequest,
  type LogFilter,
} from '../params.js';

export type BlockHashParams = { hash: Uint8Array };
export type BlockTagParams = { block: BlockTag };
export type BlockRefParams = { block: BlockRef };
export type TxByBlockHashAndIndexParams = { hash: Uint8Array; index: number };
export type TxByBlockNumberAndIndexParams = { block: BlockTag; index: number };
export type FeeHistoryParams = { blockCount: number; newestBlock: BlockTag; rewardPercentiles?: number[] };
export type ProofParams = { address: Uint8Array; storageKeys: Uint8Array[]; block: BlockRef };
export type AccessListParams = { call: CallRequest; block: BlockTag };
export type LogFilterParams = { filter: LogFilter };
export type FilterIdParams = { id: string };
export type RawByHashParams = { hash: Uint8Array };
export type TraceTransactionParams = { hash: Uint8Array; options: TraceOptions };
export type TraceOptions = { disableStorage: boolean; disableMemory: boolean; disableStack: boolean };
export type PendingTransactionsParams = { limit?: number; filters: PendingTxFilter[] };
export type EnodeParams = { enode: Enode };
export type LogLevelParams = { level: LogLevel };

const noParams = (): null => null;

const blockHashOnly =
  (err: RpcErrorObject = RpcErrors.INVALID_BLOCK_HASH_PARAMS) =>
  (raw: readonly unknown[]): BlockHashParams => ({ hash: parseHash(raw[0], err) });

const blockTagOnly =
  (err: RpcErrorObject = RpcErrors.INVALID_BLOCK_PARAMS) =>
  (raw: readonly unknown[]): BlockTagParams => ({ block: parseBlockTag(raw[0], err) });

/** debug_traceTransaction's options object: the struct-log tracer's switches (Besu's defaults: all on). */
function parseTraceOptions(raw: unknown): TraceOptions {
  const options: TraceOptions = { disableStorage: false, disableMemory: false, disableStack: false };
  if (raw === undefined || raw === null) return options;
  const err = RpcErrors.INVALID_TRANSACTION_TRACE_PARAMS;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new RpcError(err);
  const record = raw as Record<string, unknown>;
  for (const key of ['disableStorage', 'disableMemory', 'disableStack'] as const) {
    if (record[key] !== undefined && record[key] !== null) options[key] = parseBoolean(record[key], err);
  }
  return options;
}

export const parityMethods = {
  // --- blocks and transactions by position ---
  eth_getBlockTransactionCountByHash: { group: 'ETH', owner: 'chain', parseParams: blockHashOnly() },
  /** A negative number names no block here: the answer is null, not an error (Besu). */
  eth_getBlockTransactionCountByNumber: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): BlockTagParams => {
      const negative = typeof raw[0] === 'string' && raw[0].startsWith('-') && (javaLongDecode(raw[0]) ?? 0n) < 0n;
      return negative ? { block: { kind: 'number', number: -1n } } : { block: parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_PARAMS) };
    },
  },
  eth_getUncleCountByBlockHash: { group: 'ETH', owner: 'chain', parseParams: blockHashOnly() },
  eth_getUncleCountByBlockNumber: { group: 'ETH', owner: 'chain', parseParams: blockTagOnly(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS) },
  eth_getTransactionByBlockHashAndIndex: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TxByBlockHashAndIndexParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS),
      index: parseUnsignedInt(raw[1], RpcErrors.INVALID_TRANSACTION_ID_PARAMS),
    }),
  },
  eth_getTransactionByBlockNumberAndIndex: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TxByBlockNumberAndIndexParams => ({
      block: parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_PARAMS),
      index: parseUnsignedInt(raw[1], RpcErrors.INVALID_TRANSACTION_INDEX_PARAMS),
    }),
  },
  eth_getUncleByBlockHashAndIndex: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TxByBlockHashAndIndexParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_BLOCK_HASH_PARAMS),
      index: parseUnsignedInt(raw[1], RpcErrors.INVALID_BLOCK_INDEX_PARAMS),
    }),
  },
  eth_getUncleByBlockNumberAndIndex: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TxByBlockNumberAndIndexParams => ({
      block: parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS),
      index: parseUnsignedInt(raw[1], RpcErrors.INVALID_BLOCK_INDEX_PARAMS),
    }),
  },
  eth_getBlockReceipts: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): BlockRefParams => ({ block: parseBlockRef(raw[0]) }),
  },

  // --- fees ---
  eth_feeHistory: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): FeeHistoryParams => {
      const blockCount = parseBlockCount(raw[0]);
      const newestBlock = parseBlockTag(raw[1], RpcErrors.INVALID_BLOCK_PARAMS);
      const rewardPercentiles = parseRewardPercentiles(raw[2]);
      return rewardPercentiles === undefined ? { blockCount, newestBlock } : { blockCount, newestBlock, rewardPercentiles };
    },
  },
  eth_maxPriorityFeePerGas: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_blobBaseFee: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_config: { group: 'ETH', owner: 'chain', parseParams: noParams },

  // --- state proofs and simulation ---
  eth_getProof: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): ProofParams => {
      const block = parseBlockRef(raw[2]);
      return { address: parseAddress(raw[0]), storageKeys: parseStorageKeys(raw[1]), block };
    },
  },
  eth_createAccessList: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): AccessListParams => {
      const call = parseCallRequest(raw[0]);
      const block: BlockTag =
        raw[1] === undefined || raw[1] === null ? { kind: 'tag', tag: 'pending' } : parseBlockTag(raw[1], RpcErrors.INVALID_BLOCK_PARAMS);
      return { call, block };
    },
  },

  // --- logs and filters (section 5) ---
  eth_getLogs: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): LogFilterParams => ({ filter: parseLogFilter(raw[0]) }),
  },
  eth_newFilter: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): LogFilterParams => ({ filter: parseLogFilter(raw[0]) }),
  },
  eth_newBlockFilter: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_newPendingTransactionFilter: { group: 'ETH', owner: 'txpool', parseParams: noParams },
  /** Block and log filters live in the chain actor, pending-transaction filters in the pool. */
  eth_getFilterChanges: {
    group: 'ETH',
    owner: 'chain',
    fallbackOwner: 'txpool',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },
  eth_getFilterLogs: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },
  eth_uninstallFilter: {
    group: 'ETH',
    owner: 'chain',
    fallbackOwner: 'txpool',
    parseParams: (raw: readonly unknown[]): FilterIdParams => ({ id: parseFilterId(raw[0]) }),
  },

  // --- node facts answered by the transport ---
  eth_accounts: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_protocolVersion: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_hashrate: { group: 'ETH', owner: 'transport', parseParams: noParams },
  net_enode: { group: 'NET', owner: 'p2p', parseParams: noParams },
  net_services: { group: 'NET', owner: 'transport', parseParams: noParams },
  admin_peers: { group: 'ADMIN', owner: 'p2p', parseParams: noParams },

  // --- block production, answered by consensus (Besu's BFT mining coordinator) ---
  eth_mining: { group: 'ETH', owner: 'consensus', parseParams: noParams },
  miner_start: { group: 'MINER', owner: 'consensus', parseParams: noParams },
  miner_stop: { group: 'MINER', owner: 'consensus', parseParams: noParams },

  admin_nodeInfo: { group: 'ADMIN', owner: 'p2p', parseParams: noParams },
  /** Besu's levels, exact case; logger-name filters are accepted (Basalt has one logger tree). */
  admin_changeLogLevel: {
    group: 'ADMIN',
    owner: 'transport',
    parseParams: (raw: readonly unknown[]): LogLevelParams => {
      const level = raw[0];
      if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new RpcError(RpcErrors.INVALID_LOG_LEVEL_PARAMS);
      }
      const filters = raw[1];
      if (filters !== undefined && filters !== null && (!Array.isArray(filters) || filters.some((f) => typeof f !== 'string'))) {
        throw new RpcError(RpcErrors.INVALID_LOG_FILTER_PARAMS);
      }
      return { level: level as LogLevel };
    },
  },
  /**
   * Owned by the p2p actor. The enode is parsed here, before routing, because Besu reports a bad
   * enode (Parse error, invalid node id) even when P2P is disabled.
   */
  admin_addPeer: {
    group: 'ADMIN',
    owner: 'p2p',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): EnodeParams => ({ enode: parseEnodeUrl(parseEnode(raw[0])) }),
  },
  admin_removePeer: {
    group: 'ADMIN',
    owner: 'p2p',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): EnodeParams => ({ enode: parseEnodeUrl(parseEnode(raw[0])) }),
  },

  // --- transaction pool ---
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

  // --- debug ---
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
