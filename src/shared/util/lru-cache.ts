/**
 * A least-recently-used map bounded by its number of entries and by the sum of their weights (what an
 * entry costs in memory, in whatever unit the owner counts: transactions of a block, bytes...). A
 * count alone does not bound memory when entries differ in size by orders of magnitude, as an empty
 * block and a block of 2,000 transactions do.
 */
export interface CacheLimits {
  entries: number;
  /** Largest sum of weights; an entry heavier than this on its own is not kept. */
  weight: number;
}

export class LruCache<K, V> {
  /** Map iteration order is insertion order: the first key is the least recently used. */
  private readonly map = new Map<K, { value: V; weight: number }>();
  private totalWeight = 0;

  constructor(
    readonly limits: CacheLimits,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get weight(): number {
    return this.totalWeight;
  }

  get(key: K): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.weigh(value);
    if (weight > this.limits.weight) return;
    this.map.set(key, { value, weight });
    this.totalWeight += weight;
    while (this.map.size > this.limits.entries || this.totalWeight > this.limits.weight) {
      this.delete(this.map.keys().next().value as K);
    }
  }

  delete(key: K): void {
    const entry = this.map.get(key);
    if (entry === undefined) return;
    this.map.delete(key);
    this.totalWeight -= entry.weight;
  }

  clear(): void {
    this.map.clear();
    this.totalWeight = 0;
  }
}
