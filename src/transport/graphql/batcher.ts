/**
 * Per-query batching of actor reads (the DataLoader idea): every key asked for during one turn of
 * the event loop goes to the actor in one request on the next (setImmediate), and each key is asked
 * once per query. graphql-js resolves the fields of a whole list level in one turn — all 100 blocks'
 * `transactions`, then all their `logs` — so a query costs one request per kind of data per level,
 * not one per field.
 *
 * setImmediate rather than a microtask: resolvers reach their reads through chains of promises, and
 * a flush queued as a microtask would run before the deeper ones have asked.
 */

interface Waiting<V> {
  resolve(value: V): void;
  reject(error: unknown): void;
}

export class Batcher<K, V> {
  private readonly cache = new Map<string, Promise<V>>();
  private queued: { key: K; waiting: Waiting<V> }[] = [];

  constructor(
    /** Loads a list of keys in one request; answers in the same order. */
    private readonly load: (keys: K[]) => Promise<V[]>,
    private readonly keyOf: (key: K) => string,
    /** The most keys one request carries; a larger batch goes as several requests. */
    private readonly maxPerRequest = Number.MAX_SAFE_INTEGER,
  ) {}

  get(key: K): Promise<V> {
    const id = this.keyOf(key);
    const cached = this.cache.get(id);
    if (cached !== undefined) return cached;
    const promise = new Promise<V>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ key, waiting: { resolve, reject } });
    });
    this.cache.set(id, promise);
    return promise;
  }

  /** Records a value another read brought along, so that asking for it costs nothing. */
  prime(key: K, value: V): void {
    const id = this.keyOf(key);
    if (!this.cache.has(id)) this.cache.set(id, Promise.resolve(value));
  }

  private flush(): void {
    const queued = this.queued;
    this.queued = [];
    for (let start = 0; start < queued.length; start += this.maxPerRequest) {
      const chunk = queued.slice(start, start + this.maxPerRequest);
      // A load that throws at once (a query past its deadline) fails its keys like one that rejects.
      new Promise<V[]>((resolve) => resolve(this.load(chunk.map((entry) => entry.key)))).then(
        (values) => chunk.forEach((entry, i) => entry.waiting.resolve(values[i]!)),
        (error: unknown) => chunk.forEach((entry) => entry.waiting.reject(error)),
      );
    }
  }
}
