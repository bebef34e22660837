/**
 * Latency bookkeeping for the benchmarks: a growable sample buffer and nearest-rank percentiles.
 * Pure (no I/O) so the figures it produces can be checked by hand.
 */

/** Collects latency samples (milliseconds) without allocating per sample. */
export class LatencyRecorder {
  private samples = new Float64Array(1024);
  private size = 0;

  add(ms: number): void {
    if (this.size === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.size++] = ms;
  }

  get count(): number {
    return this.size;
  }

  /** The samples in ascending order (a copy). */
  sorted(): Float64Array {
    return this.samples.slice(0, this.size).sort();
  }
}

/** Nearest-rank percentile of ascending samples; NaN when there are none. */
export function percentile(sortedAscending: Float64Array, p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length, Math.max(1, rank)) - 1]!;
}

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarizeLatencies(recorder: LatencyRecorder): LatencySummary {
  const sorted = recorder.sorted();
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** Counts occurrences of each distinct message (for rejection reasons). */
export class MessageTally {
  private readonly counts = new Map<string, number>();

  add(message: string): void {
    this.counts.set(message, (this.counts.get(message) ?? 0) + 1);
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  /** Most frequent first. */
  entries(): Array<[string, number]> {
    return [...this.counts.entries()].sort((a, b) => b[1] - a[1]);
  }
}
