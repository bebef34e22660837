/**
 * ethereumjs' `runTx` for the transactions blocks are made of, in fewer steps: a legacy, EIP-2930 or
 * EIP-1559 transaction from an account without code, valid in its block, under a fork without the
 * rules only the library follows (EIP-7702 authorizations, EIP-4844 blobs, EIP-7928 access lists,
 * EIP-8037 state gas, binary trees, proof-of-authority signers, receipts with a state root).
 *
 * runTx (`@ethereumjs/vm` 10, runTx.js) tests a dozen EIPs per transaction whatever its kind, works
 * out intrinsic gas twice, writes the sender twice (each write encodes the account), spreads its
 * result into an event nobody listens to and makes the logs bloom through three DataViews per
 * entry: 45–50 µs of a 230–280 µs ERC-20 transfer in `bench/block-building.ts`, outside the EVM
 * call. It is also the costliest function V8 compiles on a fresh node (180 ms of TurboFan time in a
 * first burst of 2,000 transfers). This does what runTx does for such a transaction, in its order,
 * with the same library calls for every gas rule (intrinsic gas, the EIP-7623 floor, the upfront cost,
 * the priority fee) and the same journal steps, so that state, receipts and results are runTx's.
 *
 * A transaction runTx would refuse is handed back before anything is written (`undefined`): its
 * caller runs runTx, which refuses it with its own message. Anything else goes to runTx as before.
 */
import { Hardfork } from '@ethereumjs/common';
import { Capability, TransactionType, getCalldataFloorGas } from '@ethereumjs/tx';
import type { FeeMarket1559Tx } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, equalsBytes, hexToBytes } from '@ethereumjs/util';
import type { EVMInterface, EVMResult } from '@ethereumjs/evm';
import { Bloom } from '@ethereumjs/vm';
import type { RunTxOpts, RunTxResult, TxReceipt, VM } from '@ethereumjs/vm';
import { chargedGas, warmTransactionAddresses } from '../shared/execution/transaction-steps.js';

/** EIPs under which runTx does more for a transaction than this repeats. */
const LIBRARY_ONLY_EIPS = [2780, 7708, 7778, 7864, 7928, 8037, 8246];

/** Fields of ethereumjs' EVM that runTx resets around a transaction (EIP-7928, EIP-8037 bookkeeping). */
type TransactionEvm = EVMInterface & { eip7928CallPostTargetOog?: boolean; createTxTargetAlive?: boolean; eip2780PrepOog?: boolean };

/** What `VM` keeps for runTx's profiler, not in its public type. */
type VmInternals = { _opts: { profilerOpts?: unknown } };

/**
 * Whether `opts` is a transaction this path runs as runTx would, judged without the state: what
 * depends on the state (nonce, balance, the sender's code) `runCommonTransaction` reads before it
 * writes anything.
 */
export function commonTransaction(vm: VM, opts: RunTxOpts): boolean {
  const { tx, block } = opts;
  if (block === undefined || vm.DEBUG || (vm as unknown as VmInternals)._opts.profilerOpts !== undefined) return false;
  if (opts.reportAccessList === true || opts.reportPreimages === true || opts.skipBalance === true || opts.skipNonce === true) return false;
  if (vm.events.listenerCount('beforeTx') > 0 || vm.events.listenerCount('afterTx') > 0) return false;
  const common = vm.common;
  if (common.consensusType() === 'poa' || !common.gteHardfork(Hardfork.Byzantium)) return false;
  for (const eip of LIBRARY_ONLY_EIPS) if (common.isActivatedEIP(eip)) return false;
  switch (tx.type) {
    case TransactionType.Legacy:
      return true;
    case TransactionType.AccessListEIP2930:
      return common.isActivatedEIP(2718) && common.isActivatedEIP(2930);
    case TransactionType.FeeMarketEIP1559:
      return common.isActivatedEIP(2718) && common.isActivatedEIP(2930) && common.isActivatedEIP(1559);
    default:
      return false;
  }
}

/**
 * runTx for a transaction `commonTransaction` accepted: the result runTx answers, or undefined, with
 * nothing written, when runTx would refuse the transaction (then runTx must run, to throw its error).
 */
export async function runCommonTransaction(vm: VM, opts: RunTxOpts): Promise<RunTxResult | undefined> {
  const { tx } = opts;
  const block = opts.block!;
  const { header } = block;
  const common = vm.common;
  const evm = vm.evm as TransactionEvm;
  const journal = evm.journal;
  const state = vm.stateManager;

  if (opts.skipHardForkValidation !== true) {
    if (tx.common.hardfork() !== block.common.hardfork()) tx.common.setHardfork(block.common.hardfork());
    if (block.common.hardfork() !== common.hardfork()) return undefined;
  }
  if (opts.skipBlockGasLimitValidation !== true && header.gasLimit < tx.gasLimit) return undefined;
  // As runTx starts: touched empty accounts removed (EIP-161), no warm addresses. Should runTx run
  // after all, its own clean-up finds nothing left to do.
  await journal.cleanup();

  // Validation, in runTx's order, before anything is written.
  if (tx.value < 0n) return undefined;
  const caller = tx.getSenderAddress();
  const intrinsicGas = tx.getIntrinsicGas();
  const floorCost = getCalldataFloorGas(tx, caller);
  if (tx.gasLimit < (intrinsicGas > floorCost ? intrinsicGas : floorCost)) return undefined;
  const london = common.isActivatedEIP(1559);
  const feeMarket = tx.supports(Capability.EIP1559FeeMarket);
  const baseFee = header.baseFeePerGas ?? 0n;
  if (london && (feeMarket ? (tx as FeeMarket1559Tx).maxFeePerGas : (tx as { gasPrice: bigint }).gasPrice) < baseFee) return undefined;
  const account = (await state.getAccount(caller)) ?? new Account();
  // A sender with code (EIP-3607, or delegated under EIP-7702): runTx's rules.
  if (!equalsBytes(account.codeHash, KECCAK256_NULL)) return undefined;
  if (account.balance < tx.getUpfrontCost(baseFee)) return undefined;
  const maxCost = feeMarket ? tx.value + tx.gasLimit * (tx as FeeMarket1559Tx).maxFeePerGas : tx.value;
  if (account.balance < maxCost || account.nonce !== tx.nonce) return undefined;

  await journal.checkpoint();
  try {
    warmTransactionAddresses(vm, tx, caller, header.coinbase);
    evm.eip7928CallPostTargetOog = false;

    let gasPrice: bigint;
    let inclusionFeePerGas: bigint | undefined;
    if (feeMarket) {
      inclusionFeePerGas = tx.getEffectivePriorityFee(baseFee);
      gasPrice = inclusionFeePerGas + baseFee;
    } else {
      gasPrice = (tx as { gasPrice: bigint }).gasPrice;
      if (london) inclusionFeePerGas = gasPrice - baseFee;
    }
    // The gas debit and the nonce in one write: runTx writes the account after each, the state the same.
    const txCost = tx.gasLimit * gasPrice;
    account.balance -= txCost;
    account.nonce += 1n;
    await journal.putAccount(caller, account);

    // runTx's inner checkpoint (EIP-7702 authorizations, none here), around the call.
    await journal.checkpoint();
    let results: EVMResult;
    try {
      results = await evm.runCall({ block, gasPrice, caller, gasLimit: tx.gasLimit - intrinsicGas, to: tx.to, value: tx.value, data: tx.data, skipNonceIncrement: true });
    } catch (err) {
      await journal.revert();
      throw err;
    }
    if (evm.eip2780PrepOog === true) await journal.revert();
    else await journal.commit();
    evm.eip7928CallPostTargetOog = false;
    evm.createTxTargetAlive = false;

    const outcome = results as RunTxResult;
    const { execResult } = outcome;
    // runTx's order of assignments, for the result's shape: the gas before the refund first.
    outcome.totalGasSpent = execResult.executionGasUsed + intrinsicGas;
    const { totalGasSpent, gasRefund } = chargedGas(vm, outcome.totalGasSpent, execResult.gasRefund ?? 0n, floorCost);
    outcome.gasRefund = gasRefund;
    outcome.totalGasSpent = totalGasSpent;
    outcome.blockGasSpent = totalGasSpent;
    const amountSpent = totalGasSpent * gasPrice;
    outcome.amountSpent = amountSpent;

    const sender = (await state.getAccount(caller)) ?? new Account();
    sender.balance += txCost - amountSpent;
    await journal.putAccount(caller, sender);

    const miner = header.coinbase;
    const minerAccount = (await state.getAccount(miner)) ?? new Account();
    outcome.minerValue = london ? totalGasSpent * inclusionFeePerGas! : amountSpent;
    minerAccount.balance += outcome.minerValue;
    await journal.putAccount(miner, minerAccount);

    if (execResult.selfdestruct !== undefined && execResult.selfdestruct.size > 0) await destroyAccounts(vm, execResult.selfdestruct, execResult.createdAddresses);

    const bloom = new Bloom(undefined, common);
    addLogsToBloom(bloom, execResult.logs);
    outcome.bloom = bloom;

    await journal.cleanup();
    state.originalStorageCache.clear();

    const receipt: TxReceipt = {
      status: execResult.exceptionError !== undefined ? 0 : 1,
      cumulativeBlockGasUsed: (opts.blockGasUsed ?? header.gasUsed) + totalGasSpent,
      bitvector: bloom.bitvector,
      logs: execResult.logs ?? [],
    };
    outcome.receipt = receipt;
    await journal.commit();
    return outcome;
  } catch (err) {
    await journal.revert();
    throw err;
  } finally {
    if (common.isActivatedEIP(2929)) journal.cleanJournal();
    evm.stateManager.originalStorageCache.clear();
  }
}

/** runTx's self-destructs (without EIP-7708's burn logs or EIP-8246, which this path leaves to it): in address order, under EIP-6780 only accounts created by the transaction. */
async function destroyAccounts(vm: VM, selfdestruct: ReadonlyMap<string, unknown>, created: ReadonlySet<string> | undefined): Promise<void> {
  const eip6780 = vm.common.isActivatedEIP(6780);
  for (const addressHex of [...selfdestruct.keys()].sort((a, b) => a.localeCompare(b))) {
    const address = new Address(hexToBytes(addressHex as `0x${string}`));
    if (eip6780 && !created?.has(address.toString())) continue;
    await vm.evm.journal.deleteAccount(address);
  }
}

/**
 * The logs' addresses and topics into `bloom`, as `Bloom.add` sets them: three bits per entry, each
 * from 11 bits of a big-endian pair of the entry's hash. Bloom.add reads the pairs through a DataView
 * over the hash's buffer from its start (three DataViews per entry); read from the bytes here, the
 * same when the hash starts its buffer, as the keccak in use answers. Otherwise Bloom.add does it.
 */
export function addLogsToBloom(bloom: Bloom, logs: readonly (readonly [Uint8Array, readonly Uint8Array[], Uint8Array])[] | undefined): void {
  if (logs === undefined) return;
  for (const [address, topics] of logs) {
    addToBloom(bloom, address);
    for (const topic of topics) addToBloom(bloom, topic);
  }
}

function addToBloom(bloom: Bloom, entry: Uint8Array): void {
  const hash = bloom.keccakFunction(entry);
  if (hash.byteOffset !== 0) {
    bloom.add(entry);
    return;
  }
  const bits = bloom.bitvector;
  for (let i = 0; i < 6; i += 2) {
    const location = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
    const index = 255 - (location >> 3);
    bits[index] = bits[index]! | (1 << (location & 7));
  }
}
