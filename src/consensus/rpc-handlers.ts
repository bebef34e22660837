/**
 * The qbft_* JSON-RPC methods (qbft-and-p2p.md §6.1, §7; rpc-auth-cli.md §3.7), answered by the
 * consensus actor from its pending votes and validator tracker, reading headers through a chain view
 * (the chain actor in the node, the fake chain in the simulation).
 */
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import type { BlockTag } from '../shared/rpc/params.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { Json } from '../shared/rpc/types.js';
import { decodeExtraData } from '../shared/qbft/extra-data.js';
import { compareAddresses } from '../shared/qbft/seal.js';
import type { HeaderSummary, ValidatorTracker } from '../shared/qbft/validators.js';
import { addressHex } from '../shared/qbft/validators.js';
import type { PendingVotes } from '../shared/qbft/votes.js';

export interface QbftRpcChain {
  headNumber(): bigint;
  headerByNumber(number: bigint): Promise<HeaderSummary | undefined>;
  headerByHash(hash: Uint8Array): Promise<HeaderSummary | undefined>;
  /** Canonical headers `from..to` inclusive, ascending. */
  headers(from: bigint, to: bigint): Promise<HeaderSummary[]>;
}

export interface QbftRpcDependencies {
  chain: QbftRpcChain;
  tracker: ValidatorTracker;
  votes: PendingVotes;
}

/** How far back qbft_getSignerMetrics looks by default. */
const DEFAULT_METRICS_RANGE = 100n;
const HEADER_BATCH = 1024n;

const quantity = (value: bigint): string => '0x' + value.toString(16);

/** The qbft_* methods; block production switches (eth_mining, miner_*) belong to the node's consensus. */
export type QbftMethodHandlers = Omit<MethodHandlers<'consensus'>, 'eth_mining' | 'miner_start' | 'miner_stop'>;

export function createQbftRpcHandlers({ chain, tracker, votes }: QbftRpcDependencies): QbftMethodHandlers {
  const schedule = tracker.schedule;

  /** Votes exist only in block-header mode (§6.2, §7): the mode of the block after the head. */
  const requireVoting = async (): Promise<void> => {
    const head = chain.headNumber();
    // The head's timestamp matters only when some transition is by timestamp.
    const headHeader = schedule.hasTimestampTransitions ? await chain.headerByNumber(head) : undefined;
    const settings = headHeader ? schedule.settingsAfter(headHeader) : schedule.settingsFor(head);
    if (settings.validatorSelectionMode === 'contract') throw new RpcError(RpcErrors.METHOD_NOT_ENABLED);
  };

  /**
   * The validators "of" a block as Besu reports them: block-header mode → the list in that block's
   * extraData (the set that signed it); contract mode → the contract on that block's own state.
   */
  const validatorsOfBlock = async (header: HeaderSummary): Promise<Json> => {
    const settings = schedule.settingsFor(header.number, header.timestamp);
    const validators =
      settings.validatorSelectionMode === 'contract'
        ? await tracker.contractValidators(header.number, settings.validatorContractAddress!)
        : [...decodeExtraData(header.extraData).validators].sort(compareAddresses);
    return validators.map(addressHex);
  };

  const resolveMetricsBlock = (tag: BlockTag, head: bigint): bigint => {
    if (tag.kind === 'number') return tag.number;
    // QBFT blocks are final once imported: safe and finalized are the head too.
    return tag.tag === 'earliest' ? 0n : head;
  };

  return {
    qbft_proposeValidatorVote: async ({ address, add }) => {
      await requireVoting();
      votes.propose(address, add);
      return true;
    },
    qbft_discardValidatorVote: async ({ address }) => {
      await requireVoting();
      votes.discard(address);
      return true;
    },
    qbft_getPendingVotes: async () => {
      await requireVoting();
      return votes.toJson();
    },
    qbft_getValidatorsByBlockNumber: async ({ block }) => {
      const head = chain.headNumber();
      let number: bigint;
      if (block.kind === 'number') number = block.number;
      else if (block.tag === 'earliest') number = 0n;
      else if (block.tag === 'latest') number = head;
      else if (block.tag === 'pending') {
        const headHeader = await chain.headerByNumber(head);
        return headHeader ? (await tracker.validatorsAfter(headHeader)).map(addressHex) : null;
      }
      else throw new RpcError(RpcErrors.UNKNOWN_BLOCK);
      if (number > head) return null;
      const header = await chain.headerByNumber(number);
      return header ? validatorsOfBlock(header) : null;
    },
    qbft_getValidatorsByBlockHash: async ({ hash }) => {
      const header = await chain.headerByHash(hash);
      return header ? validatorsOfBlock(header) : null;
    },
    qbft_getSignerMetrics: async ({ from, to }) => {
      const head = chain.headNumber();
      let toBlock = to === undefined ? head : resolveMetricsBlock(to, head);
      if (toBlock > head) toBlock = head;
      let fromBlock = from === undefined ? head - DEFAULT_METRICS_RANGE : resolveMetricsBlock(from, head);
      if (fromBlock < 0n) fromBlock = 0n;
      if (fromBlock >= toBlock) throw new RpcError(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);

      const metrics = new Map<string, { count: bigint; last: bigint }>();
      for (let start = fromBlock; start < toBlock; start += HEADER_BATCH) {
        const end = start + HEADER_BATCH - 1n < toBlock - 1n ? start + HEADER_BATCH - 1n : toBlock - 1n;
        for (const header of await chain.headers(start, end)) {
          const key = addressHex(header.coinbase);
          const entry = metrics.get(key) ?? { count: 0n, last: 0n };
          entry.count += 1n;
          if (header.number > entry.last) entry.last = header.number;
          metrics.set(key, entry);
        }
      }
      // Validators after the last block of the range are listed even when they proposed nothing.
      const toHeader = schedule.hasTimestampTransitions ? await chain.headerByNumber(toBlock) : undefined;
      for (const validator of await tracker.validatorsFor(toBlock, toHeader?.timestamp)) {
        const key = addressHex(validator);
        if (!metrics.has(key)) metrics.set(key, { count: 0n, last: 0n });
      }
      return [...metrics].map(([address, { count, last }]) => ({
        address,
        proposedBlockCount: quantity(count),
        lastProposedBlockNumber: quantity(last),
      }));
    },
    qbft_getRequestTimeoutSeconds: () => schedule.fixed.requestTimeoutSeconds,
  };
}
