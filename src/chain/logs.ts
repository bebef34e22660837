/**
 * Log queries over stored receipts (eth_getLogs, log filters): which blocks a filter can match
 * (header bloom), which logs it does match, and the filter registry with Besu's idle expiry.
 * Matching is pure; the registry keeps only ids and cursors, never logs.
 */
import { randomBytes } from 'node:crypto';
import { Bloom } from '@ethereumjs/vm';
import { equalsBytes } from '@ethereumjs/util';
import type { LogFilter, TopicFilter } from '../rpc/params.js';
import type { RawLog } from './types.js';

/** Whether a block whose header has `bloom` may hold a log the filter matches. */
export function bloomMayMatch(bloom: Uint8Array, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const filter = new Bloom(bloom);
  if (addresses.length > 0 && !addresses.some((address) => filter.check(address))) return false;
  for (const position of topics) {
    if (position === null || position.length === 0) continue;
    if (!position.some((topic) => filter.check(topic))) return false;
  }
  return true;
}

/** Whether one log matches the filter's addresses and topic positions. */
export function logMatches(log: RawLog, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const [address, logTopics] = log;
  if (addresses.length > 0 && !addresses.some((candidate) => equalsBytes(candidate, address))) return false;
  // Every position of the filter, wildcards included, needs a topic in the log.
  if (topics.length > logTopics.length) return false;
  for (let i = 0; i < topics.length; i++) {
    const position = topics[i];
    if (position === null || position === undefined || position.length === 0) continue;
    const topic = logTopics[i];
    if (topic === undefined || !position.some((candidate) => equalsBytes(candidate, topic))) return false;
  }
  return true;
}

/** Besu's filter lifetime without a poll. */
export const FILTER_IDLE_TIMEOUT_MS = 10 * 60 * 1000;

export type InstalledFilter =
  | { kind: 'log'; filter: LogFilter; nextBlock: bigint; lastUsed: number }
  | { kind: 'block'; nextBlock: bigint; lastUsed: number };

/** `0x` + minimal hex of 16 random bytes: Besu's filter id. */
export function newFilterId(): string {
  const hex = randomBytes(16).toString('hex').replace(/^0+/, '');
  return `0x${hex === '' ? '0' : hex}`;
}

/** The filters of one node: created, polled, expired after 10 idle minutes, uninstalled. */
export class FilterRegistry<F extends { lastUsed: number }> {
  private readonly filters = new Map<string, F>();

  constructor(private readonly now: () => number = Date.now) {}

  install(filter: F): string {
    this.sweep();
    let id = newFilterId();
    while (this.filters.has(id)) id = newFilterId();
    this.filters.set(id, filter);
    return id;
  }

  /** The filter with `id`, marked as used now; undefined when unknown or expired. */
  use(id: string): F | undefined {
    this.sweep();
    const filter = this.filters.get(normaliseId(id));
    if (filter) filter.lastUsed = this.now();
    return filter;
  }

  uninstall(id: string): boolean {
    this.sweep();
    return this.filters.delete(normaliseId(id));
  }

  *all(): Iterable<F> {
    yield* this.filters.values();
  }

  private sweep(): void {
    const cutoff = this.now() - FILTER_IDLE_TIMEOUT_MS;
    for (const [id, filter] of this.filters) if (filter.lastUsed < cutoff) this.filters.delete(id);
  }
}

/** Ids are quantities: `0x00ab` names the same filter as `0xab`. */
function normaliseId(id: string): string {
  const digits = id.toLowerCase().replace(/^0x/, '').replace(/^0+/, '');
  return `0x${digits === '' ? '0' : digits}`;
}
