/**
 * What one devp2p peer may make this node hold or do (qbft-and-p2p.md §10 "Max sizes"): the size of
 * a message, the rate of its requests and how many of them are answered at once, and the size of
 * the answers. A peer past a limit is disconnected (breach of protocol); see P2pService.breach.
 * Pure: time comes from the caller.
 */

/**
 * The largest message accepted, as its uncompressed length: RLPx frames carry a 3-byte size, and
 * devp2p forbids messages whose uncompressed length reaches 2^24 (16 MiB). Besu refuses the same on
 * reception; a lower cap would refuse large QBFT proposals and NewBlock messages it sends.
 */
export const MAX_MESSAGE_SIZE = 0xffffff;

/**
 * The most bytes of items one answer carries (GetBlockHeaders/Bodies, GetPooledTransactions):
 * Besu's default eth `maxMessageSize` (10 MiB). Fewer items than asked is a valid eth answer.
 */
export const MAX_ANSWER_BYTES = 10 * 1024 * 1024;

/** Pooled transactions served per GetPooledTransactions, and fetched per announcement (Besu: 256). */
export const MAX_POOLED_TRANSACTIONS_SERVED = 256;

/**
 * Requests (GetBlockHeaders, GetBlockBodies, GetPooledTransactions, GetReceipts) a peer may send: a
 * burst of `capacity`, then `perSecond` on average. Far above what a syncing or gossiping node asks
 * (Basalt's own sync keeps one request in flight; a Besu peer a handful), far below a flood.
 */
export const REQUEST_BUDGET = { capacity: 200, perSecond: 100 } as const;

/** Requests of one peer being answered at once; past that the peer is flooding. */
export const MAX_REQUESTS_IN_FLIGHT = 32;

/**
 * Other eth messages a peer may send (transactions, announcements, answers): gossip of a busy network
 * is a few dozen a second.
 */
export const MESSAGE_BUDGET = { capacity: 1000, perSecond: 500 } as const;

/** Hashes of one GetBlockBodies read: more than any server answers (Besu serves 128 bodies). */
export const MAX_HASHES_PER_REQUEST = 1024;

/** Our requests to one peer awaiting an answer, beyond which announced transactions are not fetched. */
export const MAX_FETCHES_PENDING = 16;

/** How long an inbound connection has to complete the RLPx handshake and Hello (Besu: 10 s). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** A token bucket: `take` answers false once the peer has spent its burst faster than the refill. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly budget: { readonly capacity: number; readonly perSecond: number },
    now: number,
  ) {
    this.tokens = budget.capacity;
    this.updatedAt = now;
  }

  take(now: number): boolean {
    const elapsed = Math.max(0, now - this.updatedAt);
    this.updatedAt = now;
    this.tokens = Math.min(this.budget.capacity, this.tokens + (elapsed * this.budget.perSecond) / 1000);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The uncompressed length a snappy block declares in its varint header, read before anything is
 * decompressed; undefined when the header is malformed (more than 32 bits or cut short).
 */
export function snappyDeclaredLength(compressed: Uint8Array): number | undefined {
  let length = 0;
  for (let i = 0, shift = 0; i < compressed.length && shift < 35; i++, shift += 7) {
    const byte = compressed[i]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return length < 2 ** 32 ? length : undefined;
  }
  return undefined;
}

/**
 * The leading items whose sizes add up to at most `maxBytes`, and at least the first item whatever its
 * size (a block larger than the cap can still be served on its own).
 */
export function leadingItemsWithin<T>(items: readonly T[], sizeOf: (item: T) => number, maxBytes: number): T[] {
  let total = 0;
  let count = 0;
  for (const item of items) {
    total += sizeOf(item);
    if (count > 0 && total > maxBytes) break;
    count++;
  }
  return items.slice(0, count);
}

/** Consecutive groups of items each at most `maxBytes` in total (an item larger than that alone). */
export function groupsWithin<T>(items: readonly T[], sizeOf: (item: T) => number, maxBytes: number): T[][] {
  const groups: T[][] = [];
  let rest = items;
  while (rest.length > 0) {
    const group = leadingItemsWithin(rest, sizeOf, maxBytes);
    groups.push(group);
    rest = rest.slice(group.length);
  }
  return groups;
}
