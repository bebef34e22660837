/**
 * Raw chain data and tracing of transactions, blocks and calls with the struct-log tracer (registry:
 * debug-methods.ts).
 */
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import { toData } from '../../shared/rpc/format.js';
import type { BlockTag } from '../../shared/rpc/params.js';
import type { debugMethods } from '../../shared/rpc/methods/debug-methods.js';
import { encodeConsensusReceipt } from '../../shared/ethereum/consensus-receipt.js';
import { traceBlock, traceTransaction } from '../../shared/execution/struct-log-tracer.js';
import type { Block } from '@ethereumjs/block';
import type { Json } from '../../shared/rpc/types.js';
import type { TraceOptions } from '../../shared/rpc/methods/param-shapes.js';
import type { ChainRpcContext, DomainHandlers } from './chain-rpc.js';

export function debugHandlers(context: ChainRpcContext): DomainHandlers<typeof debugMethods> {
  const { chain, store } = context;

  const blockByTagOrFail = async (tag: BlockTag) => {
    const found = await context.blockByTag(tag);
    if (!found) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
    return found;
  };

  /** A stored block traced on its parent's state; the genesis block has no parent state to run on (Besu: null). */
  const traceStored = async (block: Block, options: TraceOptions): Promise<Json> => {
    if (block.header.number === 0n) return null;
    const parent = await store.getBlock(block.header.parentHash);
    if (!parent) return null;
    return traceBlock(chain, block, parent.header.stateRoot, options);
  };

  return {
    debug_getRawBlock: async ({ block }) => toData((await blockByTagOrFail(block)).serialize()),
    debug_getRawHeader: async ({ block }) => toData((await blockByTagOrFail(block)).header.serialize()),
    debug_getRawReceipts: async ({ block }) => {
      const found = await blockByTagOrFail(block);
      const receipts = (await store.getReceipts(found.hash())) ?? [];
      return receipts.map((receipt) => toData(encodeConsensusReceipt(receipt)));
    },
    debug_getRawTransaction: async ({ hash }) => {
      const found = await context.findTransaction(hash);
      return found ? toData(found.block.transactions[found.index]!.serialize()) : null;
    },
    debug_traceBlockByNumber: async ({ block, options }) => {
      const found = await context.blockByTag(block);
      return found ? traceStored(found, options) : null;
    },
    debug_traceBlockByHash: async ({ hash, options }) => {
      const found = await store.getBlock(hash);
      return found ? traceStored(found, options) : null;
    },
    debug_traceBlock: async ({ rlp, options }) => {
      let block: Block;
      try {
        block = chain.spec.decodeBlock(rlp);
      } catch {
        throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      }
      const parent = await store.getBlock(block.header.parentHash);
      if (!parent) throw new RpcError(RpcErrors.PARENT_BLOCK_NOT_FOUND);
      return traceBlock(chain, block, parent.header.stateRoot, options);
    },
    debug_traceCall: async ({ call, block, options }) => {
      const found = await context.blockByRef(block);
      if (!found) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return context.simulator.traceCall(call, found, options);
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

