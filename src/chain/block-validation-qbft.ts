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
import { callOnState, headerSummaries } from './qbft-queries.js';
import { QbftBlock } from '../shared/qbft/block.js';
import { checkHeaderRules } from '../shared/qbft/header-rules.js';
import { QbftSchedule } from '../shared/qbft/schedule.js';
import { ValidatorTracker } from '../shared/qbft/validators.js';

/** Why a sealed block breaks its consensus rules against `parent`, or undefined when it keeps them. */
export type SealedBlockCheck = (block: Block, parent: Block) => Promise<string | undefined>;

/**
 * The QBFT check of `chain`'s blocks, for a chain whose genesis has `config.qbft`. Blocks must be
 * checked in chain order, each on top of the chain's head: validators(h) is read from blocks up to h-1.
 */
export function qbftSealedBlockCheck(chain: Chain, genesis: Genesis, now: () => number = Date.now): SealedBlockCheck {
  const schedule = QbftSchedule.fromGenesis(genesis);
  const tracker = new ValidatorTracker(schedule, {
    headers: (from, to) => headerSummaries(chain, from, to),
    callContract: (blockNumber, contract, data) => callOnState(chain, blockNumber, contract, data),
  });
  return async (block, parent) => {
    let qbft: QbftBlock;
    try {
      qbft = QbftBlock.fromValues(block.raw() as NestedUint8Array);
    } catch (err) {
      return `not a QBFT block: ${errorMessage(err)}`;
    }
    let validators: Uint8Array[];
    try {
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
