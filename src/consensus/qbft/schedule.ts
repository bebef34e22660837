/**
 * QBFT settings per block: the genesis `config.qbft` section overlaid by `config.transitions.qbft`
 * (qbft-and-p2p.md §8, §9.1).
 *
 * Transitions are cumulative: each starts from the settings in force before it and overrides only
 * the keys it names; a blank `miningbeneficiary` reverts to "pay the coinbase". The settings of
 * block h are those of the last transition with `block <= h`. A transition's `validators` list is not
 * a lasting setting: it replaces the validator set once, for the block it names.
 *
 * Besu ≥ 26.3 reads a transition `block` at or above the first timestamp-scheduled fork as a
 * timestamp; Basalt reads transition blocks as block numbers only.
 */
import type { Genesis, QbftConfig, QbftTransition } from '../../chain/genesis.js';
import { compareAddresses } from './seal.js';

export type ValidatorSelectionMode = 'blockheader' | 'contract';

/** The settings that may change from block to block. */
export interface QbftBlockSettings {
  blockPeriodSeconds: number;
  /** Experimental sub-second period; 0 = not used. */
  blockPeriodMilliseconds: number;
  /** Experimental empty-block period; 0 = disabled. */
  emptyBlockPeriodSeconds: number;
  /** Wei credited to the mining beneficiary of each block. */
  blockReward: bigint;
  /** Who is paid fees and reward; undefined = the block's coinbase. */
  miningBeneficiary?: Uint8Array;
  validatorSelectionMode: ValidatorSelectionMode;
  validatorContractAddress?: Uint8Array;
}

/** Settings fixed for the life of the chain (they cannot change in transitions). */
export interface QbftFixedSettings {
  epochLength: bigint;
  requestTimeoutSeconds: number;
  duplicateMessageLimit: number;
  futureMessagesLimit: number;
  futureMessagesMaxDistance: number;
  gossipedHistoryLimit: number;
  messageQueueLimit: number;
}

interface Entry {
  fromBlock: bigint;
  settings: QbftBlockSettings;
  /** The transition's validator override, sorted, if it has one. */
  validators?: Uint8Array[];
}

export class QbftSchedule {
  private readonly entries: Entry[];
  readonly fixed: QbftFixedSettings;

  constructor(config: QbftConfig, transitions: readonly QbftTransition[]) {
    this.fixed = {
      epochLength: BigInt(config.epochLength),
      requestTimeoutSeconds: config.requestTimeoutSeconds,
      duplicateMessageLimit: config.duplicateMessageLimit,
      futureMessagesLimit: config.futureMessagesLimit,
      futureMessagesMaxDistance: config.futureMessagesMaxDistance,
      gossipedHistoryLimit: config.gossipedHistoryLimit,
      messageQueueLimit: config.messageQueueLimit,
    };
    const genesisSettings: QbftBlockSettings = {
      blockPeriodSeconds: config.blockPeriodSeconds,
      blockPeriodMilliseconds: config.blockPeriodMilliseconds,
      emptyBlockPeriodSeconds: config.emptyBlockPeriodSeconds,
      blockReward: config.blockReward,
      validatorSelectionMode: config.validatorContractAddress ? 'contract' : 'blockheader',
    };
    if (config.miningBeneficiary) genesisSettings.miningBeneficiary = config.miningBeneficiary;
    if (config.validatorContractAddress) genesisSettings.validatorContractAddress = config.validatorContractAddress;
    this.entries = [{ fromBlock: 0n, settings: genesisSettings }];

    const sorted = [...transitions].sort((a, b) => (a.block < b.block ? -1 : a.block > b.block ? 1 : 0));
    for (const transition of sorted) {
      const previous = this.entries[this.entries.length - 1]!.settings;
      const settings: QbftBlockSettings = { ...previous };
      if (transition.blockPeriodSeconds !== undefined) settings.blockPeriodSeconds = transition.blockPeriodSeconds;
      if (transition.blockPeriodMilliseconds !== undefined) settings.blockPeriodMilliseconds = transition.blockPeriodMilliseconds;
      if (transition.emptyBlockPeriodSeconds !== undefined) settings.emptyBlockPeriodSeconds = transition.emptyBlockPeriodSeconds;
      if (transition.blockReward !== undefined) settings.blockReward = transition.blockReward;
      if (transition.miningBeneficiary === null) delete settings.miningBeneficiary;
      else if (transition.miningBeneficiary !== undefined) settings.miningBeneficiary = transition.miningBeneficiary;
      if (transition.validatorSelectionMode !== undefined) settings.validatorSelectionMode = transition.validatorSelectionMode;
      if (transition.validatorContractAddress !== undefined) settings.validatorContractAddress = transition.validatorContractAddress;
      if (settings.validatorSelectionMode === 'contract' && settings.validatorContractAddress === undefined) {
        throw new Error(`QBFT transition at block ${transition.block}: contract validator mode needs validatorcontractaddress`);
      }
      const entry: Entry = { fromBlock: transition.block, settings };
      if (transition.validators !== undefined) entry.validators = [...transition.validators].sort(compareAddresses);
      if (settings.validatorSelectionMode === 'blockheader' && previous.validatorSelectionMode === 'contract' && !entry.validators) {
        throw new Error(`QBFT transition at block ${transition.block}: switching to blockheader mode needs a validators list`);
      }
      this.entries.push(entry);
    }
  }

  static fromGenesis(genesis: Genesis): QbftSchedule {
    if (!genesis.qbft) throw new Error('the genesis has no qbft section');
    return new QbftSchedule(genesis.qbft, genesis.qbftTransitions);
  }

  private entryFor(block: bigint): Entry {
    for (let i = this.entries.length - 1; i > 0; i--) {
      if (this.entries[i]!.fromBlock <= block) return this.entries[i]!;
    }
    return this.entries[0]!;
  }

  settingsFor(block: bigint): QbftBlockSettings {
    return this.entryFor(block).settings;
  }

  /** The validator set a transition imposes on exactly block `block` (sorted), if one does. */
  validatorOverrideAt(block: bigint): Uint8Array[] | undefined {
    const entry = this.entryFor(block);
    return entry.fromBlock === block ? entry.validators : undefined;
  }

  /** Blocks at which a transition imposes a validator set, ascending. */
  overrideBlocks(): bigint[] {
    return this.entries.filter((e) => e.validators !== undefined).map((e) => e.fromBlock);
  }

  /** Whether some block pays a reward or pays someone other than its coinbase. */
  paysRewardsOrBeneficiary(): boolean {
    return this.entries.some((e) => e.settings.blockReward > 0n || e.settings.miningBeneficiary !== undefined);
  }

  /** Where a block's fees and reward go. */
  beneficiaryFor(block: bigint, coinbase: Uint8Array): Uint8Array {
    return this.settingsFor(block).miningBeneficiary ?? coinbase;
  }

  /**
   * The block-timer period for block h (§5.1). Transitions are by block number here, so the
   * "longer of the two periods" rule of time-based transitions reduces to the period of block h.
   */
  blockPeriodFor(block: bigint): number {
    return this.settingsFor(block).blockPeriodSeconds;
  }
}
