/**
 * World state at a block, and simulation on it (registry: state-methods.ts): balances, code, storage,
 * nonces, proofs, eth_call, gas estimation, access lists.
 */
import { createMerkleProof } from '@ethereumjs/mpt';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import type { VM } from '@ethereumjs/vm';
import { Address, bigIntToHex, bytesToBigInt, equalsBytes } from '@ethereumjs/util';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import { toData, toQuantity } from '../../shared/rpc/format.js';
import type { stateMethods } from '../../shared/rpc/methods/state-methods.js';
import type { Json } from '../../shared/rpc/types.js';
import type { ChainRpcContext, DomainHandlers } from './chain-rpc.js';
import { BlockSimulator } from './simulate-v1.js';
import { stateReadHandlers } from '../../shared/execution/state-read-handlers.js';

export function stateHandlers(context: ChainRpcContext): DomainHandlers<typeof stateMethods> {
  const { options } = context;
  const { simulator } = context;
  const blockSimulator = new BlockSimulator(context.chain, simulator, options.rpcGasCap);

  return {
    eth_simulateV1: async ({ request, block }) => {
      const base = await context.blockByRef(block);
      if (!base) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return blockSimulator.simulate(request, base);
    },
    // Also answered by the state reader threads, when the node runs any.
    ...stateReadHandlers(context.chain, context, simulator),
    eth_getTransactionCount: async ({ address, block }) => {
      const stateNonce = await context.readState(block, async (vm) => (await vm.stateManager.getAccount(new Address(address)))?.nonce ?? 0n);
      if (stateNonce === null) return null;
      if (block.kind === 'tag' && block.tag === 'pending' && options.pendingNonce) {
        const poolNonce = await options.pendingNonce(address);
        if (poolNonce !== null && poolNonce > stateNonce) return bigIntToHex(poolNonce);
      }
      return bigIntToHex(stateNonce);
    },
    eth_getProof: ({ address, storageKeys, block }) => context.readState(block, (vm) => accountProof(vm, address, storageKeys), true),
    eth_createAccessList: async ({ call, block }) => {
      const found = await context.blockByTag(block);
      if (!found) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return simulator.createAccessList(call, found);
    },
  };
}

/** eth_getProof: the account's and the storage slots' Merkle proofs (EIP-1186). */
async function accountProof(vm: VM, address: Uint8Array, keys: Uint8Array[]): Promise<Json> {
  const sm = vm.stateManager as MerkleStateManager;
  const target = new Address(address);
  const trie = sm['_trie'];
  const accountProof = (await createMerkleProof(trie, target.bytes)).map(toData);
  const account = await sm.getAccount(target);
  const storageProof: Json[] = [];
  for (const key of keys) {
    const value = account === undefined ? new Uint8Array() : await sm.getStorage(target, key);
    const storageTrie = account === undefined ? undefined : sm['_getStorageTrie'](target, account);
    storageProof.push({
      key: toData(trimLeadingZeroBytes(key)),
      value: toQuantity(value.length === 0 ? 0n : bytesToBigInt(value)),
      proof: storageTrie === undefined || equalsBytes(account!.storageRoot, storageTrie.EMPTY_TRIE_ROOT) ? [] : (await createMerkleProof(storageTrie, key)).map(toData),
    });
  }
  return {
    accountProof,
    address: toData(address),
    balance: toQuantity(account?.balance ?? 0n),
    codeHash: account === undefined ? '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470' : toData(account.codeHash),
    nonce: toQuantity(account?.nonce ?? 0n),
    storageHash: account === undefined ? '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421' : toData(account.storageRoot),
    storageProof,
  };
}

function trimLeadingZeroBytes(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.subarray(start);
}
