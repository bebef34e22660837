/**
 * eth_simulateV1 (execution-apis): a sequence of simulated blocks on top of a stored block, each with
 * block overrides, state overrides and calls, all on one state that carries from call to call and
 * from block to block and is thrown away at the end. Every call goes through the simulator that
 * eth_call and eth_estimateGas use (CallSimulator.runCall).
 *
 * With `validation`, calls are judged as transactions: the nonce must be the sender's, the price must
 * reach the base fee (computed per block as on chain), and the balance must cover the up-front cost.
 * Without it they are judged as eth_call judges them, at a zero base fee unless one is given.
 */
import type { Block, HeaderData } from '@ethereumjs/block';
import { genWithdrawalsTrieRoot } from '@ethereumjs/block';
import { Account, Address, bigIntToBytes, bytesToHex, createWithdrawal, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import type { Withdrawal } from '@ethereumjs/util';
import { Bloom } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import type { RpcErrorObject } from '../../shared/rpc/types.js';
import { formatBlock, formatReceiptLog, toData, toQuantity } from '../../shared/rpc/format.js';
import type { AccountOverride, CallRequest } from '../../shared/rpc/params.js';
import type { BlockOverrides, BlockStateCall, SimulateRequest } from '../../shared/rpc/methods/param-shapes.js';
import type { Json } from '../../shared/rpc/types.js';
import { encodeConsensusReceipt } from '../../shared/ethereum/consensus-receipt.js';
import { orderedTrieRoot } from '../../shared/ethereum/ordered-trie.js';
import type { Chain } from '../chain.js';
import { runPreTransactionSystemCalls } from '../../shared/execution/system-calls.js';
import type { CallSimulator, Simulation } from '../../shared/execution/simulation.js';
import { TX_GAS_LIMIT_CAP, decodeRevertReason } from '../../shared/execution/simulation.js';

/** The most simulated blocks one request may ask for (Besu's limit). */
export const MAX_SIMULATED_BLOCKS = 256;
/** Time between simulated blocks whose timestamp is not overridden (execution-apis). */
const DEFAULT_BLOCK_TIME = 12n;
/** Where traceTransfers' synthetic ERC-20-style Transfer logs come from (execution-apis). */
const TRANSFER_LOG_ADDRESS = new Uint8Array(20).fill(0xee);
const TRANSFER_TOPIC = keccak_256(new TextEncoder().encode('Transfer(address,address,uint256)'));

type RawLog = [Uint8Array, Uint8Array[], Uint8Array];

/** The per-call result: return data, logs, gas, status, and the error of a call that failed. */
interface CallOutcome {
  simulation: Simulation;
  logs: RawLog[];
}

/** Errors of a call the simulator refused to run, renamed with eth_simulateV1's codes. */
const SIMULATE_CODES: ReadonlyArray<[RpcErrorObject, RpcErrorObject]> = [
  [RpcErrors.NONCE_TOO_LOW, RpcErrors.SIMULATE_NONCE_TOO_LOW],
  [RpcErrors.NONCE_TOO_HIGH, RpcErrors.SIMULATE_NONCE_TOO_HIGH],
  [RpcErrors.GAS_PRICE_BELOW_CURRENT_BASE_FEE, RpcErrors.SIMULATE_BASE_FEE_TOO_LOW],
  [RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT, RpcErrors.SIMULATE_INTRINSIC_GAS],
  [RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE, RpcErrors.SIMULATE_INSUFFICIENT_FUNDS],
];

function renamed(err: unknown): unknown {
  if (!(err instanceof RpcError)) return err;
  for (const [from, to] of SIMULATE_CODES) {
    if (err.code === from.code && err.message.startsWith(from.message)) {
      return new RpcError(to, err.data, err.message === from.message ? undefined : err.message.slice(from.message.length + 2, -1));
    }
  }
  return err;
}

/** Besu's checks of `movePrecompileToAddress` across one block's overrides. */
function checkPrecompileMoves(overrides: AccountOverride[]): void {
  const targets = new Set<string>();
  for (const o of overrides) {
    if (!o.movePrecompileToAddress) continue;
    if (equalsBytes(o.movePrecompileToAddress, o.address)) throw new RpcError(RpcErrors.SIMULATE_PRECOMPILE_SELF_REFERENCE);
    const target = bytesToHex(o.movePrecompileToAddress);
    if (targets.has(target)) throw new RpcError(RpcErrors.SIMULATE_PRECOMPILE_DUPLICATE);
    targets.add(target);
  }
}

export class BlockSimulator {
  constructor(
    private readonly chain: Chain,
    private readonly simulator: CallSimulator,
    /** The gas the whole simulation may use (`--rpc-gas-cap`; 0 = unlimited). */
    private readonly rpcGasCap: bigint,
  ) {}

  async simulate(request: SimulateRequest, base: Block): Promise<Json[]> {
    if (request.blockStateCalls.length > MAX_SIMULATED_BLOCKS) throw new RpcError(RpcErrors.SIMULATE_TOO_MANY_BLOCKS);
    const plans = this.planBlocks(request.blockStateCalls, base);
    let gasBudget = this.rpcGasCap > 0n ? this.rpcGasCap : undefined;
    return this.simulator.inSimulation(base, async (vm) => {
      const results: Json[] = [];
      let parent = base;
      for (const plan of plans) {
        const built = await this.simulateBlock(vm, plan, parent, request, gasBudget);
        if (gasBudget !== undefined) gasBudget -= built.block.header.gasUsed;
        if (plan.requested) results.push(built.json);
        parent = built.block;
      }
      return results;
    }, true);
  }

  /** The blocks to make: the requested ones, with empty blocks filling any gap in their numbers. */
  private planBlocks(calls: BlockStateCall[], base: Block): BlockPlan[] {
    const plans: BlockPlan[] = [];
    let number = base.header.number;
    let time = base.header.timestamp;
    for (const call of calls) {
      const overrides = call.blockOverrides ?? {};
      const wanted = overrides.number ?? number + 1n;
      if (wanted <= number) throw new RpcError(RpcErrors.SIMULATE_BLOCK_NUMBERS_NOT_ASCENDING);
      if (plans.length + Number(wanted - number) > MAX_SIMULATED_BLOCKS) throw new RpcError(RpcErrors.SIMULATE_TOO_MANY_BLOCKS);
      for (let filler = number + 1n; filler < wanted; filler++) {
        time += DEFAULT_BLOCK_TIME;
        plans.push({ number: filler, time, calls: [], requested: false });
      }
      const wantedTime = overrides.time ?? time + DEFAULT_BLOCK_TIME;
      if (wantedTime <= time) throw new RpcError(RpcErrors.SIMULATE_TIMESTAMPS_NOT_ASCENDING);
      number = wanted;
      time = wantedTime;
      plans.push({ number, time, calls: call.calls, overrides, stateOverrides: call.stateOverrides, requested: true });
    }
    return plans;
  }

  private async simulateBlock(vm: VM, plan: BlockPlan, parent: Block, request: SimulateRequest, gasBudget: bigint | undefined) {
    const spec = this.chain.spec;
    vm.common.setHardforkBy({ blockNumber: plan.number, timestamp: plan.time });
    const common = vm.common;
    const overrides = plan.overrides ?? {};
    const headerData: HeaderData = {
      parentHash: parent.hash(),
      number: plan.number,
      timestamp: plan.time,
      coinbase: overrides.feeRecipient ?? parent.header.coinbase.bytes,
      gasLimit: overrides.gasLimit ?? parent.header.gasLimit,
      extraData: parent.header.extraData,
      difficulty: parent.header.difficulty === 0n ? 0n : 1n,
      mixHash: overrides.prevRandao ?? parent.header.mixHash,
      nonce: new Uint8Array(8),
    };
    if (common.isActivatedEIP(1559)) {
      // Without validation calls pay nothing, as eth_call's do; with it the chain's base fee applies.
      const onChain = parent.header.baseFeePerGas === undefined ? 1_000_000_000n : parent.header.calcNextBaseFee();
      headerData.baseFeePerGas = overrides.baseFeePerGas ?? (request.validation ? onChain : 0n);
    }
    if (common.isActivatedEIP(4844)) {
      headerData.blobGasUsed = 0n;
      headerData.excessBlobGas = parent.header.excessBlobGas === undefined ? 0n : parent.header.calcNextExcessBlobGas(common);
    }
    if (common.isActivatedEIP(4788)) headerData.parentBeaconBlockRoot = new Uint8Array(32);
    // Blocks before Shanghai carry no withdrawals; one asked for there is left out with the list.
    const withdrawals = common.isActivatedEIP(4895) ? (overrides.withdrawals ?? []).map((w) => createWithdrawal(w)) : undefined;
    const created = spec.createBlock(headerData, [], withdrawals);
    const env = overrides.blobBaseFee !== undefined && common.isActivatedEIP(4844) ? withBlobBaseFee(created, overrides.blobBaseFee) : created;

    if (plan.stateOverrides) {
      checkPrecompileMoves(plan.stateOverrides);
      await this.simulator.applyOverrides(vm, plan.stateOverrides);
    }
    await runPreTransactionSystemCalls(vm, {
      number: plan.number,
      timestamp: plan.time,
      parentHash: headerData.parentHash as Uint8Array,
      parentBeaconBlockRoot: new Uint8Array(32),
    });

    const blockGasLimit = headerData.gasLimit as bigint;
    let gasUsed = 0n;
    const outcomes: CallOutcome[] = [];
    const receipts: Uint8Array[] = [];
    const bloom = new Bloom(undefined, common);
    for (const call of plan.calls) {
      const remaining = blockGasLimit - gasUsed;
      let gas = call.gas ?? remaining;
      if (call.gas === undefined && common.isActivatedEIP(7825) && gas > TX_GAS_LIMIT_CAP) gas = TX_GAS_LIMIT_CAP;
      if (call.gas === undefined && gasBudget !== undefined && gas > gasBudget - gasUsed) gas = gasBudget - gasUsed;
      if (gas > remaining) throw new RpcError(RpcErrors.SIMULATE_BLOCK_GAS_LIMIT_EXCEEDED);
      if (request.validation) await this.checkTransactionRules(vm, call);
      const transfers = request.traceTransfers ? this.watchTransfers(vm, call) : undefined;
      let simulation: Simulation;
      try {
        simulation = await this.simulator.runCall(vm, { ...call, gas }, env, gas, { validation: request.validation, signed: true });
      } catch (err) {
        throw renamed(err);
      } finally {
        transfers?.stop();
      }
      gasUsed += simulation.totalGasSpent;
      const failed = simulation.execResult.exceptionError !== undefined;
      const evmLogs = (simulation.execResult.logs ?? []) as RawLog[];
      const logs = failed ? [] : [...(transfers?.logs() ?? []), ...evmLogs];
      outcomes.push({ simulation, logs });
      bloom.or(simulation.bloom);
      receipts.push(encodeConsensusReceipt({ status: failed ? 0 : 1, cumulativeGasUsed: gasUsed, logsBloom: simulation.bloom.bitvector, logs: evmLogs, txType: simulation.tx.type }));
    }
    if (withdrawals) await creditWithdrawals(vm, withdrawals);
    const transactions = outcomes.map((o) => o.simulation.tx);
    const builtHeader: HeaderData = {
      ...headerData,
      ...(withdrawals ? { withdrawalsRoot: await genWithdrawalsTrieRoot(withdrawals) } : {}),
      stateRoot: await vm.stateManager.getStateRoot(),
      transactionsTrie: orderedTrieRoot(transactions.map((tx) => tx.serialize())),
      receiptTrie: orderedTrieRoot(receipts),
      logsBloom: bloom.bitvector,
      gasUsed,
    };
    const block = spec.createBlock(builtHeader, transactions, withdrawals);
    const hash = block.hash();
    const json = formatBlock(block, {
      fullTransactions: request.returnFullTransactions,
      hash,
      totalDifficulty: 0n,
      senders: plan.calls.map((call) => call.from ?? new Uint8Array(20)),
    });
    let logIndex = 0;
    json.calls = outcomes.map(({ simulation, logs }, txIndex) => {
      const location = { blockHash: hash, blockNumber: plan.number, blockTimestamp: plan.time, txHash: simulation.tx.hash(), txIndex };
      const result: { [key: string]: Json } = {
        returnData: toData(simulation.execResult.returnValue),
        logs: logs.map((log) => formatReceiptLog(log, { ...location, logIndex: logIndex++ })),
        gasUsed: toQuantity(simulation.totalGasSpent),
        status: simulation.execResult.exceptionError ? '0x0' : '0x1',
      };
      const error = simulation.execResult.exceptionError;
      if (error) {
        result.error =
          error.error === 'revert'
            ? revertError(simulation.execResult.returnValue)
            : { code: RpcErrors.SIMULATE_VM_ERROR.code, message: `${RpcErrors.SIMULATE_VM_ERROR.message}: ${error.error}` };
      }
      return result;
    });
    return { block, json };
  }

  /** With validation: a sender with code (other than an EIP-7702 delegation) and oversize initcode are refused. */
  private async checkTransactionRules(vm: VM, call: CallRequest): Promise<void> {
    const code = await vm.stateManager.getCode(new Address(call.from ?? new Uint8Array(20)));
    const delegation = code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00;
    if (code.length > 0 && !delegation) throw new RpcError(RpcErrors.SIMULATE_SENDER_NOT_EOA);
    if (call.to === undefined && vm.common.isActivatedEIP(3860) && BigInt(call.input?.length ?? 0) > vm.common.param('maxInitCodeSize')) {
      throw new RpcError(RpcErrors.SIMULATE_INIT_CODE_TOO_LARGE);
    }
  }

  /**
   * traceTransfers: a Transfer(from, to, value) log from 0xeeee…eeee for every movement of ether,
   * the call's own value and every value-carrying message inside it; a message that reverts takes its
   * transfers (and those of its sub-calls) back.
   */
  private watchTransfers(vm: VM, call: CallRequest) {
    const logs: RawLog[] = [];
    const marks: number[] = [];
    const word = (bytes: Uint8Array) => setLengthLeft(bytes, 32);
    const events = vm.evm.events!;
    const before = (message: { caller: Address; to?: Address; value: bigint; depth: number }, resolve?: () => void) => {
      marks.push(logs.length);
      // The top-level value moves with the transaction itself (depth 0 is the call).
      if (message.value > 0n && message.to !== undefined) {
        logs.push([TRANSFER_LOG_ADDRESS, [TRANSFER_TOPIC, word(message.caller.bytes), word(message.to.bytes)], setLengthLeft(bigIntToBytes(message.value), 32)]);
      }
      resolve?.();
    };
    const after = (result: { execResult: { exceptionError?: unknown } }, resolve?: () => void) => {
      const mark = marks.pop() ?? 0;
      if (result.execResult.exceptionError !== undefined) logs.length = mark;
      resolve?.();
    };
    void call;
    events.on('beforeMessage', before as never);
    events.on('afterMessage', after as never);
    return {
      logs: () => logs,
      stop: () => {
        events.off('beforeMessage', before as never);
        events.off('afterMessage', after as never);
      },
    };
  }
}

interface BlockPlan {
  number: bigint;
  time: bigint;
  calls: CallRequest[];
  overrides?: BlockOverrides;
  stateOverrides?: AccountOverride[] | undefined;
  /** False for the empty blocks that fill a gap in the requested numbers (not returned). */
  requested: boolean;
}

/**
 * The block as the calls see it with a blob base fee override: BLOBBASEFEE and the blob gas a call
 * pays read the header's blob gas price, which the override replaces (the header itself keeps the
 * excess blob gas of the chain, as execution-apis has it).
 */
function withBlobBaseFee(block: Block, blobBaseFee: bigint): Block {
  const header = Object.create(block.header, { getBlobGasPrice: { value: () => blobBaseFee } }) as Block['header'];
  return Object.create(block, { header: { value: header } }) as Block;
}

/** EIP-4895: each withdrawal credits its amount (gwei) to its address after the block's calls. */
async function creditWithdrawals(vm: VM, withdrawals: Withdrawal[]): Promise<void> {
  for (const withdrawal of withdrawals) {
    if (withdrawal.amount === 0n) continue;
    const account = (await vm.stateManager.getAccount(withdrawal.address)) ?? new Account();
    account.balance += withdrawal.amount * 1_000_000_000n;
    await vm.stateManager.putAccount(withdrawal.address, account);
  }
}

function revertError(data: Uint8Array): Json {
  const reason = decodeRevertReason(data);
  return {
    code: RpcErrors.REVERT_ERROR.code,
    message: reason === undefined ? RpcErrors.REVERT_ERROR.message : `${RpcErrors.REVERT_ERROR.message} (${reason})`,
    data: bytesToHex(data),
  };
}
