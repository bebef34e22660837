/**
 * Registry entries: QBFT group (qbft_*), owned by the consensus actor (qbft-and-p2p.md §6.1,
 * rpc-auth-cli.md §3.7). Spread into the ONE registry in ../registry.ts; see MethodSpec there.
 */
import type { MethodSpec } from '../registry.js';
import { RpcErrors } from '../errors.js';
import { parseAddress, parseBlockTag, parseBoolean, parseHash, type BlockTag } from '../params.js';

export type ValidatorVoteParams = { address: Uint8Array; add: boolean };
export type ValidatorAddressParams = { address: Uint8Array };
export type ValidatorsByBlockNumberParams = { block: BlockTag };
export type ValidatorsByBlockHashParams = { hash: Uint8Array };
/** Both ends optional: `from` defaults to head - 100, `to` (exclusive) to the head. */
export type SignerMetricsParams = { from?: BlockTag; to?: BlockTag };

const noParams = (): null => null;

function optionalBlockTag(raw: unknown): BlockTag | undefined {
  return raw === undefined || raw === null ? undefined : parseBlockTag(raw, RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
}

export const qbftMethods = {
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
