/**
 * The registry's `reader` methods — reads and simulations of one block's state — answered the same
 * way wherever they run: on a state reader thread (src/reader/), or on the chain thread when the node
 * runs none. Only where the state and the blocks come from differs.
 */
import type { Block } from '@ethereumjs/block';
import type { VM } from '@ethereumjs/vm';
import { Address, bigIntToBytes, bigIntToHex, bytesToHex, setLengthLeft } from '@ethereumjs/util';
import { RpcError, RpcErrors } from '../rpc/errors.js';
import type { BlockRef, BlockTag } from '../rpc/params.js';
import type { MethodHandlers } from '../rpc/registry.js';
import type { Json } from '../rpc/types.js';
import type { CallSimulator } from './simulation.js';
import type { StateAtBlock } from './state-views.js';

/** How a block parameter names a block, as the chain resolves it. */
export interface BlockResolver {
  /** The block a block parameter names, or undefined when it is unknown or in the future. */
  blockByRef(ref: BlockRef): Promise<Block | undefined>;
  blockByTag(tag: BlockTag): Promise<Block | undefined>;
}

/**
 * Each answer is read from one block's state: the block is resolved once, and everything the method
 * reads or simulates runs at that block's state root.
 */
export function stateReadHandlers(state: StateAtBlock, blocks: BlockResolver, simulator: CallSimulator): MethodHandlers<'reader'> {
  const readState = async <T extends Json>(ref: BlockRef, read: (vm: VM) => Promise<T>): Promise<T | null> => {
    const block = await blocks.blockByRef(ref);
    if (!block) return null;
    return state.withStateAt(block.header.stateRoot, read);
  };
  return {
    eth_getBalance: ({ address, block }) =>
      readState(block, async (vm) => bigIntToHex((await vm.stateManager.getAccount(new Address(address)))?.balance ?? 0n)),
    eth_getCode: ({ address, block }) => readState(block, async (vm) => bytesToHex(await vm.stateManager.getCode(new Address(address)))),
    eth_getStorageAt: ({ address, position, block }) =>
      readState(block, async (vm) => {
        const value = await vm.stateManager.getStorage(new Address(address), setLengthLeft(bigIntToBytes(position), 32));
        return bytesToHex(setLengthLeft(value, 32));
      }),
    eth_call: async ({ call, block, stateOverrides }) => {
      const found = await blocks.blockByRef(block);
      if (!found) return null;
      return bytesToHex(await simulator.call(call, found, stateOverrides));
    },
    eth_estimateGas: async ({ call, block, stateOverrides }) => {
      const found = await blocks.blockByTag(block);
      if (!found) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return bigIntToHex(await simulator.estimateGas(call, found, stateOverrides));
    },
  };
}
