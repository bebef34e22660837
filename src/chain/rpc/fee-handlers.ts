/**
 * Gas prices, fee history and the fork configuration (registry: fee-methods.ts).
 */
import type { Block, BlockHeader } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { Capability } from '@ethereumjs/tx';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import { toQuantity } from '../../shared/rpc/format.js';
import type { feeMethods } from '../../shared/rpc/methods/fee-methods.js';
import type { Json } from '../../shared/rpc/types.js';
import { ethConfig } from '../fork-config.js';
import { blobParametersAt } from '../../shared/ethereum/common.js';
import type { ChainRpcContext, DomainHandlers } from './chain-rpc.js';

/** Upper bound of eth_gasPrice, Besu's `--api-gas-price-max` default. */
const GAS_PRICE_MAX = 500_000_000_000n;
/** How many recent blocks eth_gasPrice and eth_maxPriorityFeePerGas sample, Besu's `--api-gas-price-blocks` default. */
const GAS_PRICE_BLOCKS = 100n;

export function feeHandlers(context: ChainRpcContext): DomainHandlers<typeof feeMethods> {
  const { chain, store, options } = context;
  const minPriorityFee = options.minPriorityFee ?? 0n;

  /** The head and the blocks before it, newest first, at most GAS_PRICE_BLOCKS of them. */
  async function* recentBlocks(): AsyncGenerator<Block> {
    const head = chain.getHeadBlock();
    for (let n = head.header.number; n >= 0n && head.header.number - n < GAS_PRICE_BLOCKS; n--) {
      const block = n === head.header.number ? head : await store.getBlockByNumber(n);
      if (!block) return;
      yield block;
    }
  }

  /** Besu's eth_gasPrice: the median legacy price of recent blocks, floored and capped. */
  const gasPrice = async (): Promise<bigint> => {
    const head = chain.getHeadBlock();
    const nextBaseFee = head.header.baseFeePerGas === undefined ? 0n : head.header.calcNextBaseFee();
    const floor = nextBaseFee > options.minGasPrice ? nextBaseFee : options.minGasPrice;
    const prices: bigint[] = [];
    for await (const block of recentBlocks()) {
      for (const tx of block.transactions) if ('gasPrice' in tx) prices.push((tx as { gasPrice: bigint }).gasPrice);
    }
    if (prices.length === 0) return floor;
    const median = medianOf(prices);
    const capped = median > GAS_PRICE_MAX ? GAS_PRICE_MAX : median;
    return capped > floor ? capped : floor;
  };

  /** The median tip recent EIP-1559 transactions could pay, floored at `--min-priority-fee`. */
  const maxPriorityFee = async (): Promise<bigint> => {
    const fees: bigint[] = [];
    for await (const block of recentBlocks()) {
      const baseFee = block.header.baseFeePerGas;
      if (baseFee === undefined) break;
      for (const tx of block.transactions) {
        if (!tx.supports(Capability.EIP1559FeeMarket)) continue;
        const t = tx as unknown as { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
        const room = t.maxFeePerGas - baseFee;
        fees.push(room < t.maxPriorityFeePerGas ? room : t.maxPriorityFeePerGas);
      }
    }
    if (fees.length === 0) return minPriorityFee;
    const median = medianOf(fees);
    return median > minPriorityFee ? median : minPriorityFee;
  };

  /** Besu's reward percentiles: priority fees of the block's transactions weighted by gas used. */
  const blockRewards = async (block: Block, percentiles: number[]): Promise<string[]> => {
    const baseFee = block.header.baseFeePerGas ?? 0n;
    const receipts = (await store.getReceipts(block.hash())) ?? [];
    const paid = receipts
      .map((receipt) => ({ reward: receipt.effectiveGasPrice - baseFee, gas: receipt.gasUsed }))
      .sort((a, b) => compareBigints(a.reward, b.reward));
    if (paid.length === 0) return percentiles.map(() => '0x0');
    const total = block.header.gasUsed;
    return percentiles.map((percentile) => {
      const threshold = (Number(total) * percentile) / 100;
      let cumulative = 0;
      for (const entry of paid) {
        cumulative += Number(entry.gas);
        if (cumulative >= threshold) return toQuantity(entry.reward);
      }
      return toQuantity(paid[paid.length - 1]!.reward);
    });
  };

  const feeHistory = async (blockCount: number, newest: Block, percentiles?: number[]): Promise<Json> => {
    const newestNumber = newest.header.number;
    const oldest = newestNumber - BigInt(blockCount) + 1n < 0n ? 0n : newestNumber - BigInt(blockCount) + 1n;
    const baseFees: string[] = [];
    const blobBaseFees: string[] = [];
    const gasUsedRatio: number[] = [];
    const blobGasUsedRatio: number[] = [];
    const rewards: string[][] = [];
    for (let n = oldest; n <= newestNumber; n++) {
      const block = n === newestNumber ? newest : await store.getBlockByNumber(n);
      if (!block) break;
      const header = block.header;
      baseFees.push(toQuantity(header.baseFeePerGas ?? 0n));
      blobBaseFees.push(toQuantity(header.excessBlobGas === undefined ? 0n : header.getBlobGasPrice()));
      gasUsedRatio.push(Number(header.gasUsed) / Number(header.gasLimit));
      const maxBlobGas = header.blobGasUsed === undefined ? 0n : header.common.getBlobGasSchedule().maxBlobGasPerBlock;
      blobGasUsedRatio.push(maxBlobGas === 0n ? 0 : Number(header.blobGasUsed ?? 0n) / Number(maxBlobGas));
      if (percentiles) rewards.push(await blockRewards(block, percentiles));
    }
    // The block after the newest: its own fees when it is stored (Besu), else what its fork makes them.
    const following = await store.getBlockByNumber(newestNumber + 1n);
    const header = newest.header;
    if (following) {
      baseFees.push(toQuantity(following.header.baseFeePerGas ?? 0n));
      blobBaseFees.push(toQuantity(following.header.excessBlobGas === undefined ? 0n : following.header.getBlobGasPrice()));
    } else {
      baseFees.push(toQuantity(header.baseFeePerGas === undefined ? 0n : header.calcNextBaseFee()));
      blobBaseFees.push(toQuantity(header.excessBlobGas === undefined ? 0n : header.calcNextBlobGasPrice(nextBlockCommon(header))));
    }
    const result: { [key: string]: Json } = {
      oldestBlock: toQuantity(oldest),
      baseFeePerGas: baseFees,
      baseFeePerBlobGas: blobBaseFees,
      gasUsedRatio,
      blobGasUsedRatio,
    };
    if (percentiles) result.reward = rewards;
    return result;
  };

  return {
    eth_gasPrice: async () => toQuantity(await gasPrice()),
    eth_maxPriorityFeePerGas: async () => toQuantity(await maxPriorityFee()),
    eth_feeHistory: async ({ blockCount, newestBlock, rewardPercentiles }) => {
      const newest = await context.blockByTag(newestBlock);
      if (!newest) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      return feeHistory(blockCount, newest, rewardPercentiles);
    },
    // Before Cancun there is no blob market; its floor price (1 wei) is what a first blob would pay.
    eth_blobBaseFee: () => {
      const header = chain.getHeadBlock().header;
      return toQuantity(header.excessBlobGas === undefined ? 1n : header.calcNextBlobGasPrice(nextBlockCommon(header)));
    },
    eth_config: async () => {
      const genesis = await store.getBlockByNumber(0n);
      if (genesis === undefined) throw new Error('the chain has no genesis block');
      return ethConfig({
        schedule: chain.spec.common.hardforks(),
        chainId: chain.spec.chainId,
        genesisHash: genesis.hash(),
        genesisTimestamp: genesis.header.timestamp,
        headFork: chain.getHeadBlock().common.hardfork(),
        blobSchedule: (hardfork) => blobParametersAt(chain.spec.common, hardfork),
        blockTimestamp: async (number) => (await store.getBlockByNumber(number))?.header.timestamp,
      });
    },
  };
}

/**
 * The rules of the block after `header`, whose blob parameters its blob base fee follows: the fork at
 * the next number and the current time (as Besu picks the next block's fork), at least a second on.
 */
function nextBlockCommon(header: BlockHeader): Common {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const common = header.common.copy();
  common.setHardforkBy({ blockNumber: header.number + 1n, timestamp: now > header.timestamp ? now : header.timestamp + 1n });
  return common;
}

function compareBigints(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The lower median: of an even count, the smaller of the two middle values (sorts `values`). */
function medianOf(values: bigint[]): bigint {
  values.sort(compareBigints);
  return values[Math.floor((values.length - 1) / 2)]!;
}
