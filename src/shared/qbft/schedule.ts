/**
 * QBFT settings per block: the genesis `config.qbft` section overlaid by `config.transitions.qbft`
 * (qbft-and-p2p.md §8, §9.1).
 *
 * Transitions are cumulative: each starts from the settings in force before it and overrides only
 * the keys it names; a blank `miningbeneficiary` reverts to "pay the coinbase". The settings of
 * block h are those of the last transition with `block <= h`. A transition's `validators` list is not
 * a lasting setting: it replaces the validator set once, for the block it names.
 *
 * Timestamp-typed transitions (Besu ≥ 26.3, §8 last bullet): on a chain with timestamp-scheduled EVM
 * forks, a transition whose `block` is at or above the first such fork's timestamp is compared with
 * block timestamps instead. Basalt never lets that threshold fall below the genesis timestamp: a
 * timestamp below it would be in force from genesis on, so such small values stay block numbers
 * (with `shanghaiTime: 0` and a genesis timestamp of 0 every transition is a block number). That is
 * why lookups take the block's number and timestamp.
 */
import type { Genesis, QbftConfig, QbftTransition } from '../ethereum/genesis.js';
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

/** The EVM fork facts of the genesis the schedule needs. */
export interface ScheduleForks {
  /** `londonBlock` when London activates after genesis (the gas-limit doubling block). */
  londonBlock?: bigint;
  /** Activation timestamps of timestamp-scheduled forks (`shanghaiTime`...), as configured. */
  forkTimestamps?: readonly bigint[];
  /** Genesis block timestamp. */
  genesisTimestamp?: bigint;
}

/** A block being asked about: its number and timestamp (timestamp-typed transitions need both). */
export interface BlockPosition {
  number: bigint;
  timestamp: bigint;
}

interface Entry {
  /** The transition's `block` value: a block number, or a timestamp when `byTimestamp`. */
  fromBlock: bigint;
  byTimestamp: boolean;
  settings: QbftBlockSettings;
  /** The transition's validator override, sorted, if it has one. */
  validators?: Uint8Array[];
}

export class QbftSchedule {
  private readonly entries: Entry[];
  readonly fixed: QbftFixedSettings;
  /** London activation block when it is after genesis; the QBFT gas-limit rule doubles there. */
  readonly londonBlock: bigint | undefined;
  /** Transition `block` values at or above this are timestamps; undefined = all are block numbers. */
  readonly timestampThreshold: bigint | undefined;

  constructor(config: QbftConfig, transitions: readonly QbftTransition[], forks: ScheduleForks = {}) {
    this.londonBlock = forks.londonBlock !== undefined && forks.londonBlock > 0n ? forks.londonBlock : undefined;
    this.timestampThreshold = timestampThreshold(forks);
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
    this.entries = [{ fromBlock: 0n, byTimestamp: false, settings: genesisSettings }];

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
      const byTimestamp = this.timestampThreshold !== undefined && transition.block >= this.timestampThreshold;
      const entry: Entry = { fromBlock: transition.block, byTimestamp, settings };
      if (transition.validators !== undefined) {
        // The set a validators override replaces is the tally after the block before the first block
        // past the timestamp, which the tally walk (validators.ts) cannot see by number alone.
        if (byTimestamp) throw new Error(`QBFT transition at timestamp ${transition.block}: a validators override needs a block-number transition`);
        entry.validators = [...transition.validators].sort(compareAddresses);
      }
      if (settings.validatorSelectionMode === 'blockheader' && previous.validatorSelectionMode === 'contract' && !entry.validators) {
        throw new Error(`QBFT transition at block ${transition.block}: switching to blockheader mode needs a validators list`);
      }
      this.entries.push(entry);
    }
  }

  static fromGenesis(genesis: Genesis): QbftSchedule {
    if (!genesis.qbft) throw new Error('the genesis has no qbft section');
    const london = genesis.config.forks.find((f) => f.fork === 'london');
    const forks: ScheduleForks = {
      forkTimestamps: genesis.config.forks.flatMap((f) => (f.timestamp === undefined ? [] : [f.timestamp])),
      genesisTimestamp: genesis.header.timestamp,
    };
    if (london?.block !== undefined) forks.londonBlock = london.block;
    return new QbftSchedule(genesis.qbft, genesis.qbftTransitions, forks);
  }

  /** Whether some transition is compared with block timestamps. */
  get hasTimestampTransitions(): boolean {
    return this.entries.some((e) => e.byTimestamp);
  }

  private entryFor(block: bigint, timestamp: bigint | undefined): Entry {
    for (let i = this.entries.length - 1; i > 0; i--) {
      const entry = this.entries[i]!;
      if (entry.byTimestamp) {
        if (timestamp === undefined) throw new Error(`QBFT settings of block ${block}: the schedule has timestamp transitions, the block's timestamp is needed`);
        if (entry.fromBlock <= timestamp) return entry;
      } else if (entry.fromBlock <= block) {
        return entry;
      }
    }
    return this.entries[0]!;
  }

  /**
   * The settings of the block with this number and timestamp. The timestamp may be left out only on
   * a chain without timestamp transitions (it throws otherwise).
   */
  settingsFor(block: bigint, timestamp?: bigint): QbftBlockSettings {
    return this.entryFor(block, timestamp).settings;
  }

  /** The validator set a transition imposes on exactly block `block` (sorted), if one does. */
  validatorOverrideAt(block: bigint): Uint8Array[] | undefined {
    // Overrides are only allowed in block-number transitions (see the constructor).
    for (let i = this.entries.length - 1; i > 0; i--) {
      const entry = this.entries[i]!;
      if (!entry.byTimestamp && entry.fromBlock <= block) return entry.fromBlock === block ? entry.validators : undefined;
    }
    return undefined;
  }

  /** Blocks at which a transition imposes a validator set, ascending. */
  overrideBlocks(): bigint[] {
    return this.entries.filter((e) => e.validators !== undefined).map((e) => e.fromBlock);
  }

  /** Whether some block pays a reward or pays someone other than its coinbase. */
  paysRewardsOrBeneficiary(): boolean {
    return this.entries.some((e) => e.settings.blockReward > 0n || e.settings.miningBeneficiary !== undefined);
  }

  /** Where the fees and reward of the block with this number and timestamp go. */
  beneficiaryFor(block: BlockPosition, coinbase: Uint8Array): Uint8Array {
    return this.settingsFor(block.number, block.timestamp).miningBeneficiary ?? coinbase;
  }

  /**
   * The block-timer period of the block after `parent` (§5.1): the period in force at the parent's
   * timestamp, or the one in force a period later if that is longer (a timestamp transition about
   * to lengthen the period is honoured before the block that crosses it).
   */
  blockPeriodAfter(parent: BlockPosition): number {
    const height = parent.number + 1n;
    const atParent = this.settingsFor(height, parent.timestamp).blockPeriodSeconds;
    const aPeriodLater = this.settingsFor(height, parent.timestamp + BigInt(atParent)).blockPeriodSeconds;
    return Math.max(atParent, aPeriodLater);
  }

  /**
   * The settings of the block after `parent`, before it exists: those in force at the earliest
   * timestamp it may carry (parent + the block-timer period), with that period as its period.
   */
  settingsAfter(parent: BlockPosition): QbftBlockSettings {
    const period = this.blockPeriodAfter(parent);
    const settings = this.settingsFor(parent.number + 1n, parent.timestamp + BigInt(period));
    return settings.blockPeriodSeconds === period ? settings : { ...settings, blockPeriodSeconds: period };
  }
}

/** See the file comment: the first fork timestamp, never below the genesis timestamp, never 0. */
function timestampThreshold(forks: ScheduleForks): bigint | undefined {
  const timestamps = forks.forkTimestamps ?? [];
  if (timestamps.length === 0) return undefined;
  const first = timestamps.reduce((a, b) => (a < b ? a : b));
  const genesis = forks.genesisTimestamp ?? 0n;
  const threshold = first > genesis ? first : genesis;
  return threshold > 0n ? threshold : undefined;
}
