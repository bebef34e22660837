/**
 * Logs, and block and log filters (registry: log-methods.ts; shapes and errors: rpc-auth-cli.md §5),
 * answered from the log index. Each answer reads one view of the index (LogIndex.read) and is put
 * together from each log's JSON text, made once per log and kept with its block.
 */
import { RpcError, RpcErrors, logsCountExceeded } from '../shared/rpc/errors.js';
import { FilterRegistry, type InstalledFilter } from '../shared/rpc/filter-registry.js';
import { toData } from '../shared/rpc/encoding.js';
import { formatFilterLog } from '../shared/rpc/format-logs.js';
import { answerText, jsonArrayParts, type JsonText } from '../shared/rpc/json-text.js';
import { logMatches } from '../shared/rpc/log-match.js';
import type { MethodTextHandlers } from '../shared/rpc/dispatch.js';
import type { BlockTag, LogFilter, TopicFilter } from '../shared/rpc/params.js';
import { LruCache } from '../shared/util/lru-cache.js';
import { bytesToHex } from '../shared/util/bytes.js';
import type { IndexedBlock, LogQuery, LogRecord } from '../shared/actors/messages.js';
import type { BlockLogs, IndexedLog } from './index-store.js';
import type { IndexView, LogIndex } from './log-index.js';

export interface LogLimits {
  /** `--rpc-max-logs-range` (0 = unlimited). */
  rpcMaxLogsRange: bigint;
  /** `--rpc-max-logs-count` (0 = unlimited). */
  rpcMaxLogsCount: number;
}

type Matcher = Pick<LogFilter, 'addresses' | 'topics'>;

/** Where log `logIndex` of `block` sits. */
function locationOf(block: BlockLogs, log: IndexedLog, logIndex: number): LogRecord['location'] {
  return {
    blockHash: block.hash,
    blockNumber: block.number,
    blockTimestamp: block.timestamp,
    txHash: block.txHashes[log.txIndex]!,
    txIndex: log.txIndex,
    logIndex,
  };
}

/** The eth_getLogs text of each matching log of `block`, in order. */
function matchingTexts(block: BlockLogs, filter: Matcher): string[] {
  return matchingLogs(block, filter).texts;
}

/** A block's matching logs as one piece of an answer: their texts, and those joined with commas. */
interface BlockMatches {
  texts: string[];
  joined: string;
}

function matchingLogs(block: BlockLogs, filter: Matcher): BlockMatches {
  const found: string[] = [];
  block.logs.forEach((entry, logIndex) => {
    if (!logMatches(entry.log, filter.addresses, filter.topics)) return;
    entry.json ??= JSON.stringify(formatFilterLog(entry.log, locationOf(block, entry, logIndex)));
    found.push(entry.json);
  });
  return { texts: found, joined: found.join(',') };
}

/**
 * Each block's matches of the filters asked lately, by block hash and filter: an answer over blocks
 * it has seen with a filter it has seen is a few pieces put together. Weighed by logs.
 */
const MATCHES_CACHE_LIMITS = { entries: 4096, weight: 64 * 1024 };

/** What tells two filters' matches apart: their addresses and topic positions. */
function signatureOf({ addresses, topics }: Matcher): string {
  const position = (wanted: TopicFilter) => (wanted === null ? 'null' : `[${wanted.map(toData).join(',')}]`);
  return `[${addresses.map(toData).join(',')}][${topics.map(position).join(',')}]`;
}

/** A block from the chain (one the index does not hold) as queries read it. */
function asBlockLogs({ number, hash, timestamp, txHashes, logs }: IndexedBlock): BlockLogs {
  return { number, hash, timestamp, txHashes, logs };
}

/** `texts` as a JSON array; a large one as bytes (json-text.ts). */
const jsonArray = (texts: readonly string[]): JsonText => answerText(jsonArrayParts(texts));

/** An answer of whole blocks' pieces, each block's matches already joined. */
function jsonArrayOfPieces(pieces: readonly BlockMatches[]): JsonText {
  return jsonArray(pieces.map(({ joined }) => joined).filter((joined) => joined !== ''));
}

export function logRpcHandlers(index: LogIndex, { rpcMaxLogsRange, rpcMaxLogsCount }: LogLimits): MethodTextHandlers<'logindex'> {
  const filters = new FilterRegistry<InstalledFilter>();
  const overCount = (count: number): boolean => rpcMaxLogsCount > 0 && count > rpcMaxLogsCount;
  /** Refuses an answer past the count limit as soon as it gets there, before it grows further. */
  const checkCount = (texts: string[]): string[] => {
    if (overCount(texts.length)) throw new RpcError(logsCountExceeded(rpcMaxLogsCount));
    return texts;
  };
  const headOf = (view: IndexView): bigint => view.head?.number ?? -1n;
  const matchesCache = new LruCache<string, BlockMatches>(MATCHES_CACHE_LIMITS, (matches) => Math.max(1, matches.texts.length));
  /** `block`'s matches of a filter whose signature is `signature`, made once. */
  const matchesOf = (block: BlockLogs, filter: Matcher, signature: string): BlockMatches => {
    const key = `${bytesToHex(block.hash)}#${signature}`;
    let matches = matchesCache.get(key);
    if (matches === undefined) matchesCache.set(key, (matches = matchingLogs(block, filter)));
    return matches;
  };

  /** A range end of a log filter: `finalized`/`safe` do not exist on this chain (spec §5 rule 3). */
  const resolveRangeEnd = (view: IndexView, tag: BlockTag): bigint => {
    if (tag.kind === 'number') return tag.number;
    if (tag.tag === 'earliest') return 0n;
    if (tag.tag === 'latest' || tag.tag === 'pending') return headOf(view);
    throw new RpcError(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
  };

  /** The matches of each block of `from..to` that may match, oldest first; refused past the count limit. */
  const logsInRange = async (view: IndexView, filter: Matcher, from: bigint, to: bigint): Promise<BlockMatches[]> => {
    const signature = signatureOf(filter);
    const pieces: BlockMatches[] = [];
    let count = 0;
    for (const number of await view.candidateBlocks(filter.addresses, filter.topics, from, to)) {
      const block = await view.blockLogs(number);
      if (block === undefined) continue;
      const matches = matchesOf(block, filter, signature);
      pieces.push(matches);
      count += matches.texts.length;
      if (overCount(count)) throw new RpcError(logsCountExceeded(rpcMaxLogsCount));
    }
    return pieces;
  };

  /** The block a `blockHash` filter names: the index's when canonical, else whatever the chain holds. */
  const blockByHash = async (view: IndexView, hash: Uint8Array): Promise<BlockLogs> => {
    const number = await view.numberOf(hash);
    const indexed = number === undefined ? undefined : await view.blockLogs(number);
    if (indexed !== undefined) return indexed;
    const fromChain = await view.blockFromChain(hash);
    if (fromChain === null) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
    return asBlockLogs(fromChain);
  };

  const queryLogs = (filter: LogFilter, checkRange: boolean): Promise<JsonText> =>
    index.read(async (view) => {
      if (filter.blockHash !== undefined) return jsonArray(checkCount(matchingTexts(await blockByHash(view, filter.blockHash), filter)));
      const head = headOf(view);
      const from = resolveRangeEnd(view, filter.fromBlock);
      const to = resolveRangeEnd(view, filter.toBlock);
      if (checkRange) {
        if (from > to || to > head) throw new RpcError(RpcErrors.INVALID_PARAMS);
        if (rpcMaxLogsRange > 0n && to - from > rpcMaxLogsRange) throw new RpcError(RpcErrors.EXCEEDS_RPC_MAX_LOGS_RANGE);
      }
      return jsonArrayOfPieces(await logsInRange(view, filter, from, to > head ? head : to));
    });

  return {
    eth_getLogs: ({ filter }) => queryLogs(filter, true),
    eth_newFilter: ({ filter }) =>
      index.read(async (view) => JSON.stringify(filters.install({ kind: 'log', filter, nextBlock: headOf(view) + 1n, lastUsed: Date.now() }))),
    eth_newBlockFilter: () => index.read(async (view) => JSON.stringify(filters.install({ kind: 'block', nextBlock: headOf(view) + 1n, lastUsed: Date.now() }))),
    // An unknown id answers null so that the pool, which holds pending-transaction filters, is asked.
    eth_getFilterChanges: ({ id }) =>
      index.read(async (view) => {
        const installed = filters.use(id);
        if (!installed) return 'null';
        const head = headOf(view);
        const from = installed.nextBlock;
        installed.nextBlock = head + 1n;
        if (installed.kind === 'block') {
          const hashes: string[] = [];
          for (let n = from; n <= head; n++) {
            const hash = await view.hashAt(n);
            if (hash) hashes.push(JSON.stringify(toData(hash)));
          }
          return jsonArray(hashes);
        }
        const { toBlock } = installed.filter;
        const last = toBlock.kind === 'number' && toBlock.number < head ? toBlock.number : head;
        // Past the count limit the answer stops after a whole block and the next poll carries on from
        // the block after it: a filter's logs are handed out in parts, never dropped.
        const texts: string[] = [];
        for (const number of await view.candidateBlocks(installed.filter.addresses, installed.filter.topics, from, last)) {
          const block = await view.blockLogs(number);
          const found = block === undefined ? [] : matchingTexts(block, installed.filter);
          if (texts.length > 0 && overCount(texts.length + found.length)) {
            installed.nextBlock = number;
            break;
          }
          append(texts, found);
        }
        return jsonArray(texts);
      }),
    eth_getFilterLogs: ({ id }) => {
      const installed = filters.use(id);
      if (!installed || installed.kind !== 'log') throw new RpcError(RpcErrors.LOGS_FILTER_NOT_FOUND);
      return queryLogs(installed.filter, false);
    },
    eth_uninstallFilter: ({ id }) => (filters.uninstall(id) ? 'true' : 'null'),
  };
}

/** Canonical logs of a block range as records (GraphQL's `logs`), clamped at the index's head. */
export function logRecords(index: LogIndex, { fromBlock, toBlock, addresses, topics }: LogQuery): Promise<LogRecord[]> {
  return index.read(async (view) => {
    const head = view.head?.number ?? -1n;
    const last = toBlock > head ? head : toBlock;
    const records: LogRecord[] = [];
    for (const number of await view.candidateBlocks(addresses, topics, fromBlock < 0n ? 0n : fromBlock, last)) {
      const block = await view.blockLogs(number);
      block?.logs.forEach((entry, logIndex) => {
        if (logMatches(entry.log, addresses, topics)) records.push({ log: entry.log, location: locationOf(block, entry, logIndex) });
      });
    }
    return records;
  });
}

/** `target.push(...items)` without the argument-count limit of a spread (a block may hold 100k+ logs). */
function append(target: string[], items: string[]): void {
  for (const item of items) target.push(item);
}
