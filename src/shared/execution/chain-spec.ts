import type { Block, BlockHeader, HeaderData } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import type { TypedTransaction } from '@ethereumjs/tx';
import type { Withdrawal } from '@ethereumjs/util';
import type { BlockRewardRules } from './qbft-block-rewards.js';
import type { MergeTransition } from '../ethereum/merge-transition.js';

/**
 * What the chain needs to know about the network it runs, independent of how blocks are sealed:
 * the EVM rules, the genesis, and how to make and decode blocks (a QBFT block hashes differently from
 * an ethash one). The chain owns storage and execution; the spec owns these rules.
 */
export interface ChainSpec {
  /** EVM rules; the chain sets its hardfork per block. */
  readonly common: Common;
  readonly chainId: bigint;
  readonly networkId: bigint;
  /**
   * The genesis block period in seconds (QBFT `blockperiodseconds`, else 1): how far ahead the chain
   * places the next block when it tells the pool that block's fork (`HeadInfo.nextHardfork`).
   */
  readonly blockPeriodSeconds: bigint;
  /** Writes the genesis alloc (balances, nonces, code, storage) into an empty state. */
  writeGenesisState(stateManager: MerkleStateManager): Promise<void>;
  /** The genesis block for the state root the alloc produced. */
  genesisBlock(stateRoot: Uint8Array): Block;
  /** A block from its RLP encoding, as stored or received. */
  decodeBlock(rlp: Uint8Array): Block;
  /** The header of a block from the block's RLP encoding, its transactions left undecoded. */
  decodeHeaderOfBlock(rlp: Uint8Array): BlockHeader;
  /** A new block from header fields and a body (the chain fills roots; the caller sealing rules). */
  createBlock(header: HeaderData, transactions: TypedTransaction[], withdrawals?: Withdrawal[]): Block;
  /**
   * Consensus payments on top of the EVM (QBFT `blockreward` / `miningbeneficiary`, see
   * src/consensus/qbft/block-rewards.ts); absent when blocks pay nothing beyond fees to the coinbase.
   */
  readonly blockRewards?: BlockRewardRules;
  /**
   * The merge by terminal total difficulty, for an ethash chain whose genesis sets one: the chain
   * reports its heads to it, and it switches `common` to Paris after the terminal block.
   */
  readonly merge?: MergeTransition;
}
