/**
 * The ONE registry of JSON-RPC methods Basalt serves.
 *
 * Each entry says which API group enables it, which actor owns it and how its raw params are parsed.
 * Transports look a method up here and parse its params before anything crosses a thread, so an
 * actor only ever sees well-formed, typed params (`ParamsOf<M>`). Actors declare their handlers as
 * `MethodHandlers<'chain'>` etc., which the compiler checks against this table.
 */
import { RpcErrors } from './errors.js';
import {
  parseAddress,
  parseBlockRef,
  parseBlockTag,
  parseBoolean,
  parseCallRequest,
  parseHash,
  parseQuantity,
  parseRawTransaction,
  parseSha3Input,
  parseStateOverrides,
  type AccountOverride,
  type BlockRef,
  type BlockTag,
  type CallRequest,
} from './params.js';
import type { Json, Wire } from './types.js';
import type { MethodGroup } from './api-groups.js';
import { parityMethods } from './methods/besu-methods.js';
import { qbftMethods } from './methods/qbft-methods.js';

/** Who answers a method: an actor, or the transport itself without a hop. */
export type Owner = 'chain' | 'txpool' | 'consensus' | 'p2p' | 'transport';

export interface MethodSpec {
  readonly group: MethodGroup;
  readonly owner: Owner;
  /**
   * Asked when `owner` answers `null`. Used by eth_getTransactionByHash: the pool answers first
   * (pending shape) and the chain only if the pool does not hold the transaction. Asking in this
   * order cannot miss a transaction that is being mined meanwhile, because the pool drops a
   * transaction only after the chain has imported its block.
   */
  readonly fallbackOwner?: Owner;
  /** Methods that reject any other number of params with "Invalid number of params" (§1.2 item 5). */
  readonly exactParamCount?: number;
  /** Turns raw JSON params into the typed value the owner receives; throws `RpcError` on bad input. */
  parseParams(raw: readonly unknown[]): Wire;
}

// ---------------------------------------------------------------------------------------------
// Param shapes of the registered methods
// ---------------------------------------------------------------------------------------------

export type AccountAtBlockParams = { address: Uint8Array; block: BlockRef };
export type StorageAtParams = { address: Uint8Array; position: bigint; block: BlockRef };
export type BlockByNumberParams = { block: BlockTag; fullTransactions: boolean };
export type BlockByHashParams = { hash: Uint8Array; fullTransactions: boolean };
export type TransactionHashParams = { hash: Uint8Array };
export type RawTransactionParams = { raw: Uint8Array };
export type CallParams = { call: CallRequest; block: BlockRef; stateOverrides?: AccountOverride[] };
export type EstimateGasParams = { call: CallRequest; block: BlockTag; stateOverrides?: AccountOverride[] };
export type Sha3Params = { data: Uint8Array };

const noParams = (): null => null;

/**
 * Besu parses the block param of block-or-hash methods before anything else, so a request with no
 * params at all reports the block param ("Invalid block param (block not found)").
 */
function accountAtBlock(raw: readonly unknown[]): AccountAtBlockParams {
  const block = parseBlockRef(raw[1]);
  return { address: parseAddress(raw[0]), block };
}

const coreMethods = {
  // --- answered by the transport (head number published in shared memory, static config) ---
  eth_blockNumber: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_chainId: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_syncing: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_sendTransaction: { group: 'ETH', owner: 'transport', parseParams: noParams },
  net_version: { group: 'NET', owner: 'transport', parseParams: noParams },
  net_listening: { group: 'NET', owner: 'transport', parseParams: noParams },
  net_peerCount: { group: 'NET', owner: 'transport', parseParams: noParams },
  web3_clientVersion: { group: 'WEB3', owner: 'transport', parseParams: noParams },
  web3_sha3: {
    group: 'WEB3',
    owner: 'transport',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): Sha3Params => ({ data: parseSha3Input(raw[0]) }),
  },
  rpc_modules: { group: 'RPC', owner: 'transport', parseParams: noParams },

  // --- chain state and history ---
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
  eth_getTransactionByHash: {
    group: 'ETH',
    owner: 'txpool',
    fallbackOwner: 'chain',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): TransactionHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS),
    }),
  },
  eth_getTransactionReceipt: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): TransactionHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS),
    }),
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
  eth_gasPrice: { group: 'ETH', owner: 'chain', parseParams: noParams },

  // --- transaction pool ---
  eth_sendRawTransaction: {
    group: 'ETH',
    owner: 'txpool',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): RawTransactionParams => ({ raw: parseRawTransaction(raw[0]) }),
  },
} as const satisfies Record<string, MethodSpec>;

const registry = { ...coreMethods, ...qbftMethods, ...parityMethods };

type Registry = typeof registry;

export type MethodName = keyof Registry;

/** The typed params an owner receives for method `M`. */
export type ParamsOf<M extends MethodName> = ReturnType<Registry[M]['parseParams']>;

type OwnersOf<M extends MethodName> =
  | Registry[M]['owner']
  | (Registry[M] extends { readonly fallbackOwner: infer F } ? F : never);

/** Names of the methods owner `O` must answer (as owner or as fallback owner). */
export type MethodsOwnedBy<O extends Owner> = {
  [M in MethodName]: O extends OwnersOf<M> ? M : never;
}[MethodName];

/** The handler table an owner implements: one function per method it answers. */
export type MethodHandlers<O extends Owner> = {
  readonly [M in MethodsOwnedBy<O>]: (params: ParamsOf<M>) => Json | Promise<Json>;
};

export const METHOD_REGISTRY: { readonly [M in MethodName]: Registry[M] } = registry;

export type RegisteredMethod = MethodSpec & { readonly name: MethodName };

const byName: ReadonlyMap<string, RegisteredMethod> = new Map(
  (Object.keys(registry) as MethodName[]).map((name): [string, RegisteredMethod] => [
    name,
    { ...(registry[name] as MethodSpec), name },
  ]),
);

/** The registry entry of `name` (case-sensitive), or undefined if Basalt does not serve it. */
export function lookupMethod(name: string): RegisteredMethod | undefined {
  return byName.get(name);
}

/** All served method names of one owner (for routing tables and tests). */
export function methodNamesOwnedBy(owner: Owner): MethodName[] {
  return (Object.keys(registry) as MethodName[]).filter((name) => {
    const spec: MethodSpec = registry[name];
    return spec.owner === owner || spec.fallbackOwner === owner;
  });
}
