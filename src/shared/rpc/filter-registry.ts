/**
 * Installed filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) with Besu's
 * ids and idle expiry. Kept by the actor that owns a filter's data (chain for logs and blocks, the
 * pool for pending transactions); the registry keeps only ids and cursors, never logs.
 */
import { randomBytes } from 'node:crypto';
import type { LogFilter } from './params.js';

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

  /**
   * The filters still alive. Expired ones go first: a pending-transaction filter that nobody polls
   * anymore would otherwise gather every new transaction's hash for as long as the node runs.
   */
  *all(): Iterable<F> {
    this.sweep();
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
