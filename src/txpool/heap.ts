/** A binary min-heap ordered by `before(a, b)` (true when `a` must come out first). */
export class BinaryHeap<T> {
  private items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    this.siftDown(0);
    return top;
  }

  /** Replaces the content with `items` in linear time. */
  reset(items: Iterable<T>): void {
    this.items = [...items];
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private siftDown(start: number): void {
    const items = this.items;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let first = i;
      if (left < items.length && this.before(items[left]!, items[first]!)) first = left;
      if (right < items.length && this.before(items[right]!, items[first]!)) first = right;
      if (first === i) break;
      [items[i], items[first]] = [items[first]!, items[i]!];
      i = first;
    }
  }
}

/**
 * A heap of items that may go stale after they were pushed (an item is live while `isLive` says so):
 * stale tops are discarded when the top is asked for, and the heap is rebuilt from the live items
 * once stale ones outnumber them. Cheaper than keeping an index for in-place removal when items move
 * in and out often.
 */
export class LazyHeap<T> {
  private readonly heap: BinaryHeap<T>;

  constructor(
    before: (a: T, b: T) => boolean,
    private readonly isLive: (item: T) => boolean,
  ) {
    this.heap = new BinaryHeap(before);
  }

  push(item: T): void {
    this.heap.push(item);
  }

  /** The first live item, or undefined when none is left. */
  peek(): T | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined || this.isLive(top)) return top;
      this.heap.pop();
    }
  }

  /** Rebuilds from `live()` when the heap holds more than twice `liveCount` items (plus some slack). */
  compact(liveCount: number, live: () => Iterable<T>): void {
    if (this.heap.size > 2 * liveCount + 1024) this.heap.reset(live());
  }

  reset(items: Iterable<T>): void {
    this.heap.reset(items);
  }
}
