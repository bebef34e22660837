/**
 * A virtual clock for deterministic simulations: timers fire in (time, creation) order, time jumps
 * straight to the next timer, and every promise a timer callback starts settles before the next
 * timer fires. The same inputs therefore always give the same run, however long it simulates.
 */
import type { Scheduler } from '../../../src/consensus/runner.js';

interface Entry {
  at: number;
  sequence: number;
  fn: () => void;
  cancelled: boolean;
}

/** Lets every pending promise reaction run (setImmediate comes after the microtask queue is empty). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class VirtualClock implements Scheduler {
  private current: number;
  private sequence = 0;
  private readonly heap: Entry[] = [];
  /** Timer callbacks run so far. */
  fired = 0;

  constructor(startMs: number) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  at(atMs: number, fn: () => void): () => void {
    const entry: Entry = { at: Math.max(atMs, this.current), sequence: ++this.sequence, fn, cancelled: false };
    this.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** Runs timers up to and including `endMs` (or until `stop()` says so); time ends at `endMs`. */
  async runUntil(endMs: number, stop?: () => boolean): Promise<void> {
    await settle();
    while (this.heap.length > 0 && this.heap[0]!.at <= endMs) {
      const entry = this.pop();
      if (entry.cancelled) continue;
      this.current = entry.at;
      this.fired += 1;
      entry.fn();
      await settle();
      if (stop?.()) return;
    }
    this.current = Math.max(this.current, endMs);
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.sequence < b.sequence);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Entry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && this.less(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && this.less(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}
