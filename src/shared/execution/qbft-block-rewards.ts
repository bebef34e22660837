/**
 * QBFT block rewards and mining beneficiary (qbft-and-p2p.md §8), as hooks the chain applies when it
 * builds and when it imports a block.
 *
 * ethereumjs runs a QBFT chain with proof-of-stake rules, which pay no block reward and pay priority
 * fees to the header coinbase. Besu instead pays fees and `blockreward` to the block's mining
 * beneficiary (`miningbeneficiary` when configured for that block, else the coinbase), crediting the
 * reward after all transactions and not touching the account at all when the reward is zero. The
 * chain therefore executes a block with the beneficiary in the coinbase position of the execution
 * environment (so fees — and the COINBASE opcode, as in Besu's frames — go to it) and calls
 * `finalizeBlockState` after the last transaction.
 */
import type { Block, HeaderData } from '@ethereumjs/block';
import type { StateManagerInterface } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, Address } from '@ethereumjs/util';
import type { Withdrawal } from '@ethereumjs/util';
import { runBlock } from '@ethereumjs/vm';
import type { RunBlockOpts, RunBlockResult, VM } from '@ethereumjs/vm';

import { bytesEqual } from '../qbft/header-rules.js';
import type { QbftSchedule } from '../qbft/schedule.js';

export interface BlockRewardRules {
  /** Who is paid the fees of the block (and reads as COINBASE) given its number, timestamp and header coinbase. */
  executionCoinbase(number: bigint, timestamp: bigint, coinbase: Uint8Array): Uint8Array;
  /** Credits the block reward after the block's transactions; does nothing when it is zero. */
  finalizeBlockState(stateManager: StateManagerInterface, header: { number: bigint; timestamp: bigint; coinbase: Uint8Array }): Promise<void>;
}

/** The reward rules of a QBFT schedule, or undefined when no block of the chain pays anyone but the coinbase. */
export function qbftBlockRewardRules(schedule: QbftSchedule): BlockRewardRules | undefined {
  if (!schedule.paysRewardsOrBeneficiary()) return undefined;
  return {
    executionCoinbase: (number, timestamp, coinbase) => schedule.beneficiaryFor({ number, timestamp }, coinbase),
    async finalizeBlockState(stateManager, header) {
      const reward = schedule.settingsFor(header.number, header.timestamp).blockReward;
      if (reward === 0n) return;
      const address = new Address(schedule.beneficiaryFor(header, header.coinbase));
      const account = (await stateManager.getAccount(address)) ?? new Account();
      account.balance += reward;
      await stateManager.putAccount(address, account);
    },
  };
}

/** Whether executing `block` needs another coinbase than its header's. */
export function needsExecutionCoinbase(rules: BlockRewardRules | undefined, block: Block): Uint8Array | undefined {
  if (!rules) return undefined;
  const coinbase = block.header.coinbase.bytes;
  const beneficiary = rules.executionCoinbase(block.header.number, block.header.timestamp, coinbase);
  return bytesEqual(beneficiary, coinbase) ? undefined : beneficiary;
}

/**
 * `runBlock(vm, opts)` with `finalize` applied right after the block's last transaction. runBlock
 * compares the state root only after that, so a reward-paying block imports with the root its
 * proposer computed. An empty block is credited before execution instead, on the state runBlock
 * would start from: nothing in an empty block reads the beneficiary, so the state is the same.
 */
export async function runWithFinalization(
  vm: VM,
  opts: RunBlockOpts,
  finalize: (stateManager: StateManagerInterface) => Promise<void>,
): Promise<RunBlockResult> {
  const total = opts.block.transactions.length;
  if (total === 0) {
    if (opts.root) await vm.stateManager.setStateRoot(opts.root, opts.clearCache ?? true);
    await finalize(vm.stateManager);
    // Writes cached outside runBlock's checkpoint do not survive it: flush them into the trie first.
    await vm.stateManager.getStateRoot();
    const { root: _root, ...rest } = opts;
    return runBlock(vm, rest);
  }
  let executed = 0;
  let failure: unknown;
  const afterTx = (_event: unknown, resolve?: () => void): void => {
    executed += 1;
    if (executed < total) return resolve?.();
    finalize(vm.stateManager).then(resolve, (err: unknown) => {
      failure = err;
      resolve?.();
    });
  };
  vm.events.on('afterTx', afterTx);
  try {
    const result = await runBlock(vm, opts);
    if (failure !== undefined) throw failure;
    return result;
  } finally {
    vm.events.off('afterTx', afterTx);
  }
}

/** What runBlockWithRewards needs from the chain's spec. */
export interface RewardingSpec {
  readonly blockRewards?: BlockRewardRules;
  createBlock(header: HeaderData, transactions: TypedTransaction[], withdrawals?: Withdrawal[]): Block;
}

/**
 * `runBlock` of a block from elsewhere under the spec's reward rules: executed with the mining
 * beneficiary as coinbase, the block reward credited after the last transaction. Without reward
 * rules it is plain `runBlock`.
 */
export async function runBlockWithRewards(vm: VM, spec: RewardingSpec, block: Block, opts: Omit<RunBlockOpts, 'block'>): Promise<RunBlockResult> {
  const rules = spec.blockRewards;
  if (!rules) return runBlock(vm, { ...opts, block });
  const beneficiary = needsExecutionCoinbase(rules, block);
  const executed = beneficiary
    ? spec.createBlock({ ...block.header.toJSON(), coinbase: beneficiary } as HeaderData, [...block.transactions], block.withdrawals)
    : block;
  const header = { number: block.header.number, timestamp: block.header.timestamp, coinbase: block.header.coinbase.bytes };
  return runWithFinalization(vm, { ...opts, block: executed }, (stateManager) => rules.finalizeBlockState(stateManager, header));
}
