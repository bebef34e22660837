/**
 * The call simulator behind eth_call, eth_estimateGas and eth_createAccessList: runs a call on the
 * state after a block and reverts everything it did, with Besu's checks and error texts.
 */
import type { Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { TransactionType, createAccessList2930Tx, createBlob4844Tx, createFeeMarket1559Tx, createLegacyTx, getCalldataFloorGas, isBlob4844Tx } from '@ethereumjs/tx';
import { Account, Address, KECCAK256_NULL, bigIntToHex, bytesToHex, equalsBytes, hexToBytes } from '@ethereumjs/util';
import { runTx } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import type { AccountOverride, CallRequest } from '../rpc/params.js';
import type { SimulationResult } from '../actors/messages.js';
import { RpcError, RpcErrors } from '../rpc/errors.js';
import type { Json } from '../rpc/types.js';
import { txCommonFor } from '../ethereum/tx-common.js';
import type { StateAtBlock } from './state-views.js';
import { StructLogCollector, reanchorAfterPreByzantium, withStepListener } from './struct-log-tracer.js';
import type { TraceOptions } from '../rpc/methods/param-shapes.js';
import { withFields } from '../util/with-fields.js';
import { chargedGas, warmTransactionAddresses } from './transaction-steps.js';

/** EIP-7825's cap on a transaction's gas limit (2^24), from Osaka on. */
export const TX_GAS_LIMIT_CAP = 16_777_216n;

/**
 * The gas a simulation on `block` may use: `--rpc-gas-cap` (0: none), but never above the block gas
 * limit, nor (from Osaka) above EIP-7825's transaction gas limit cap.
 */
export function simulationGasCap(block: Block, rpcGasCap: bigint): bigint {
  const blockCap = rpcGasCap > 0n && rpcGasCap < block.header.gasLimit ? rpcGasCap : block.header.gasLimit;
  return block.header.common.isActivatedEIP(7825) && blockCap > TX_GAS_LIMIT_CAP ? TX_GAS_LIMIT_CAP : blockCap;
}

/** Besu's `--estimate-gas-tolerance-ratio`: the binary search stops within this fraction. */
const ESTIMATE_TOLERANCE = 0.015;
/** Gas a value-carrying CALL hands its callee for free (EIP-150's stipend). */
const CALL_STIPEND = 2300n;

type StepListener = StructLogCollector['onStep'];

export interface RunCallOptions {
  reportAccessList?: boolean;
  onStep?: StepListener;
  /** eth_simulateV1's `validation`: the nonce and base fee are checked as for a real transaction. */
  validation?: boolean;
  /** The transaction gets a placeholder signature so that it has a hash (eth_simulateV1's blocks). */
  signed?: boolean;
  /** The block whose blob base fee the call is judged against, when `env` is a zero-base-fee copy. */
  checkBlobFeeAgainst?: Block;
}

export class CallSimulator {
  /** The block at a zero base fee, kept for the last block asked: calls come in runs on the head. */
  private zeroBaseFeeEnv: { hash: string; block: Block } | undefined;

  constructor(
    /** Where the state after a block is read: the chain thread's read state or a reader thread's. */
    private readonly state: StateAtBlock,
    /** The gas a simulation on a block may use (`--rpc-gas-cap` within the block gas limit). */
    private readonly gasCap: (block: Block) => bigint,
    /**
     * Plain calls run as bare EVM messages (`runsAsMessage`); false runs every call through runTx, as
     * the differential test and the call-path bench compare.
     */
    private readonly plainCallsAsMessages = true,
  ) {}

  /** eth_call: the call's return data; a call that ran and failed throws Besu's error for it. */
  async call(call: CallRequest, block: Block, overrides?: AccountOverride[]): Promise<Uint8Array> {
    const result = await this.simulate(call, block, this.gasCap(block), overrides);
    if (result.execResult.exceptionError) throw executionError(result);
    return result.execResult.returnValue;
  }

  /**
   * A call's outcome as GraphQL's `call` and `estimateGas` report it (Besu's TransactionSimulator
   * result): a call that ran and failed is status 0 with its output, not an error; the gas is what
   * it used before refunds.
   */
  async run(call: CallRequest, block: Block): Promise<SimulationResult> {
    const result = await this.simulate(call, block, this.gasCap(block));
    return {
      status: result.execResult.exceptionError ? 0 : 1,
      gasUsed: result.totalGasSpent + result.gasRefund,
      output: result.execResult.returnValue,
    };
  }

  private zeroBaseFeeBlock(block: Block): Block {
    if (block.header.baseFeePerGas === undefined) return block;
    const hash = bytesToHex(block.hash());
    if (this.zeroBaseFeeEnv?.hash !== hash) {
      const env = this.state.spec.createBlock({ ...block.header.toJSON(), baseFeePerGas: 0n } as never, []);
      this.zeroBaseFeeEnv = { hash, block: env };
    }
    return this.zeroBaseFeeEnv.block;
  }

  /**
   * Runs a call on the state after `block`, reverting everything it did. Besu's simulation checks
   * (nonce not below the account's, intrinsic gas, up-front cost when a price is given or `strict`,
   * blob rules) run here first, with Besu's detail text; the VM then runs without its own.
   */
  private simulate(
    call: CallRequest,
    block: Block,
    gasLimit: bigint,
    overrides?: AccountOverride[],
    reportAccessList = false,
    onStep?: StepListener,
  ): Promise<CallOutcome> {
    return this.inSimulation(block, async (vm) => {
      if (overrides) await this.applyOverrides(vm, overrides);
      const feesGiven = [call.gasPrice, call.maxFeePerGas, call.maxPriorityFeePerGas].some((fee) => fee !== undefined && fee > 0n);
      // Without a price, Besu simulates at a zero base fee so that an unfunded caller can still call.
      const env = feesGiven ? block : this.zeroBaseFeeBlock(block);
      const opts = { reportAccessList, onStep, checkBlobFeeAgainst: block };
      const checked = await checkedCall(vm, call, env, gasLimit, opts);
      return this.plainCallsAsMessages && runsAsMessage(vm, checked, opts) ? runAsMessage(vm, checked, env) : runAsTransaction(vm, checked, env, opts);
    });
  }

  /**
   * Runs `fn` on the state after `block`, inside a checkpoint that is reverted afterwards with every
   * state override and precompile move made through `applyOverrides`. A transaction the VM refuses to
   * run becomes Besu's error for it. `needsStateRoots`: `fn` asks for the state root of what it
   * wrote, which only the trie-backed state computes (so do pre-Byzantium receipts).
   */
  inSimulation<T>(block: Block, fn: (vm: VM) => Promise<T>, needsStateRoots = false): Promise<T> {
    const onTrie = needsStateRoots || !this.rulesOf(block).byzantium;
    const withState = onTrie ? this.state.withTrieStateAt.bind(this.state) : this.state.withStateAt.bind(this.state);
    return withState(block.header.stateRoot, async (vm) => {
      const { hardfork } = this.rulesOf(block);
      if (vm.common.hardfork() !== hardfork) vm.common.setHardfork(hardfork);
      await vm.evm.journal.checkpoint();
      this.restores = [];
      try {
        return await fn(vm);
      } catch (err) {
        throw simulationError(err);
      } finally {
        for (const restore of this.restores.reverse()) restore();
        this.restores = [];
        await vm.evm.journal.revert();
        await reanchorAfterPreByzantium(vm, block.header.stateRoot);
      }
    });
  }

  /** The fork of the block simulated last: calls come in runs on the head, and finding it walks every fork. */
  private lastRules: { block: Block; hardfork: string; byzantium: boolean } | undefined;

  private rulesOf(block: Block): { hardfork: string; byzantium: boolean } {
    if (this.lastRules?.block !== block) {
      const common = block.header.common;
      const hardfork = common.getHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp });
      this.lastRules = { block, hardfork, byzantium: common.hardforkGteHardfork(hardfork, 'byzantium') };
    }
    return this.lastRules;
  }

  /** Precompile tables to put back when the simulation in progress ends. */
  private restores: (() => void)[] = [];

  /** State overrides (and precompile moves) for the simulation in progress. */
  async applyOverrides(vm: VM, overrides: AccountOverride[]): Promise<void> {
    const restore = movePrecompiles(vm, overrides);
    if (restore) this.restores.push(restore);
    await applyOverrides(vm, overrides);
  }

  /**
   * One call on the simulation's current state, in the environment of block `env`. Besu's simulation
   * checks (nonce not below the account's, intrinsic gas, up-front cost when a price is given or
   * `strict`, blob rules) run first, with Besu's detail text; the VM then runs without its own.
   * With `validation` (eth_simulateV1), the nonce must be the account's and the price must reach the
   * block's base fee, as for a real transaction.
   */
  async runCall(vm: VM, call: CallRequest, env: Block, gasLimit: bigint, opts: RunCallOptions = {}): Promise<Simulation> {
    return runAsTransaction(vm, await checkedCall(vm, call, env, gasLimit, opts), env, opts);
  }

  /** Besu's wording of why execution halted, e.g. `Invalid opcode: 0xfe` (found by re-running with a step hook). */
  private async haltReason(call: CallRequest, block: Block, error: string, overrides?: AccountOverride[]): Promise<string> {
    if (error !== 'invalid opcode') return error;
    let lastOpcode = 0;
    await this.simulate(call, block, call.gas ?? this.gasCap(block), overrides, false, async (step, resolve) => {
      lastOpcode = step.opcode.code;
      resolve?.();
    });
    return `Invalid opcode: 0x${lastOpcode.toString(16).padStart(2, '0')}`;
  }

  /** debug_traceCall: the call's struct logs, as debug_traceTransaction shows a mined transaction's. */
  async traceCall(call: CallRequest, block: Block, options: TraceOptions): Promise<Json> {
    const collector = new StructLogCollector(options);
    const result = await this.simulate(call, block, this.gasCap(block), undefined, false, collector.onStep);
    return collector.result(result);
  }

  /** Besu's eth_createAccessList: the accounts and slots the call touches, and its gas with that list. */
  async createAccessList(call: CallRequest, block: Block): Promise<Json> {
    const first = await this.simulate(call, block, this.gasCap(block), undefined, true);
    const exclude = new Set<string>([call.from, call.to].filter((a) => a !== undefined).map((a) => bytesToHex(a!)));
    const list = (first.accessList ?? [])
      .filter((entry) => !exclude.has(entry.address.toLowerCase()) && !isPrecompile(entry.address as string))
      .map((entry) => ({ address: hexToBytes(entry.address as `0x${string}`), storageKeys: entry.storageKeys.map((key) => hexToBytes(key as `0x${string}`)) }));
    const withList = list.length === 0 ? first : await this.simulate(withFields(call, { accessList: list }), block, this.gasCap(block));
    const shown = list.map((entry) => ({ address: bytesToHex(entry.address), storageKeys: entry.storageKeys.map(bytesToHex) }));
    const result: { [key: string]: Json } = { gasUsed: bigIntToHex(withList.totalGasSpent), accessList: shown };
    const error = withList.execResult.exceptionError;
    if (error) result.error = error.error;
    return result;
  }

  async estimateGas(call: CallRequest, block: Block, overrides?: AccountOverride[]): Promise<bigint> {
    // Besu searches up to the gas cap whatever gas the call names.
    const cap = this.gasCap(block);
    call = withFields(call, { gas: cap });
    const first = await this.simulate(call, block, cap, overrides);
    const failure = first.execResult.exceptionError;
    if (failure) {
      if (failure.error === 'revert') throw executionError(first);
      throw new RpcError(RpcErrors.EXECUTION_HALTED, undefined, await this.haltReason(call, block, failure.error, overrides));
    }
    // A plain transfer needs exactly what it used.
    if ((call.input === undefined || call.input.length === 0) && call.to !== undefined && !(await this.hasCode(call.to, block))) {
      return first.totalGasSpent;
    }
    const fits = async (gas: bigint) => {
      try {
        return !(await this.simulate(withFields(call, { gas }), block, gas, overrides)).execResult.exceptionError;
      } catch {
        return false;
      }
    };
    // Besu's search (as geth's): gas used is a lower bound; first try an optimistic limit that covers
    // refunds, a call stipend and the 63/64 rule, then bisect until within the tolerance.
    let low = first.totalGasSpent - 1n;
    let high = cap;
    const optimistic = ((first.totalGasSpent + (first.execResult.gasRefund ?? 0n) + CALL_STIPEND) * 64n) / 63n;
    if (optimistic < high && (await fits(optimistic))) high = optimistic;
    while (low + 1n < high) {
      if (Number(high - low) / Number(high) < ESTIMATE_TOLERANCE) break;
      const mid = (low + high) / 2n;
      if (await fits(mid)) high = mid;
      else low = mid;
    }
    return high;
  }

  private async hasCode(address: Uint8Array, block: Block): Promise<boolean> {
    return this.state.withStateAt(block.header.stateRoot, async (vm) => (await vm.stateManager.getCode(new Address(address))).length > 0);
  }
}

/** A call that passed Besu's simulation checks, as the transaction it runs as. */
interface CheckedCall {
  tx: TypedTransaction;
  from: Address;
  /** The price per gas the call pays (0 when none is given: it runs at a zero base fee). */
  price: bigint;
  intrinsicGas: bigint;
  /** EIP-7623's calldata floor (0 before Prague); the gas limit covers it. */
  floorGas: bigint;
}

/**
 * Besu's simulation checks of a call (nonce not below the account's, intrinsic gas, up-front cost
 * when a price is given or `strict`, blob rules), with Besu's detail text; with `validation` the nonce
 * must be the account's and the price must reach the block's base fee.
 */
async function checkedCall(vm: VM, call: CallRequest, env: Block, gasLimit: bigint, opts: RunCallOptions): Promise<CheckedCall> {
  const feesGiven = [call.gasPrice, call.maxFeePerGas, call.maxPriorityFeePerGas].some((fee) => fee !== undefined && fee > 0n);
  // Besu checks the up-front cost unless `strict` is false; without a price it is just the value.
  const checkBalance = opts.validation === true || (call.strict ?? true);
  const common = vm.common;
  const gas = call.gas ?? gasLimit;
  if (common.isActivatedEIP(7825) && gas > TX_GAS_LIMIT_CAP) throw new RpcError(RpcErrors.TX_GAS_LIMIT_CAP_EXCEEDED);
  const tx = simulatedTransaction(call, gas, common, opts.signed === true);
  const from = new Address(call.from ?? new Uint8Array(20));
  tx.getSenderAddress = () => from;
  const account = (await vm.stateManager.getAccount(from)) ?? new Account();
  if (call.nonce !== undefined && call.nonce < account.nonce) {
    throw new RpcError(
      RpcErrors.NONCE_TOO_LOW,
      undefined,
      `transaction nonce ${call.nonce} below sender account nonce ${account.nonce} for sender ${from.toString()}`,
    );
  }
  if (opts.validation && call.nonce !== undefined && call.nonce > account.nonce) {
    throw new RpcError(
      RpcErrors.NONCE_TOO_HIGH,
      undefined,
      `transaction nonce ${call.nonce} above sender account nonce ${account.nonce} for sender ${from.toString()}`,
    );
  }
  // Skip the nonce check without skipping the nonce bump a creation address depends on.
  if (call.nonce === undefined) (tx as { nonce: bigint }).nonce = account.nonce;
  const blobFeeBlock = opts.checkBlobFeeAgainst ?? env;
  checkBlobRules(call, tx, blobFeeBlock, checkBalance, from);
  const intrinsicGas = tx.getIntrinsicGas();
  // Besu checks the larger of the intrinsic gas and (from Prague) EIP-7623's calldata floor.
  const floorGas = getCalldataFloorGas(tx, from);
  const minimumGas = intrinsicGas > floorGas ? intrinsicGas : floorGas;
  if (tx.gasLimit < minimumGas) {
    throw new RpcError(RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT, undefined, `intrinsic gas cost ${minimumGas} exceeds gas limit ${tx.gasLimit}`);
  }
  const price = feesGiven ? (call.maxFeePerGas ?? call.gasPrice ?? 0n) : 0n;
  const baseFee = env.header.baseFeePerGas;
  if (opts.validation && baseFee !== undefined && price < baseFee) {
    throw new RpcError(
      RpcErrors.GAS_PRICE_BELOW_CURRENT_BASE_FEE,
      undefined,
      `transaction max fee per gas ${price} below block base fee ${baseFee} for sender ${from.toString()}`,
    );
  }
  if (checkBalance) {
    const blobCost = isBlob4844Tx(tx) ? BigInt(tx.blobVersionedHashes.length) * common.param('blobGasPerBlob') * tx.maxFeePerBlobGas : 0n;
    const upfront = tx.gasLimit * price + tx.value + blobCost;
    if (upfront > account.balance) {
      throw new RpcError(
        RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE,
        undefined,
        `transaction up-front cost ${bigIntToHex(upfront)} exceeds transaction sender account balance ${bigIntToHex(account.balance)} for sender ${from.toString()}`,
      );
    }
  }
  // Outside strict mode the blob fee is not checked (Besu); the VM would refuse a fee below the blob base fee.
  if (isBlob4844Tx(tx) && call.strict !== true) {
    const blobBaseFee = blobFeeBlock.header.excessBlobGas === undefined ? 1n : blobFeeBlock.header.getBlobGasPrice();
    if (tx.maxFeePerBlobGas < blobBaseFee) (tx as { maxFeePerBlobGas: bigint }).maxFeePerBlobGas = blobBaseFee;
  }
  return { tx, from, price, intrinsicGas, floorGas };
}

/** A checked call run as a transaction by ethereumjs' runTx: what a call needs beyond a message (see `runsAsMessage`). */
async function runAsTransaction(vm: VM, { tx, from }: CheckedCall, env: Block, opts: RunCallOptions): Promise<Simulation> {
  const result = await withStepListener(vm, opts.onStep, () =>
    withContractSender(vm, from, () =>
      runTx(vm, {
        tx,
        block: env,
        skipBalance: true,
        skipNonce: true,
        skipBlockGasLimitValidation: true,
        skipHardForkValidation: true,
        reportAccessList: opts.reportAccessList ?? false,
      }),
    ),
  );
  return Object.assign(result, { tx });
}

/** EIPs under which runTx does more for a transaction than `runAsMessage` repeats. */
const EIPS_BEYOND_PLAIN_CALLS = [6800, 7864, 7928, 8037];

/**
 * Whether a checked call can run as a bare EVM message (`runAsMessage`) with runTx's outcome: a plain
 * call of an address at no price (eth_call's usual shape), with nothing asked beyond the outcome (no
 * trace, no access-list report, no eth_simulateV1 transaction), under rules `runAsMessage` repeats.
 * Anything else runs through runTx.
 */
function runsAsMessage(vm: VM, { tx, price }: CheckedCall, opts: RunCallOptions): boolean {
  if (opts.onStep !== undefined || opts.reportAccessList === true || opts.validation === true || opts.signed === true) return false;
  if (tx.to === undefined || price !== 0n || isBlob4844Tx(tx)) return false;
  const common = vm.common;
  if (EIPS_BEYOND_PLAIN_CALLS.some((eip) => common.isActivatedEIP(eip))) return false;
  // runTx refuses a typed transaction before its fork (and a 1559 one before London).
  if (tx.type !== TransactionType.Legacy && !common.isActivatedEIP(2930)) return false;
  return tx.type !== TransactionType.FeeMarketEIP1559 || common.isActivatedEIP(1559);
}

/**
 * A plain call (`runsAsMessage`) run as runTx runs a transaction, without what only a mined
 * transaction needs (fee accounting, miner payment, receipt and bloom, the EIP-3607 sender check
 * Besu skips for calls anyway): the access list and EIP-2929/3651 addresses warmed (precompiles,
 * sender, target, coinbase); the sender given the value it sends when short of it, and its nonce
 * bumped (a contract called back may create from it); the message with the gas left after intrinsic
 * gas; then runTx's gas used, refund cap and EIP-7623 floor. At no price the fee moves nothing.
 */
async function runAsMessage(vm: VM, { tx, from, intrinsicGas, floorGas }: CheckedCall, env: Block): Promise<CallOutcome> {
  const journal = vm.evm.journal;
  await journal.cleanup();
  await journal.checkpoint();
  try {
    const to = tx.to!;
    warmTransactionAddresses(vm, tx, from, env.header.coinbase);
    const sender = (await vm.stateManager.getAccount(from)) ?? new Account();
    if (sender.balance < tx.value) sender.balance = tx.value;
    sender.nonce += 1n;
    await journal.putAccount(from, sender);
    await journal.checkpoint();
    let execResult: CallOutcome['execResult'];
    try {
      ({ execResult } = await vm.evm.runCall({
        block: env,
        gasPrice: 0n,
        caller: from,
        gasLimit: tx.gasLimit - intrinsicGas,
        to,
        value: tx.value,
        data: tx.data,
        skipNonceIncrement: true,
      }));
    } catch (err) {
      await journal.revert();
      throw err;
    }
    await journal.commit();
    await journal.commit();
    return { execResult, ...chargedGas(vm, execResult.executionGasUsed + intrinsicGas, execResult.gasRefund ?? 0n, floorGas) };
  } catch (err) {
    await journal.revert();
    throw err;
  } finally {
    journal.cleanJournal();
    vm.stateManager.originalStorageCache.clear();
  }
}

/** eth_call state overrides, applied inside the simulation's checkpoint so they vanish with it. */
async function applyOverrides(vm: VM, overrides: AccountOverride[]): Promise<void> {
  const sm = vm.stateManager;
  for (const o of overrides) {
    const address = new Address(o.address);
    const account = (await sm.getAccount(address)) ?? new Account();
    if (o.balance !== undefined) account.balance = o.balance;
    if (o.nonce !== undefined) account.nonce = o.nonce;
    await sm.putAccount(address, account);
    if (o.code !== undefined) await sm.putCode(address, o.code);
    if (o.state !== undefined) {
      await sm.clearStorage(address);
      for (const [slot, value] of o.state) await sm.putStorage(address, slot, value);
    }
    if (o.stateDiff !== undefined) {
      for (const [slot, value] of o.stateDiff) await sm.putStorage(address, slot, value);
    }
  }
}

/** A call's execution, with the transaction it ran as. */
export type Simulation = Awaited<ReturnType<typeof runTx>> & { tx: TypedTransaction };

/**
 * What a call's callers read of its execution, whether it ran as a transaction or as a message: the
 * EVM's result, gas used after refunds (and the EIP-7623 floor), the refund counted, the accessed
 * accounts when asked.
 */
export type CallOutcome = Pick<Simulation, 'execResult' | 'totalGasSpent' | 'gasRefund'> & { accessList?: Simulation['accessList'] };

/** A call that ran and failed: REVERT carries its data (code 3), anything else is an internal error. */
export function executionError(result: CallOutcome): RpcError {
  const error = result.execResult.exceptionError!;
  if (error.error === 'revert') {
    const data = bytesToHex(result.execResult.returnValue);
    return new RpcError(RpcErrors.REVERT_ERROR, data, decodeRevertReason(result.execResult.returnValue));
  }
  return new RpcError(RpcErrors.INTERNAL_ERROR);
}

/** `Error(string)` revert data decoded as Besu appends it to the message. */
export function decodeRevertReason(data: Uint8Array): string | undefined {
  if (data.length < 4 || bytesToHex(data.subarray(0, 4)) !== '0x08c379a0') return undefined;
  try {
    const length = Number(BigInt(bytesToHex(data.subarray(36, 68))));
    return new TextDecoder().decode(data.subarray(68, 68 + length));
  } catch {
    return 'ABI decode error';
  }
}

/** Maps a transaction the VM refused to run (not one that ran and failed) to Besu's error. */
function simulationError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/intrinsic gas|gasLimit is too low/i.test(message)) return new RpcError(RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT);
  if (/balance|upfront/i.test(message)) return new RpcError(RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE);
  if (/base ?fee/i.test(message)) return new RpcError(RpcErrors.GAS_PRICE_BELOW_CURRENT_BASE_FEE);
  return new RpcError(RpcErrors.INTERNAL_ERROR);
}

/** The transaction a call object describes: blob, 1559 or legacy by the fields given. */
function simulatedTransaction(call: CallRequest, gasLimit: bigint, common: VM['common'], signed = false): TypedTransaction {
  // A placeholder signature (never checked: the sender is set directly) gives the transaction a hash.
  const signature = signed ? { v: call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined || call.blobVersionedHashes !== undefined || (call.accessList ?? []).length > 0 ? 0n : 27n, r: 1n, s: 1n } : {};
  const base = withFields(signature, {
    nonce: call.nonce,
    gasLimit,
    to: call.to,
    value: call.value ?? 0n,
    data: call.input ?? new Uint8Array(),
  });
  const accessList = (call.accessList ?? []).map((entry): [Uint8Array, Uint8Array[]] => [entry.address, entry.storageKeys]);
  // Blob transactions need the chain Common (it carries the KZG backend); the others take the
  // pre-merged transaction Common, which spares a parameter merge per call.
  const opts = { common: call.blobVersionedHashes === undefined ? txCommonFor(common.chainId(), common.hardfork()) : common, freeze: false } as const;
  if (call.blobVersionedHashes !== undefined) {
    const maxBlobs = common.getBlobGasSchedule().maxBlobGasPerBlock / common.param('blobGasPerBlob');
    if (BigInt(call.blobVersionedHashes.length) > maxBlobs) {
      throw new RpcError(RpcErrors.TOTAL_BLOB_GAS_TOO_HIGH, undefined, `Blob transaction has too many blobs: ${call.blobVersionedHashes.length}`);
    }
    if (call.to === undefined) {
      throw new RpcError(RpcErrors.INVALID_TRANSACTION_TYPE, undefined, 'transaction blob transactions must have a to address');
    }
    return createBlob4844Tx(
      withFields(base, {
        to: call.to,
        accessList,
        maxFeePerGas: call.maxFeePerGas ?? call.gasPrice ?? 0n,
        maxPriorityFeePerGas: call.maxPriorityFeePerGas ?? call.gasPrice ?? 0n,
        maxFeePerBlobGas: call.maxFeePerBlobGas ?? 0n,
        blobVersionedHashes: call.blobVersionedHashes,
      }),
      opts,
    );
  }
  if (call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined) {
    return createFeeMarket1559Tx(
      withFields(base, { accessList, maxFeePerGas: call.maxFeePerGas ?? 0n, maxPriorityFeePerGas: call.maxPriorityFeePerGas ?? 0n }),
      opts,
    );
  }
  if (accessList.length > 0) return createAccessList2930Tx(withFields(base, { accessList, gasPrice: call.gasPrice ?? 0n }), opts);
  return createLegacyTx(withFields(base, { gasPrice: call.gasPrice ?? 0n }), opts);
}

/** Besu's blob checks of a simulated blob transaction: blob count, then the blob fee when prices count. */
function checkBlobRules(call: CallRequest, tx: TypedTransaction, block: Block, checkBalance: boolean, from: Address): void {
  if (!isBlob4844Tx(tx)) return;
  const max = block.header.common.getBlobGasSchedule().maxBlobGasPerBlock / block.header.common.param('blobGasPerBlob');
  if (BigInt(tx.blobVersionedHashes.length) > max) {
    throw new RpcError(RpcErrors.TOTAL_BLOB_GAS_TOO_HIGH, undefined, `Blob transaction has too many blobs: ${tx.blobVersionedHashes.length}`);
  }
  const blobBaseFee = block.header.excessBlobGas === undefined ? 1n : block.header.getBlobGasPrice();
  if (call.strict === true && checkBalance && tx.maxFeePerBlobGas < blobBaseFee) {
    throw new RpcError(
      RpcErrors.BLOB_GAS_PRICE_BELOW_CURRENT_BLOB_BASE_FEE,
      undefined,
      `tx max fee per blob gas less than block blob gas fee: address ${from.toString()} blobGasFeeCap: ${tx.maxFeePerBlobGas} wei, blobBaseFee: ${blobBaseFee} wei`,
    );
  }
}

function isPrecompile(address: string): boolean {
  const value = BigInt(address);
  return value > 0n && value <= 0x11n;
}

/**
 * Runs `fn` with the simulated sender allowed to have code. Besu simulates calls "from" contracts;
 * ethereumjs' runTx refuses any sender with code (EIP-3607) and has no switch for it, so the
 * sender's account is shown without its code hash to that check, and written back with it.
 */
async function withContractSender<T>(vm: VM, from: Address, fn: () => Promise<T>): Promise<T> {
  const sm = vm.stateManager;
  const account = await sm.getAccount(from);
  if (account === undefined || equalsBytes(account.codeHash, KECCAK256_NULL)) return fn();
  const codeHash = account.codeHash;
  const getAccount = sm.getAccount.bind(sm);
  const putAccount = sm.putAccount.bind(sm);
  let written = false;
  sm.getAccount = async (address: Address) => {
    const found = await getAccount(address);
    if (written || found === undefined || !address.equals(from)) return found;
    return new Account(found.nonce, found.balance, found.storageRoot, KECCAK256_NULL);
  };
  sm.putAccount = async (address: Address, value?: Account) => {
    if (!written && value !== undefined && address.equals(from)) {
      written = true;
      value.codeHash = codeHash;
    }
    return putAccount(address, value);
  };
  try {
    return await fn();
  } finally {
    sm.getAccount = getAccount;
    sm.putAccount = putAccount;
  }
}

/**
 * `movePrecompileToAddress` and code overrides on a precompile address: the EVM looks precompiles
 * up by address before code, so the table is changed for the simulation and restored after.
 */
function movePrecompiles(vm: VM, overrides: AccountOverride[]): (() => void) | undefined {
  const table = (vm.evm as unknown as { _precompiles: Map<string, unknown> })._precompiles;
  if (!(table instanceof Map)) return undefined;
  const saved = new Map(table);
  let changed = false;
  for (const o of overrides) {
    const key = bytesToHex(o.address).slice(2);
    const precompile = table.get(key);
    if (precompile === undefined) continue;
    if (o.movePrecompileToAddress) {
      table.set(bytesToHex(o.movePrecompileToAddress).slice(2), precompile);
      changed = true;
    }
    if (o.code !== undefined || o.movePrecompileToAddress) {
      table.delete(key);
      changed = true;
    }
  }
  if (!changed) return undefined;
  return () => {
    table.clear();
    for (const [key, value] of saved) table.set(key, value);
  };
}
