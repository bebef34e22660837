/**
 * Registry entries: Gas prices, fee history and the fork configuration (chain actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseBlockTag, parseBlockCount, parseRewardPercentiles } from '../params.js';
import { noParams, type FeeHistoryParams } from './param-shapes.js';

export const feeMethods = {
  eth_gasPrice: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_maxPriorityFeePerGas: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_feeHistory: {
    group: 'ETH',
    owner: 'chain',
    parseParams: (raw: readonly unknown[]): FeeHistoryParams => {
      const blockCount = parseBlockCount(raw[0]);
      const newestBlock = parseBlockTag(raw[1], RpcErrors.INVALID_BLOCK_PARAMS);
      const rewardPercentiles = parseRewardPercentiles(raw[2]);
      return rewardPercentiles === undefined ? { blockCount, newestBlock } : { blockCount, newestBlock, rewardPercentiles };
    },
  },
  eth_blobBaseFee: { group: 'ETH', owner: 'chain', parseParams: noParams },
  eth_config: { group: 'ETH', owner: 'chain', parseParams: noParams },
} as const satisfies Record<string, MethodSpec>;
