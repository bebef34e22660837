/**
 * The JSON-RPC methods the chain owns, as one handler table. Each registry domain
 * (src/shared/rpc/methods/*-methods.ts) has its handlers in the matching file here; this file holds
 * what they all read (the chain, the options, how a block parameter resolves) and puts the table
 * together. Parameters arrive parsed by the transport; the answers are JSON values in Besu's shapes.
 */
import type { Block } from '@ethereumjs/block';
import type { VM } from '@ethereumjs/vm';
import { equalsBytes } from '@ethereumjs/util';
import type { MethodHandlers, MethodsOwnedBy } from '../../shared/rpc/registry.js';
import type { BlockRef, BlockTag } from '../../shared/rpc/params.js';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import type { Json } from '../../shared/rpc/types.js';
import type { Chain } from '../chain.js';
import type { ChainStore } from '../chain-store.js';
import { stateHandlers } from './state-handlers.js';
import { blockHandlers } from './block-handlers.js';
import { feeHandlers } from './fee-handlers.js';
import { debugHandlers } from './debug-handlers.js';
import { CallSimulator, simulationGasCap } from '../../shared/execution/simulation.js';
import { bulkReads, type BulkReads } from './bulk-reads.js';

export interface ChainRpcOptions {
  /** Gas given to simulations that name none, and the most they may use; 0 = the block gas limit. */
  rpcGasCap: bigint;
  minGasPrice: bigint;
  /** The pool's next nonce for a sender, for the `pending` block tag of eth_getTransactionCount. */
  pendingNonce?: (address: Uint8Array) => Promise<bigint | null>;
  /** `--min-priority-fee` (default 0), the floor of eth_maxPriorityFeePerGas. */
  minPriorityFee?: bigint;
}

/**
 * The handlers of one registry domain's chain-owned methods, e.g. `DomainHandlers<typeof feeMethods>`:
 * a domain file answers exactly what its registry file gives the chain, no more, no less.
 */
export type DomainHandlers<Domain> = Pick<MethodHandlers<'chain'>, Extract<keyof Domain, MethodsOwnedBy<'chain'>>>;

/** What the handlers of every domain read. */
export class ChainRpcContext {
  /** The one simulation path of eth_call, eth_estimateGas, eth_createAccessList, eth_simulateV1 and debug_traceCall. */
  readonly simulator: CallSimulator;

  constructor(
    readonly chain: Chain,
    readonly options: ChainRpcOptions,
  ) {
    this.simulator = new CallSimulator(chain, (block) => this.gasCap(block));
  }

  get store(): ChainStore {
    return this.chain.store;
  }

  headNumber(): bigint {
    return this.chain.getHead().number;
  }

  /** The block a block parameter names, or undefined when it is unknown or in the future. */
  async blockByRef(ref: BlockRef): Promise<Block | undefined> {
    if (ref.kind === 'hash') {
      const block = await this.store.getBlock(ref.hash);
      if (block && ref.requireCanonical) {
        const canonical = await this.store.getCanonicalHash(block.header.number);
        if (!canonical || !equalsBytes(canonical, ref.hash)) throw new RpcError(RpcErrors.INVALID_INPUT);
      }
      return block;
    }
    return this.blockByTag(ref);
  }

  /** The hash of the block a tag names (blockByTag), without reading the block. */
  async blockHashByTag(tag: BlockTag): Promise<Uint8Array | undefined> {
    if (tag.kind === 'number') return this.store.getCanonicalHash(tag.number);
    if (tag.tag === 'earliest') return this.store.getCanonicalHash(0n);
    if (tag.tag === 'finalized' || tag.tag === 'safe') return (await this.blockByTag(tag))?.hash();
    return this.chain.getHead().hash;
  }

  async blockByTag(tag: BlockTag): Promise<Block | undefined> {
    if (tag.kind === 'number') return this.store.getBlockByNumber(tag.number);
    if (tag.tag === 'earliest') return this.store.getBlockByNumber(0n);
    // Only a consensus client names the `safe` and `finalized` blocks (Besu keeps them from the engine
    // API's forkchoice), and Basalt has none: on QBFT too they name no block (spec §2.4: -39001).
    // No pending block is built: `pending` is the head.
    if (tag.tag === 'finalized' || tag.tag === 'safe') throw new RpcError(RpcErrors.UNKNOWN_BLOCK);
    return this.chain.getHeadBlock();
  }

  /**
   * Reads the state after the block a parameter names; null when there is no such block. `onTrie`:
   * the read needs the trie itself (proofs), not just the state.
   */
  async readState<T extends Json | bigint>(ref: BlockRef, read: (vm: VM) => Promise<T>, onTrie = false): Promise<T | null> {
    const block = await this.blockByRef(ref);
    if (!block) return null;
    return onTrie ? this.chain.withTrieStateAt(block.header.stateRoot, read) : this.chain.withStateAt(block.header.stateRoot, read);
  }

  /** The canonical block holding a transaction, and its index there. */
  async findTransaction(hash: Uint8Array): Promise<{ block: Block; index: number } | undefined> {
    const location = await this.store.getTxLocation(hash);
    if (!location) return undefined;
    const block = await this.store.getBlock(location.blockHash);
    if (!block || !block.transactions[location.index]) return undefined;
    return { block, index: location.index };
  }

  /**
   * The gas a simulation on `block` may use: `--rpc-gas-cap`, but never above the block gas limit, nor
   * (from Osaka) above EIP-7825's transaction gas limit cap.
   */
  gasCap(block: Block): bigint {
    return simulationGasCap(block, this.options.rpcGasCap);
  }
}

export class ChainRpc {
  readonly handlers: MethodHandlers<'chain'>;
  /** How block parameters resolve here: the state reader threads ask the chain (chain-actor.ts). */
  readonly blocks: ChainRpcContext;
  /** What transports that read in bulk (GraphQL) ask besides JSON-RPC methods. */
  readonly bulkReads: BulkReads;

  constructor(chain: Chain, options: ChainRpcOptions) {
    const context = new ChainRpcContext(chain, options);
    this.blocks = context;
    this.bulkReads = bulkReads(context);
    this.handlers = {
      ...stateHandlers(context),
      ...blockHandlers(context),
      ...feeHandlers(context),
      ...debugHandlers(context),
    };
  }
}
