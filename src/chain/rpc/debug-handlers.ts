/**
 * Raw chain data and transaction tracing (registry: debug-methods.ts).
 */
import { encodeReceipt } from '@ethereumjs/vm';
import type { TxReceipt } from '@ethereumjs/vm';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import { toData } from '../../shared/rpc/format.js';
import type { BlockTag } from '../../shared/rpc/params.js';
import type { debugMethods } from '../../shared/rpc/methods/debug-methods.js';
import type { StoredReceipt } from '../../shared/ethereum/chain-records.js';
import { traceTransaction } from '../struct-log-tracer.js';
import type { ChainRpcContext, DomainHandlers } from './chain-rpc.js';

export function debugHandlers(context: ChainRpcContext): DomainHandlers<typeof debugMethods> {
  const { chain, store } = context;

  const blockByTagOrFail = async (tag: BlockTag) => {
    const found = await context.blockByTag(tag);
    if (!found) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
    return found;
  };

  return {
    debug_getRawBlock: async ({ block }) => toData((await blockByTagOrFail(block)).serialize()),
    debug_getRawHeader: async ({ block }) => toData((await blockByTagOrFail(block)).header.serialize()),
    debug_getRawReceipts: async ({ block }) => {
      const found = await blockByTagOrFail(block);
      const receipts = (await store.getReceipts(found.hash())) ?? [];
      return receipts.map((receipt) => toData(consensusReceipt(receipt)));
    },
    debug_getRawTransaction: async ({ hash }) => {
      const found = await context.findTransaction(hash);
      return found ? toData(found.block.transactions[found.index]!.serialize()) : null;
    },
    debug_traceTransaction: async ({ hash, options }) => {
      const found = await context.findTransaction(hash);
      if (!found) throw new RpcError(RpcErrors.TRANSACTION_NOT_FOUND);
      const parent = await store.getBlock(found.block.header.parentHash);
      if (!parent) throw new RpcError(RpcErrors.PARENT_BLOCK_NOT_FOUND);
      return traceTransaction(chain, found.block, parent.header.stateRoot, found.index, options);
    },
  };
}

/** The consensus encoding of a stored receipt (what the receipts root commits to). */
function consensusReceipt(receipt: StoredReceipt): Uint8Array {
  const base = { cumulativeBlockGasUsed: receipt.cumulativeGasUsed, bitvector: receipt.logsBloom, logs: receipt.logs };
  const txReceipt: TxReceipt = receipt.root !== undefined ? { ...base, stateRoot: receipt.root } : { ...base, status: receipt.status ?? 0 };
  return encodeReceipt(txReceipt, receipt.txType as never);
}
