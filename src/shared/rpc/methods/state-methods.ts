/**
 * Registry entries: World state at a block, and simulation on it: balances, code, storage, nonces,
 * proofs, eth_call, gas estimation, access lists (chain actor; the reads and simulations of one block's
 * state that need nothing else, a state reader thread: src/reader/).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcError, RpcErrors } from '../errors.js';
import {
  parseAddress,
  parseBlockRef,
  parseBlockTag,
  parseBoolean,
  parseCallRequest,
  parseHash,
  parseQuantity,
  parseStateOverrides,
  parseStorageKeys,
  type BlockTag,
} from '../params.js';
import {
  accountAtBlock,
  type AccessListParams,
  type BlockOverrides,
  type BlockStateCall,
  type CallParams,
  type EstimateGasParams,
  type ProofParams,
  type SimulateParams,
  type SimulateRequest,
  type StorageAtParams,
  type WithdrawalOverride,
} from './param-shapes.js';

/** eth_simulateV1's first parameter: blocks of calls, and the switches. */
function parseSimulateRequest(raw: unknown): SimulateRequest {
  const err = RpcErrors.INVALID_PARAMS;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RpcError(err);
  const record = raw as Record<string, unknown>;
  if (!Array.isArray(record.blockStateCalls)) throw new RpcError(err);
  const flag = (key: string) => (record[key] === undefined || record[key] === null ? false : parseBoolean(record[key], err));
  const blockStateCalls = record.blockStateCalls.map((entry): BlockStateCall => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new RpcError(err);
    const call = entry as Record<string, unknown>;
    if (call.calls !== undefined && call.calls !== null && !Array.isArray(call.calls)) throw new RpcError(err);
    const parsed: BlockStateCall = { calls: ((call.calls as unknown[] | undefined) ?? []).map((c) => parseCallRequest(c)) };
    const stateOverrides = parseStateOverrides(call.stateOverrides, err);
    if (stateOverrides !== undefined) parsed.stateOverrides = stateOverrides;
    if (call.blockOverrides !== undefined && call.blockOverrides !== null) parsed.blockOverrides = parseBlockOverrides(call.blockOverrides);
    return parsed;
  });
  return {
    blockStateCalls,
    validation: flag('validation'),
    traceTransfers: flag('traceTransfers'),
    returnFullTransactions: flag('returnFullTransactions'),
  };
}

function parseBlockOverrides(raw: unknown): BlockOverrides {
  const err = RpcErrors.INVALID_PARAMS;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new RpcError(err);
  const record = raw as Record<string, unknown>;
  const present = (key: string) => record[key] !== undefined && record[key] !== null;
  const overrides: BlockOverrides = {};
  if (present('number')) overrides.number = parseQuantity(record.number, err);
  if (present('time')) overrides.time = parseQuantity(record.time, err);
  if (present('gasLimit')) overrides.gasLimit = parseQuantity(record.gasLimit, err);
  if (present('feeRecipient')) overrides.feeRecipient = parseAddress(record.feeRecipient, err);
  if (present('prevRandao')) overrides.prevRandao = parseHash(record.prevRandao, err);
  if (present('baseFeePerGas')) overrides.baseFeePerGas = parseQuantity(record.baseFeePerGas, err);
  if (present('blobBaseFee')) overrides.blobBaseFee = parseQuantity(record.blobBaseFee, err);
  if (present('withdrawals')) {
    if (!Array.isArray(record.withdrawals)) throw new RpcError(err);
    overrides.withdrawals = record.withdrawals.map((entry: unknown): WithdrawalOverride => {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new RpcError(err);
      const w = entry as Record<string, unknown>;
      return {
        index: parseQuantity(w.index, err),
        validatorIndex: parseQuantity(w.validatorIndex, err),
        address: parseAddress(w.address, err),
        amount: parseQuantity(w.amount, err),
      };
    });
  }
  return overrides;
}

export const stateMethods = {
  eth_getBalance: { group: 'ETH', owner: 'reader', parseParams: accountAtBlock },
  eth_getCode: { group: 'ETH', owner: 'reader', parseParams: accountAtBlock },
  /** `pending` is max(latest nonce, the pool's next nonce): the chain actor asks the pool. */
  eth_getTransactionCount: { group: 'ETH', owner: 'chain', parseParams: accountAtBlock },
  eth_getStorageAt: {
    group: 'ETH',
    owner: 'reader',
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
    owner: 'reader',
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
    owner: 'reader',
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
  /** Simulated blocks of calls on a block's state (default `latest`); see src/chain/rpc/simulate-v1.ts. */
  eth_simulateV1: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): SimulateParams => ({
      request: parseSimulateRequest(raw[0]),
      block: raw[1] === undefined || raw[1] === null ? { kind: 'tag', tag: 'latest' } : parseBlockRef(raw[1]),
    }),
  },
} as const satisfies Record<string, MethodSpec>;
