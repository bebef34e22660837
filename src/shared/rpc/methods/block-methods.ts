/**
 * Registry entries: Blocks, transactions and receipts by hash, number or position (chain actor; the
 * pool answers first for a transaction it still holds).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseBlockRef, parseBlockTag, parseBoolean, parseHash, javaLongDecode, parseUnsignedInt } from '../params.js';
import { blockHashOnly, blockTagOnly, type BlockByHashParams, type BlockByNumberParams, type BlockRefParams, type BlockTagParams, type TransactionHashParams, type TxByBlockHashAndIndexParams, type TxByBlockNumberAndIndexParams } from './param-shapes.js';

export const blockMethods = {
  eth_getBlockByNumber: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): BlockByNumberParams => {
      const block = parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
      return {
        block,
        fullTransactions: parseBoolean(raw[1], RpcErrors.INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS),
      };
    },
  },
  eth_getBlockByHash: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): BlockByHashParams => {
      const hash = parseHash(raw[0], RpcErrors.INVALID_BLOCK_HASH_PARAMS);
      return {
        hash,
        fullTransactions: parseBoolean(raw[1], RpcErrors.INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS),
      };
    },
  },
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
  eth_getTransactionByHash: {
    group: 'ETH',
    owner: 'txpool',
    fallbackOwner: 'chain',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): TransactionHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS),
    }),
  },
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
  eth_getTransactionReceipt: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TransactionHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS),
    }),
  },
  eth_getBlockReceipts: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): BlockRefParams => ({ block: parseBlockRef(raw[0]) }),
  },
} as const satisfies Record<string, MethodSpec>;
