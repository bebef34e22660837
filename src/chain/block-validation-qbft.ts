/**
 * The consensus check of a sealed QBFT block from outside the consensus (a `blocks import` file, and
 * later full sync): the complete QBFT header rule set with the commit seals (qbft-and-p2p.md §1,
 * §2.6, §10), against the validator set at the block's height as the chain itself records it — the
 * block-header vote tally or the validator contract on the parent's state (§3.3, §7).
 */
import type { Block } from '@ethereumjs/block';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import type { Chain } from './chain.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { errorMessage } from '../shared/util/errors.js';
import { bytesToHex, equalsBytes } from '@ethereumjs/util';
import { callOnBlockState, headerSummary } from './qbft-queries.js';
import { QbftBlock } from '../shared/qbft/block.js';
import { checkHeaderRules } from '../shared/qbft/header-rules.js';
import { QbftSchedule } from '../shared/qbft/schedule.js';
import { ValidatorTracker } from '../shared/qbft/validators.js';

/** Why a sealed block breaks its consensus rules against `parent`, or undefined when it keeps them. */
export type SealedBlockCheck = (block: Block, parent: Block) => Promise<string | undefined>;

/**
 * The QBFT check of `chain`'s blocks, for a chain whose genesis has `config.qbft`. Blocks must be
 * checked parent first: validators(h) is read from the blocks up to h-1 on the branch the block
 * extends, the canonical chain or a side branch during a re-org.
 */
export function qbftSealedBlockCheck(chain: Chain, genesis: Genesis, now: () => number = Date.now): SealedBlockCheck {
  const schedule = QbftSchedule.fromGenesis(genesis);
  /** The branch the tracker reads: it ends at the parent of the last block checked. */
  const branch = { tip: undefined as Uint8Array | undefined, tipNumber: 0n };
  const tipHash = () => branch.tip ?? chain.getHead().hash;
  const tracker = new ValidatorTracker(schedule, {
    headers: async (from, to) => (await chain.store.branchBlocks(tipHash(), from, to)).map(headerSummary),
    callContract: async (blockNumber, contract, data) => {
      const [block] = await chain.store.branchBlocks(tipHash(), blockNumber, blockNumber);
      if (!block) throw new Error(`block ${blockNumber} is not on the branch of ${bytesToHex(tipHash())}`);
      return callOnBlockState(chain, block, contract, data);
    },
  });
  /** Moves the tracker to the branch of `parent`; tallies it cached above where the branches part are forgotten. */
  const followBranchOf = async (parent: Block): Promise<void> => {
    const parentHash = parent.hash();
    if (branch.tip !== undefined && !equalsBytes(parentHash, branch.tip)) {
      const [onBranch] = await chain.store.branchBlocks(parentHash, branch.tipNumber, branch.tipNumber);
      if (!onBranch || !equalsBytes(onBranch.hash(), branch.tip)) {
        const [left, right] = await Promise.all([chain.store.canonicalAncestorNumber(parentHash), chain.store.canonicalAncestorNumber(branch.tip)]);
        tracker.forgetAbove(left < right ? left : right);
      }
    }
    branch.tip = parentHash;
    branch.tipNumber = parent.header.number;
  };
  return async (block, parent) => {
    let qbft: QbftBlock;
    try {
      qbft = QbftBlock.fromValues(block.raw() as NestedUint8Array);
    } catch (err) {
      return `not a QBFT block: ${errorMessage(err)}`;
    }
    let validators: Uint8Array[];
    try {
      await followBranchOf(parent);
      validators = await tracker.validatorsFor(qbft.number, qbft.timestamp);
    } catch (err) {
      return `the validators of block ${qbft.number} cannot be determined: ${errorMessage(err)}`;
    }
    const settings = schedule.settingsFor(qbft.number, qbft.timestamp);
    const broken = checkHeaderRules(
      qbft,
      {
        parent: { number: parent.header.number, hash: parent.hash(), timestamp: parent.header.timestamp, gasLimit: parent.header.gasLimit },
        validators,
        mode: settings.validatorSelectionMode,
        blockPeriodSeconds: settings.blockPeriodSeconds,
        blockPeriodMilliseconds: settings.blockPeriodMilliseconds,
        nowMs: now(),
        ...(schedule.londonBlock === undefined ? {} : { londonBlock: schedule.londonBlock }),
      },
      true,
    );
    return broken === undefined ? undefined : `invalid QBFT header: ${broken}`;
  };
}
