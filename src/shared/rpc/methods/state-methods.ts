/**
 * Registry entries: World state at a block, and simulation on it: balances, code, storage, nonces,
 * proofs, eth_call, gas estimation, access lists (chain actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseAddress, parseBlockRef, parseBlockTag, parseCallRequest, parseQuantity, parseStateOverrides, parseStorageKeys, type BlockTag } from '../params.js';
import { accountAtBlock, type AccessListParams, type CallParams, type EstimateGasParams, type ProofParams, type StorageAtParams } from './param-shapes.js';

export const stateMethods = {
  eth_getBalance: { group: 'ETH', owner: 'chain', parseParams: accountAtBlock },
  eth_getCode: { group: 'ETH', owner: 'chain', parseParams: accountAtBlock },
  /** `pending` is max(latest nonce, the pool's next nonce): the chain actor asks the pool. */
  eth_getTransactionCount: { group: 'ETH', owner: 'chain', parseParams: accountAtBlock },
  eth_getStorageAt: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): StorageAtParams => {
      const block = parseBlockRef(raw[2]);
      const address = parseAddress(raw[0]);
      return { address, position: parseQuantity(raw[1], RpcErrors.INVALID_POSITION_PARAMS), block };
    },
  },
  eth_getProof: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): ProofParams => {
      const block = parseBlockRef(raw[2]);
      return { address: parseAddress(raw[0]), storageKeys: parseStorageKeys(raw[1]), block };
    },
  },
  eth_call: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): CallParams => {
      const block = parseBlockRef(raw[1]);
      const call = parseCallRequest(raw[0]);
      const stateOverrides = parseStateOverrides(raw[2]);
      return stateOverrides === undefined ? { call, block } : { call, block, stateOverrides };
    },
  },
  /** The block is optional (default `pending`) and may not be a hash. */
  eth_estimateGas: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): EstimateGasParams => {
      const call = parseCallRequest(raw[0]);
      const stateOverrides = parseStateOverrides(raw[2]);
      const block: BlockTag =
        raw[1] === undefined || raw[1] === null
          ? { kind: 'tag', tag: 'pending' }
          : parseBlockTag(raw[1], RpcErrors.INVALID_BLOCK_PARAMS);
      return stateOverrides === undefined ? { call, block } : { call, block, stateOverrides };
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
} as const satisfies Record<string, MethodSpec>;
