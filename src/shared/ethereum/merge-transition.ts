/**
 * The merge by terminal total difficulty (EIP-3675, Besu's transition protocol schedule): a block
 * whose parent's total difficulty has reached `terminalTotalDifficulty` is a proof-of-stake block
 * and runs Paris rules (no block or ommer rewards, difficulty 0, PREVRANDAO from the mix hash), and
 * so is every block after it. The last proof-of-work block is the terminal block.
 *
 * ethereumjs' Common switches hardforks by block number or timestamp only. So a genesis with a
 * positive TTD gets a Paris entry without a block (unscheduled: see hardforkSchedule in common.ts),
 * and once the chain knows which block follows the terminal block, Paris is scheduled at that
 * number. Copies of a Common share its chain parameters, so scheduling it on the spec's Common
 * reaches every copy: the VMs' and every block decoded from then on.
 *
 * Nothing is stored for it: total difficulties are (storage-schema.ts, prefix `d`), and after a
 * restart the terminal block is found again from them.
 */
import type { Common } from '@ethereumjs/common';
import type { Genesis } from './genesis.js';

/**
 * The TTD of a chain that merges by total difficulty: an ethash-era chain whose genesis sets a
 * positive one. (TTD 0 means proof-of-stake from genesis, a fixed schedule; QBFT chains ignore it.)
 */
export function mergeTotalDifficulty(genesis: Genesis): bigint | undefined {
  const ttd = genesis.config.terminalTotalDifficulty;
  return genesis.consensus !== 'qbft' && ttd !== undefined && ttd > 0n ? ttd : undefined;
}

export class MergeTransition {
  private firstPosBlock: bigint | undefined;

  constructor(
    readonly terminalTotalDifficulty: bigint,
    /** The Common whose (shared) hardfork list carries the unscheduled Paris entry. */
    private readonly common: Common,
  ) {}

  /** The number of the first proof-of-stake block, once the chain has reached the TTD. */
  get mergeBlock(): bigint | undefined {
    return this.firstPosBlock;
  }

  /** Whether a block whose parent has `parentTotalDifficulty` must be a proof-of-stake block. */
  isPostMerge(parentTotalDifficulty: bigint): boolean {
    return parentTotalDifficulty >= this.terminalTotalDifficulty;
  }

  /** A new canonical head: the first one whose total difficulty reaches the TTD is the terminal block. */
  observeHead(number: bigint, totalDifficulty: bigint): void {
    if (this.firstPosBlock !== undefined || !this.isPostMerge(totalDifficulty)) return;
    this.schedule(number + 1n);
  }

  /**
   * At start, with the stored head: finds the terminal block as the first canonical block whose
   * total difficulty reaches the TTD (total difficulty never decreases along a chain).
   */
  async restore(headNumber: bigint, headTotalDifficulty: bigint, totalDifficultyAt: (number: bigint) => Promise<bigint>): Promise<void> {
    if (this.firstPosBlock !== undefined || !this.isPostMerge(headTotalDifficulty)) return;
    let low = 0n;
    let high = headNumber; // TD(high) reaches the TTD; every block below `low` does not.
    while (low < high) {
      const middle = (low + high) / 2n;
      if (this.isPostMerge(await totalDifficultyAt(middle))) high = middle;
      else low = middle + 1n;
    }
    this.schedule(low + 1n);
  }

  private schedule(firstPosBlock: bigint): void {
    const paris = this.common.hardforks().find((hf) => hf.name === 'paris');
    if (paris === undefined || paris.block !== null || paris.timestamp !== undefined) {
      throw new Error('the fork schedule has no unscheduled Paris entry to activate at the terminal total difficulty');
    }
    paris.block = Number(firstPosBlock);
    this.firstPosBlock = firstPosBlock;
  }
}
