/**
 * Registry entries: QBFT votes and validators (qbft-and-p2p.md §6.1, rpc-auth-cli.md §3.7) and block
 * production (Besu's BFT mining coordinator), answered by the consensus actor.
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseAddress, parseBlockTag, parseBoolean, parseHash } from '../params.js';
import { noParams, optionalBlockTag, type SignerMetricsParams, type ValidatorAddressParams, type ValidatorVoteParams, type ValidatorsByBlockHashParams, type ValidatorsByBlockNumberParams } from './param-shapes.js';

export const qbftMethods = {
  eth_mining: { group: 'ETH', owner: 'consensus', parseParams: noParams },
  miner_start: { group: 'MINER', owner: 'consensus', parseParams: noParams },
  miner_stop: { group: 'MINER', owner: 'consensus', parseParams: noParams },
  qbft_proposeValidatorVote: {
    group: 'QBFT',
    owner: 'consensus',
    parseParams: (raw: readonly unknown[]): ValidatorVoteParams => {
      const address = parseAddress(raw[0], RpcErrors.INVALID_ADDRESS_PARAMS);
      return { address, add: parseBoolean(raw[1], RpcErrors.INVALID_VOTE_TYPE_PARAMS) };
    },
  },
  qbft_discardValidatorVote: {
    group: 'QBFT',
    owner: 'consensus',
    parseParams: (raw: readonly unknown[]): ValidatorAddressParams => ({
      address: parseAddress(raw[0], RpcErrors.INVALID_ADDRESS_PARAMS),
    }),
  },
  qbft_getPendingVotes: { group: 'QBFT', owner: 'consensus', parseParams: noParams },
  qbft_getValidatorsByBlockNumber: {
    group: 'QBFT',
    owner: 'consensus',
    parseParams: (raw: readonly unknown[]): ValidatorsByBlockNumberParams => ({
      block: parseBlockTag(raw[0], RpcErrors.INVALID_BLOCK_PARAMS),
    }),
  },
  qbft_getValidatorsByBlockHash: {
    group: 'QBFT',
    owner: 'consensus',
    parseParams: (raw: readonly unknown[]): ValidatorsByBlockHashParams => ({
      hash: parseHash(raw[0], RpcErrors.INVALID_BLOCK_HASH_PARAMS),
    }),
  },
  qbft_getSignerMetrics: {
    group: 'QBFT',
    owner: 'consensus',
    parseParams: (raw: readonly unknown[]): SignerMetricsParams => {
      const from = optionalBlockTag(raw[0]);
      const to = optionalBlockTag(raw[1]);
      const params: SignerMetricsParams = {};
      if (from !== undefined) params.from = from;
      if (to !== undefined) params.to = to;
      return params;
    },
  },
  qbft_getRequestTimeoutSeconds: { group: 'QBFT', owner: 'consensus', parseParams: noParams },
} as const satisfies Record<string, MethodSpec>;
