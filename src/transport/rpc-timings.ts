/**
 * This transport thread's JSON-RPC calls per method, for `besu_rpc_request_time`: a count and a total
 * since the start, and the durations of the last ten minutes in log-scale buckets
 * (latency-histogram.ts), from which the supervisor reads the summary's quantiles after adding every
 * thread's. Besu's summaries (Prometheus' Java client) look back 10 minutes in 5 age buckets; so does
 * this one: each call counts in the current 2-minute slot, and the oldest slot is emptied as time moves.
 *
 * Recording a call touches this thread's memory only: a clock read, a map lookup, a few increments.
 */
import { bucketOf, emptyBuckets, addBuckets } from '../shared/metrics/latency-histogram.js';
import type { MethodTimings } from '../shared/metrics/thread-metrics.js';

const AGE_BUCKETS = 5;
const SLOT_MS = 120_000;

interface MethodRecord {
  count: number;
  sumSeconds: number;
  slots: Uint32Array[];
  slotMaxSeconds: Float64Array;
}

/** Times calls: `start()` when one begins, `record()` with its method when it has answered. */
export interface CallTimer {
  start(): number;
  record(method: string, startedMs: number): void;
}

export class RpcTimings implements CallTimer {
  private readonly methods = new Map<string, MethodRecord>();
  private slot = 0;
  private rotateAt: number;

  /** `now` in milliseconds, monotonic. */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.rotateAt = now() + SLOT_MS;
  }

  start(): number {
    return this.now();
  }

  record(method: string, startedMs: number): void {
    const now = this.now();
    if (now >= this.rotateAt) this.rotate(now);
    const seconds = (now - startedMs) / 1000;
    let record = this.methods.get(method);
    if (record === undefined) {
      record = { count: 0, sumSeconds: 0, slots: Array.from({ length: AGE_BUCKETS }, emptyBuckets), slotMaxSeconds: new Float64Array(AGE_BUCKETS) };
      this.methods.set(method, record);
    }
    record.count++;
    record.sumSeconds += seconds;
    record.slots[this.slot]![bucketOf(seconds)]!++;
    if (seconds > record.slotMaxSeconds[this.slot]!) record.slotMaxSeconds[this.slot] = seconds;
  }

  /** Every method called since the start, with the calls of its window. */
  snapshot(): MethodTimings[] {
    const now = this.now();
    if (now >= this.rotateAt) this.rotate(now);
    return [...this.methods].map(([method, record]) => {
      const window = emptyBuckets();
      for (const slot of record.slots) addBuckets(window, slot);
      return { method, count: record.count, sumSeconds: record.sumSeconds, window, windowMaxSeconds: Math.max(...record.slotMaxSeconds) };
    });
  }

  /** Moves to the slot `now` falls in, emptying each slot passed on the way (all of them after a long pause). */
  private rotate(now: number): void {
    const steps = Math.min(AGE_BUCKETS, Math.floor((now - this.rotateAt) / SLOT_MS) + 1);
    for (let i = 0; i < steps; i++) {
      this.slot = (this.slot + 1) % AGE_BUCKETS;
      for (const record of this.methods.values()) {
        record.slots[this.slot]!.fill(0);
        record.slotMaxSeconds[this.slot] = 0;
      }
    }
    this.rotateAt += (Math.floor((now - this.rotateAt) / SLOT_MS) + 1) * SLOT_MS;
  }
}
