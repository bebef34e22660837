import type { Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { Account, Address, bigIntToBytes, bigIntToHex, bytesToHex, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import { runTx } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import type { MethodHandlers, MethodsOwnedBy } from '../rpc/registry.js';
import type { AccountOverride, BlockRef, BlockTag, CallRequest } from '../rpc/params.js';
import { formatBlock, formatMinedTransaction, formatReceipt } from '../rpc/format.js';
import { RpcError, RpcErrors } from '../rpc/errors.js';
import type { Json, Wire } from '../rpc/types.js';
import type { Chain } from './chain.js';

export interface ChainRpcOptions {
  /** Gas given to simulations that name none, and the most they may use; 0 = the block gas limit. */
  rpcGasCap: bigint;
  minGasPrice: bigint;
  /** The pool's next nonce for a sender, for the `pending` block tag of eth_getTransactionCount. */
  pendingNonce?: (address: Uint8Array) => Promise<bigint | null>;
}

/** Upper bound of eth_gasPrice, Besu's `--api-gas-price-max` default. */
const GAS_PRICE_MAX = 500_000_000_000n;
/** How many recent blocks eth_gasPrice samples, Besu's `--api-gas-price-blocks` default. */
const GAS_PRICE_BLOCKS = 100n;
/** Besu's `--estimate-gas-tolerance-ratio`: the binary search stops within this fraction. */
const ESTIMATE_TOLERANCE = 0.015;

/**
 * The JSON-RPC methods the chain owns. Parameters arrive parsed by the transport (registry.ts); the
 * answers are JSON values in Besu's shapes.
 */
export class ChainRpc {
  private readonly handlers: MethodHandlers<'chain'>;

  constructor(
    private readonly chain: Chain,
    private readonly options: ChainRpcOptions,
  ) {
    this.handlers = {
      eth_getBalance: ({ address, block }) =>
        this.readState(block, async (vm) => bigIntToHex((await vm.stateManager.getAccount(new Address(address)))?.balance ?? 0n)),
      eth_getCode: ({ address, block }) =>
        this.readState(block, async (vm) => bytesToHex(await vm.stateManager.getCode(new Address(address)))),
      eth_getStorageAt: ({ address, position, block }) =>
        this.readState(block, async (vm) => {
          const value = await vm.stateManager.getStorage(new Address(address), setLengthLeft(bigIntToBytes(position), 32));
          return bytesToHex(setLengthLeft(value, 32));
        }),
      eth_getTransactionCount: async ({ address, block }) => {
        const stateNonce = await this.readState(block, async (vm) => (await vm.stateManager.getAccount(new Address(address)))?.nonce ?? 0n);
        if (stateNonce === null) return null;
        if (block.kind === 'tag' && block.tag === 'pending' && this.options.pendingNonce) {
          const poolNonce = await this.options.pendingNonce(address);
          if (poolNonce !== null && poolNonce > stateNonce) return bigIntToHex(poolNonce);
        }
        return bigIntToHex(stateNonce);
      },
      eth_getBlockByNumber: async ({ block, fullTransactions }) => {
        const found = await this.blockByTag(block);
        return found ? this.renderBlock(found, fullTransactions) : null;
      },
      eth_getBlockByHash: async ({ hash, fullTransactions }) => {
        const found = await this.chain.store.getBlock(hash);
        return found ? this.renderBlock(found, fullTransactions) : null;
      },
      eth_getTransactionByHash: async ({ hash }) => {
        const found = await this.findTransaction(hash);
        if (!found) return null;
        const { block, index } = found;
        return formatMinedTransaction(block.transactions[index]!, {
          blockHash: block.hash(),
          blockNumber: block.header.number,
          blockTimestamp: block.header.timestamp,
          index,
          baseFeePerGas: block.header.baseFeePerGas,
        });
      },
      eth_getTransactionReceipt: async ({ hash }) => {
        const found = await this.findTransaction(hash);
        if (!found) return null;
        const { block, index } = found;
        const receipts = await this.chain.store.getReceipts(block.hash());
        if (!receipts || !receipts[index]) return null;
        let logIndexStart = 0;
        for (let i = 0; i < index; i++) logIndexStart += receipts[i]!.logs.length;
        return formatReceipt(receipts[index]!, {
          txHash: hash,
          blockHash: block.hash(),
          blockNumber: block.header.number,
          blockTimestamp: block.header.timestamp,
          index,
          logIndexStart,
        });
      },
      eth_call: async ({ call, block, stateOverrides }) => {
        const found = await this.blockByRef(block);
        if (!found) return null;
        const result = await this.simulate(call, found, this.gasCap(found), stateOverrides);
        if (result.execResult.exceptionError) throw executionError(result);
        return bytesToHex(result.execResult.returnValue);
      },
      eth_estimateGas: async ({ call, block, stateOverrides }) => {
        const found = await this.blockByTag(block);
        if (!found) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
        return bigIntToHex(await this.estimateGas(call, found, stateOverrides));
      },
      eth_gasPrice: async () => bigIntToHex(await this.gasPrice()),
    };
  }

  async handle(method: string, params: Wire): Promise<Json> {
    const handler = this.handlers[method as MethodsOwnedBy<'chain'>] as ((p: Wire) => Json | Promise<Json>) | undefined;
    if (!handler) throw new RpcError(RpcErrors.METHOD_NOT_FOUND);
    return handler(params);
  }

  /** The block a block parameter names, or undefined when it is unknown or in the future. */
  async blockByRef(ref: BlockRef): Promise<Block | undefined> {
    if (ref.kind === 'hash') {
      const block = await this.chain.store.getBlock(ref.hash);
      if (block && ref.requireCanonical) {
        const canonical = await this.chain.store.getCanonicalHash(block.header.number);
        if (!canonical || !equalsBytes(canonical, ref.hash)) throw new RpcError(RpcErrors.INVALID_INPUT);
      }
      return block;
    }
    return this.blockByTag(ref);
  }

  async blockByTag(tag: BlockTag): Promise<Block | undefined> {
    if (tag.kind === 'number') return this.chain.store.getBlockByNumber(tag.number);
    // QBFT finality is immediate: `finalized` and `safe` are the head, and no pending block is built.
    if (tag.tag === 'earliest') return this.chain.store.getBlockByNumber(0n);
    return this.chain.getHeadBlock();
  }

  private async readState<T extends Json | bigint>(ref: BlockRef, read: (vm: VM) => Promise<T>): Promise<T | null> {
    const block = await this.blockByRef(ref);
    if (!block) return null;
    return this.chain.withStateAt(block.header.stateRoot, read);
  }

  private async renderBlock(block: Block, fullTransactions: boolean): Promise<Json> {
    const hash = block.hash();
    const totalDifficulty = (await this.chain.store.getTotalDifficulty(hash)) ?? 0n;
    return formatBlock(block, { fullTransactions, totalDifficulty, hash, size: block.serialize().length });
  }

  private async findTransaction(hash: Uint8Array): Promise<{ block: Block; index: number } | undefined> {
    const location = await this.chain.store.getTxLocation(hash);
    if (!location) return undefined;
    const block = await this.chain.store.getBlock(location.blockHash);
    if (!block || !block.transactions[location.index]) return undefined;
    return { block, index: location.index };
  }

  private gasCap(block: Block): bigint {
    const cap = this.options.rpcGasCap;
    return cap > 0n && cap < block.header.gasLimit ? cap : block.header.gasLimit;
  }

  /** Runs a call on the state after `block`, reverting everything it did. */
  private simulate(call: CallRequest, block: Block, gasLimit: bigint, overrides?: AccountOverride[]) {
    return this.chain.withStateAt(block.header.stateRoot, async (vm) => {
      const feesGiven = call.gasPrice !== undefined || call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined;
      const common = vm.common;
      common.setHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp });
      const txData = {
        nonce: call.nonce,
        gasLimit: call.gas ?? gasLimit,
        to: call.to,
        value: call.value ?? 0n,
        data: call.input ?? new Uint8Array(),
        accessList: call.accessList as never,
      };
      const tx: TypedTransaction =
        call.maxFeePerGas !== undefined || call.maxPriorityFeePerGas !== undefined
          ? createFeeMarket1559Tx(
              { ...txData, maxFeePerGas: call.maxFeePerGas ?? 0n, maxPriorityFeePerGas: call.maxPriorityFeePerGas ?? 0n },
              { common, freeze: false },
            )
          : createLegacyTx({ ...txData, gasPrice: call.gasPrice ?? 0n }, { common, freeze: false });
      const from = new Address(call.from ?? new Uint8Array(20));
      tx.getSenderAddress = () => from;
      // Without a price, Besu simulates at a zero base fee so that an unfunded caller can still call.
      const env = feesGiven
        ? block
        : this.chain.spec.createBlock({ ...block.header.toJSON(), baseFeePerGas: block.header.baseFeePerGas === undefined ? undefined : 0n } as never, []);
      await vm.evm.journal.checkpoint();
      try {
        if (overrides) await applyOverrides(vm, overrides);
        if (call.nonce === undefined) {
          // Skip the nonce check without skipping the nonce bump a creation address depends on.
          const account = await vm.stateManager.getAccount(from);
          (tx as { nonce: bigint }).nonce = account?.nonce ?? 0n;
        }
        return await runTx(vm, {
          tx,
          block: env,
          skipBalance: !feesGiven && call.strict !== true,
          skipNonce: true,
          skipBlockGasLimitValidation: true,
          skipHardForkValidation: true,
        });
      } catch (err) {
        throw simulationError(err);
      } finally {
        await vm.evm.journal.revert();
      }
    });
  }

  private async estimateGas(call: CallRequest, block: Block, overrides?: AccountOverride[]): Promise<bigint> {
    const cap = call.gas ?? this.gasCap(block);
    const first = await this.simulate(call, block, cap, overrides);
    if (first.execResult.exceptionError) throw executionError(first);
    // Gas used is a lower bound; refunds and the 63/64 rule can make the real need higher.
    let low = first.totalGasSpent - 1n;
    let high = cap;
    const fits = async (gas: bigint) => {
      try {
        return !(await this.simulate({ ...call, gas }, block, gas, overrides)).execResult.exceptionError;
      } catch {
        return false;
      }
    };
    if (await fits(first.totalGasSpent)) return first.totalGasSpent;
    while (high - low > 1n && Number(high - low) / Number(high) > ESTIMATE_TOLERANCE) {
      const mid = (low + high) / 2n;
      if (await fits(mid)) high = mid;
      else low = mid;
    }
    return high;
  }

  /** Besu's eth_gasPrice: the median legacy price of recent blocks, floored and capped. */
  private async gasPrice(): Promise<bigint> {
    const head = this.chain.getHeadBlock();
    const nextBaseFee = head.header.baseFeePerGas === undefined ? 0n : head.header.calcNextBaseFee();
    const floor = nextBaseFee > this.options.minGasPrice ? nextBaseFee : this.options.minGasPrice;
    const prices: bigint[] = [];
    for (let n = head.header.number; n >= 0n && head.header.number - n < GAS_PRICE_BLOCKS; n--) {
      const block = n === head.header.number ? head : await this.chain.store.getBlockByNumber(n);
      if (!block) break;
      for (const tx of block.transactions) if ('gasPrice' in tx) prices.push((tx as { gasPrice: bigint }).gasPrice);
    }
    if (prices.length === 0) return floor;
    prices.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = prices[Math.floor((prices.length - 1) / 2)]!;
    const capped = median > GAS_PRICE_MAX ? GAS_PRICE_MAX : median;
    return capped > floor ? capped : floor;
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
  }
}

type Simulation = Awaited<ReturnType<typeof runTx>>;

/** A call that ran and failed: REVERT carries its data (code 3), anything else is an internal error. */
function executionError(result: Simulation): RpcError {
  const error = result.execResult.exceptionError!;
  if (error.error === 'revert') {
    const data = bytesToHex(result.execResult.returnValue);
    return new RpcError(RpcErrors.REVERT_ERROR, data, decodeRevertReason(result.execResult.returnValue));
  }
  return new RpcError(RpcErrors.INTERNAL_ERROR);
}

/** `Error(string)` revert data decoded as Besu appends it to the message. */
function decodeRevertReason(data: Uint8Array): string | undefined {
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
  const message = err instanceof Error ? err.message : String(err);
  if (/intrinsic gas|gasLimit is too low/i.test(message)) return new RpcError(RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT);
  if (/balance|upfront/i.test(message)) return new RpcError(RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE);
  if (/base ?fee/i.test(message)) return new RpcError(RpcErrors.GAS_PRICE_BELOW_CURRENT_BASE_FEE);
  return new RpcError(RpcErrors.INTERNAL_ERROR);
}
