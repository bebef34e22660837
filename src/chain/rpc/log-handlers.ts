/**
 * Logs, and block and log filters (registry: log-methods.ts; shapes and errors: rpc-auth-cli.md §5).
 * These read only blocks, receipts and the head number through `LogSource`, so that they can move to
 * an actor of their own with a log index behind the same interface.
 */
import type { Block } from '@ethereumjs/block';
import { RpcError, RpcErrors, logsCountExceeded } from '../../shared/rpc/errors.js';
import { FilterRegistry, type InstalledFilter } from '../../shared/rpc/filter-registry.js';
import { formatFilterLog, toData } from '../../shared/rpc/format.js';
import { logMatches } from '../../shared/rpc/log-match.js';
import type { logMethods } from '../../shared/rpc/methods/log-methods.js';
import type { BlockTag, LogFilter } from '../../shared/rpc/params.js';
import type { Json } from '../../shared/rpc/types.js';
import type { LogRecord } from '../../shared/actors/messages.js';
import type { ChainStore } from '../chain-store.js';
import { bloomMayMatch } from '../log-bloom.js';
import { LruCache } from '../../shared/util/lru-cache.js';
import type { RawLog } from '../../shared/ethereum/chain-records.js';
import { bytesToHex } from '@ethereumjs/util';
import type { DomainHandlers } from './chain-rpc.js';

/** What the log handlers read. */
export interface LogSource {
  readonly store: Pick<ChainStore, 'getBlock' | 'getBlockByNumber' | 'getCanonicalHash' | 'getReceipts'>;
  readonly headNumber: () => bigint;
  /** `--rpc-max-logs-range` (0 = unlimited). */
  readonly rpcMaxLogsRange: bigint;
  /** `--rpc-max-logs-count` (0 = unlimited). */
  readonly rpcMaxLogsCount: number;
}

/** The logs of one block that match a filter, with where each sits; the bloom filter skips most blocks. */
export async function matchingLogs(
  store: Pick<ChainStore, 'getReceipts'>,
  block: Block,
  filter: Pick<LogFilter, 'addresses' | 'topics'>,
): Promise<LogRecord[]> {
  if (!bloomMayMatch(block.header.logsBloom, filter.addresses, filter.topics)) return [];
  const receipts = (await store.getReceipts(block.hash())) ?? [];
  const found: LogRecord[] = [];
  let logIndex = 0;
  receipts.forEach((receipt, txIndex) => {
    for (const log of receipt.logs) {
      if (logMatches(log, filter.addresses, filter.topics)) {
        const location = {
          blockHash: block.hash(),
          blockNumber: block.header.number,
          blockTimestamp: block.header.timestamp,
          txHash: block.transactions[txIndex]!.hash(),
          txIndex,
          logIndex,
        };
        found.push({ log, location });
      }
      logIndex++;
    }
  });
  return found;
}

/**
 * Each block's logs with their eth_getLogs objects, made once per block (a block's logs never change
 * under its hash) and shared, frozen, by every answer that includes them: a query of a range it has
 * seen only matches. Bounded like the block cache, by logs.
 */
const LOG_CACHE_LIMITS = { entries: 64, weight: 8_192 };
type FormattedLog = { log: RawLog; json: Json };

export function logHandlers({ store, headNumber, rpcMaxLogsRange, rpcMaxLogsCount }: LogSource): DomainHandlers<typeof logMethods> {
  const filters = new FilterRegistry<InstalledFilter>();
  const formatted = new LruCache<string, FormattedLog[]>(LOG_CACHE_LIMITS, (logs) => Math.max(1, logs.length));
  const overCount = (count: number): boolean => rpcMaxLogsCount > 0 && count > rpcMaxLogsCount;
  /** Refuses an answer past the count limit as soon as it gets there, before it grows further. */
  const checkCount = (logs: Json[]): Json[] => {
    if (overCount(logs.length)) throw new RpcError(logsCountExceeded(rpcMaxLogsCount));
    return logs;
  };

  /** Every log of a block with its eth_getLogs object. */
  const formattedLogsOf = async (block: Block): Promise<FormattedLog[]> => {
    const hash = block.hash();
    const key = bytesToHex(hash);
    const cached = formatted.get(key);
    if (cached !== undefined) return cached;
    const receipts = (await store.getReceipts(hash)) ?? [];
    const logs: FormattedLog[] = [];
    receipts.forEach((receipt, txIndex) => {
      for (const log of receipt.logs) {
        const location = {
          blockHash: hash,
          blockNumber: block.header.number,
          blockTimestamp: block.header.timestamp,
          txHash: block.transactions[txIndex]!.hash(),
          txIndex,
          logIndex: logs.length,
        };
        logs.push({ log, json: Object.freeze(formatFilterLog(log, location)) });
      }
    });
    formatted.set(key, logs);
    return logs;
  };

  /** Logs of one block that match, in eth_getLogs shape. */
  const logsOfBlock = async (block: Block, filter: Pick<LogFilter, 'addresses' | 'topics'>): Promise<Json[]> => {
    if (!bloomMayMatch(block.header.logsBloom, filter.addresses, filter.topics)) return [];
    const found: Json[] = [];
    for (const { log, json } of await formattedLogsOf(block)) if (logMatches(log, filter.addresses, filter.topics)) found.push(json);
    return found;
  };

  /** A range end of a log filter: `finalized`/`safe` do not exist on this chain (spec §5 rule 3). */
  const resolveRangeEnd = (tag: BlockTag): bigint => {
    if (tag.kind === 'number') return tag.number;
    if (tag.tag === 'earliest') return 0n;
    if (tag.tag === 'latest' || tag.tag === 'pending') return headNumber();
    throw new RpcError(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
  };

  const logsInRange = async (filter: LogFilter, from: bigint, to: bigint): Promise<Json[]> => {
    const logs: Json[] = [];
    for (let n = from; n <= to; n++) {
      const block = await store.getBlockByNumber(n);
      if (block) append(logs, await logsOfBlock(block, filter));
      checkCount(logs);
    }
    return logs;
  };

  const queryLogs = async (filter: LogFilter, checkRange: boolean): Promise<Json[]> => {
    if (filter.blockHash !== undefined) {
      const block = await store.getBlock(filter.blockHash);
      if (!block) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return checkCount(await logsOfBlock(block, filter));
    }
    const from = resolveRangeEnd(filter.fromBlock);
    const to = resolveRangeEnd(filter.toBlock);
    if (checkRange) {
      if (from > to || to > headNumber()) throw new RpcError(RpcErrors.INVALID_PARAMS);
      if (rpcMaxLogsRange > 0n && to - from > rpcMaxLogsRange) throw new RpcError(RpcErrors.EXCEEDS_RPC_MAX_LOGS_RANGE);
    }
    return logsInRange(filter, from, to > headNumber() ? headNumber() : to);
  };

  return {
    eth_getLogs: async ({ filter }) => queryLogs(filter, true),
    eth_newFilter: ({ filter }) => filters.install({ kind: 'log', filter, nextBlock: headNumber() + 1n, lastUsed: Date.now() }),
    eth_newBlockFilter: () => filters.install({ kind: 'block', nextBlock: headNumber() + 1n, lastUsed: Date.now() }),
    // An unknown id answers null so that the pool, which holds pending-transaction filters, is asked.
    eth_getFilterChanges: async ({ id }) => {
      const installed = filters.use(id);
      if (!installed) return null;
      const head = headNumber();
      const from = installed.nextBlock;
      installed.nextBlock = head + 1n;
      if (installed.kind === 'block') {
        const hashes: Json[] = [];
        for (let n = from; n <= head; n++) {
          const hash = await store.getCanonicalHash(n);
          if (hash) hashes.push(toData(hash));
        }
        return hashes;
      }
      const { toBlock } = installed.filter;
      const last = toBlock.kind === 'number' && toBlock.number < head ? toBlock.number : head;
      // Past the count limit the answer stops after a whole block and the next poll carries on from
      // the block after it: a filter's logs are handed out in parts, never dropped.
      const logs: Json[] = [];
      for (let n = from; n <= last; n++) {
        const block = await store.getBlockByNumber(n);
        const found = block ? await logsOfBlock(block, installed.filter) : [];
        if (logs.length > 0 && overCount(logs.length + found.length)) {
          installed.nextBlock = n;
          break;
        }
        append(logs, found);
      }
      return logs;
    },
    eth_getFilterLogs: async ({ id }) => {
      const installed = filters.use(id);
      if (!installed || installed.kind !== 'log') throw new RpcError(RpcErrors.LOGS_FILTER_NOT_FOUND);
      return queryLogs(installed.filter, false);
    },
    eth_uninstallFilter: ({ id }) => (filters.uninstall(id) ? true : null),
  };
}

/** `target.push(...items)` without the argument-count limit of a spread (a block may hold 100k+ logs). */
function append(target: Json[], items: Json[]): void {
  for (const item of items) target.push(item);
}
