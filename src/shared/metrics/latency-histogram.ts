/**
 * Durations kept as counts in log-scale buckets, so that the histograms of several threads add up
 * exactly and quantiles are read from the sum: a transport thread records its JSON-RPC calls into its
 * own histograms (no lock, no message per call) and the supervisor adds every thread's together when
 * /metrics is scraped. Quantiles computed from per-thread quantiles could not be combined.
 *
 * Eight buckets per doubling from 1 µs: a quantile is reported as its bucket's geometric middle, within
 * 4.5 % of the true value; 240 buckets reach 2^30 µs (about 18 minutes), longer durations count in the last.
 */

export const BUCKETS_PER_DOUBLING = 8;
export const BUCKET_COUNT = 240;
const SMALLEST_SECONDS = 1e-6;

/** The bucket a duration falls in. */
export function bucketOf(seconds: number): number {
  if (!(seconds > SMALLEST_SECONDS)) return 0;
  const index = Math.floor(Math.log2(seconds / SMALLEST_SECONDS) * BUCKETS_PER_DOUBLING);
  return index < BUCKET_COUNT ? index : BUCKET_COUNT - 1;
}

/** The value a bucket stands for: the geometric middle of its bounds. */
export function bucketValue(index: number): number {
  return SMALLEST_SECONDS * 2 ** ((index + 0.5) / BUCKETS_PER_DOUBLING);
}

export function emptyBuckets(): Uint32Array {
  return new Uint32Array(BUCKET_COUNT);
}

/** Adds `from` into `into`, bucket by bucket. */
export function addBuckets(into: Uint32Array, from: Uint32Array): void {
  for (let i = 0; i < BUCKET_COUNT; i++) into[i]! += from[i]!;
}

/**
 * The `q`-quantile (0 < q ≤ 1) of the durations counted in `buckets`, or NaN when there are none (as a
 * Prometheus summary reports a quantile over an empty window). `max`, the largest duration seen, is
 * returned for q = 1 and caps the others, which a bucket's middle could otherwise exceed.
 */
export function quantileOf(buckets: Uint32Array, q: number, max: number): number {
  let total = 0;
  for (let i = 0; i < BUCKET_COUNT; i++) total += buckets[i]!;
  if (total === 0) return Number.NaN;
  if (q >= 1) return max;
  // The rank of the quantile among the sorted durations, as Prometheus' summaries take it (⌈q·n⌉).
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < BUCKET_COUNT; i++) {
    seen += buckets[i]!;
    if (seen >= rank) return Math.min(bucketValue(i), max);
  }
  return max;
}
