/**
 * Executing a block from elsewhere (a peer's proposal, full sync, `blocks import`) and checking what
 * its header commits to: the state root, receipts root, logs bloom, gas used and EIP-7685 requests.
 *
 * This is ethereumjs' `runBlock` (with `skipHeaderValidation`, `skipBlockValidation`) for the blocks a
 * QBFT network makes, with the receipts root computed in one pass (ordered-trie.ts) as the block
 * builder does: runBlock puts each receipt into an `@ethereumjs/mpt` trie, re-hashing the path from
 * the root on every insertion — 0.5–0.8 s of a follower's chain thread for a block of 4,000 receipts.
 * A block under rules this path does not follow (proof-of-work rewards and ommers, the DAO fork
 * block, withdrawals, block access lists, binary trees, EIP-8037's two gas dimensions) goes through
 * runBlock (with the QBFT reward hooks) as before.
 */
import type { Block, HeaderData } from '@ethereumjs/block';
import { ConsensusType, Hardfork } from '@ethereumjs/common';
import { bytesToHex, equalsBytes } from '@ethereumjs/util';
import { Bloom, runTx } from '@ethereumjs/vm';
import type { RunTxOpts, RunTxResult, TxReceipt, VM } from '@ethereumjs/vm';
import type { ChainSpec } from '../shared/execution/chain-spec.js';
import { needsExecutionCoinbase, runBlockWithRewards } from '../shared/execution/qbft-block-rewards.js';
import { collectRequests, runPreTransactionSystemCalls } from '../shared/execution/system-calls.js';
import { encodeConsensusReceipt } from '../shared/ethereum/consensus-receipt.js';
import { orderedTrieRoot } from '../shared/ethereum/ordered-trie.js';
import { withFields } from '../shared/util/with-fields.js';
import { commonTransaction, runCommonTransaction } from './block-transaction.js';

export interface BlockExecution {
  /** Each transaction's consensus receipt (cumulative gas, and a state root before Byzantium). */
  receipts: TxReceipt[];
  results: RunTxResult[];
}

/**
 * One transaction of a block, run as runTx runs it: by the chain's own step for the common kinds
 * (block-transaction.ts), by runTx for the rest and for any the step hands back. The block keeps the
 * result until it is done (receipts, EIP-6110 deposits), without the state of the interpreter that
 * ran its outermost frame (`execResult.runState`: the interpreter, its stack and memory, the call's
 * environment), which nothing reads once the transaction has run. Kept, it held about 3 kB per transaction on the heap and
 * the frame's 1 kB of EVM memory until the block was sealed or imported: 31 MB of heap and 10 MB
 * outside it at the seal of a block of 10,000 ERC-20 transfers (built as `bench/block-building.ts`
 * builds it, the heap measured after a full collection).
 */
export async function runBlockTransaction(vm: VM, opts: RunTxOpts): Promise<RunTxResult> {
  const result = (commonTransaction(vm, opts) ? await runCommonTransaction(vm, opts) : undefined) ?? (await runTx(vm, opts));
  // Assigned rather than deleted: the result keeps its shape.
  result.execResult.runState = undefined;
  return result;
}

/** EIPs whose block-level rules only runBlock follows. */
const RUN_BLOCK_ONLY_EIPS = [7864, 7928, 8037];

/**
 * Runs `block` on `vm` from `parentStateRoot` and commits its writes to the VM's state, or reverts
 * them and throws when the block is invalid (the messages are runBlock's). The VM's hardfork is set
 * for the block.
 */
export async function executeBlock(vm: VM, spec: ChainSpec, block: Block, parentStateRoot: Uint8Array): Promise<BlockExecution> {
  const { header } = block;
  const common = vm.common;
  common.setHardforkBy({ blockNumber: header.number, timestamp: header.timestamp });
  if (!ownLoopSuffices(vm, block)) {
    return runBlockWithRewards(vm, spec, block, { root: parentStateRoot, skipHeaderValidation: true, skipBlockValidation: true, setHardfork: true });
  }
  await vm.stateManager.setStateRoot(parentStateRoot, true);
  // With a QBFT mining beneficiary, fees (and COINBASE) go to it rather than the header coinbase.
  const rules = spec.blockRewards;
  const beneficiary = needsExecutionCoinbase(rules, block);
  const envBlock = beneficiary ? spec.createBlock({ ...header.toJSON(), coinbase: beneficiary } as HeaderData, [], block.withdrawals) : block;

  await vm.evm.journal.checkpoint();
  try {
    await runPreTransactionSystemCalls(vm, {
      number: header.number,
      timestamp: header.timestamp,
      parentHash: header.parentHash,
      parentBeaconBlockRoot: header.parentBeaconBlockRoot ?? new Uint8Array(32),
    });
    const bloom = new Bloom(undefined, common);
    const receipts: TxReceipt[] = [];
    const results: RunTxResult[] = [];
    const encodedReceipts: Uint8Array[] = [];
    let gasUsed = 0n;
    // Receipts count gas after refunds; the header's gas used is the sum of what each transaction
    // charged the block (the same numbers unless EIP-7778 is active).
    let receiptGasUsed = 0n;
    for (const tx of block.transactions) {
      if (header.gasLimit < tx.gasLimit + gasUsed) throw new Error(errorMessage('tx has a higher gas limit than the block', vm, block));
      const result = await runBlockTransaction(vm, { tx, block: envBlock, blockGasUsed: receiptGasUsed });
      results.push(result);
      gasUsed += result.blockGasSpent;
      receiptGasUsed += result.totalGasSpent;
      bloom.or(result.bloom);
      receipts.push(result.receipt);
      encodedReceipts.push(encodeConsensusReceipt(consensusFields(result.receipt, tx.type)));
    }
    await rules?.finalizeBlockState(vm.stateManager, { number: header.number, timestamp: header.timestamp, coinbase: header.coinbase.bytes });
    // runBlock clears the touched accounts after crediting withdrawals (none here).
    if (common.isActivatedEIP(4895)) await vm.evm.journal.cleanup();
    const requestsHash = common.isActivatedEIP(7685) ? (await collectRequests(vm, results, header.gasLimit, false)).requestsHash : undefined;
    const stateRoot = await vm.stateManager.getStateRoot();

    if (requestsHash !== undefined && (header.requestsHash === undefined || !equalsBytes(header.requestsHash, requestsHash))) {
      throw new Error(errorMessage('invalid requestsHash', vm, block));
    }
    if (!equalsBytes(orderedTrieRoot(encodedReceipts), header.receiptTrie)) throw new Error(errorMessage('invalid receiptTrie', vm, block));
    if (!equalsBytes(bloom.bitvector, header.logsBloom)) throw new Error(errorMessage('invalid bloom', vm, block));
    if (gasUsed !== header.gasUsed) throw new Error(errorMessage('invalid gasUsed', vm, block));
    if (!equalsBytes(stateRoot, header.stateRoot)) {
      throw new Error(errorMessage(`invalid block stateRoot, got: ${bytesToHex(stateRoot)}, want: ${bytesToHex(header.stateRoot)}`, vm, block));
    }
    await vm.evm.journal.commit();
    return { receipts, results };
  } catch (err) {
    await vm.evm.journal.revert();
    throw err;
  }
}

/** Whether `block`, under the VM's hardfork for it, needs nothing at block level that only runBlock does. */
function ownLoopSuffices(vm: VM, block: Block): boolean {
  const common = vm.common;
  if (block.common.consensusType() === ConsensusType.ProofOfWork) return false;
  if (common.hardforkIsActiveOnBlock(Hardfork.Dao, block.header.number) && block.header.number === common.hardforkBlock(Hardfork.Dao)) return false;
  if ((block.withdrawals?.length ?? 0) > 0) return false;
  return !RUN_BLOCK_ONLY_EIPS.some((eip) => common.isActivatedEIP(eip));
}

function consensusFields(receipt: TxReceipt, txType: number) {
  const outcome = 'stateRoot' in receipt ? { root: receipt.stateRoot } : { status: receipt.status };
  return withFields(outcome, { cumulativeGasUsed: receipt.cumulativeBlockGasUsed, logsBloom: receipt.bitvector, logs: receipt.logs, txType });
}

/** runBlock's error text: the message, then the VM's hardfork and the block. */
function errorMessage(message: string, vm: VM, block: Block): string {
  return `${message} (${vm.errorStr()} -> ${block.errorStr()})`;
}
