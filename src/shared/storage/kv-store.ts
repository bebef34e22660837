import { bytesToHex } from '../util/bytes.js';
import { loadRocksdb, type RocksHandle, type RocksOp } from './rocksdb-binding.js';

export type KvOp = RocksOp;

export interface WriteOptions {
  /**
   * RocksDB's `WriteOptions.sync`: the write returns only once its write-ahead-log record is
   * fdatasync'ed, so it survives a power cut. Without it the record is in the OS page cache when the
   * write returns: it survives the process being killed, not the machine going down.
   */
  sync?: boolean;
}

/**
 * The promise-shaped face of a RocksDB handle (the chain's database, and the log index's own). Writes only happen in batches so that a block's
 * data, its state and the head pointer land atomically: a batch is one record of RocksDB's
 * write-ahead log, and recovery (point-in-time, RocksDB's default) replays whole records only.
 */
export class KvStore {
  /** Reads and writes still running: close() waits for them, RocksDB must not close under them. */
  private inFlight = 0;
  private drained: (() => void) | undefined;
  private closed = false;
  /** First bytes of the keys whose misses are remembered (`rememberMisses`). */
  private readonly missPrefixes = new Set<number>();
  /** Keys with those first bytes found absent since the last write, in hex. */
  private readonly misses = new Set<string>();
  /** Moves when a write starts and when it ends: a miss read across a write may be stale already. */
  private writeGeneration = 0;
  private writesInFlight = 0;

  private constructor(private readonly db: RocksHandle) {}

  static async open(location: string): Promise<KvStore> {
    const db = (await loadRocksdb())(location);
    await new Promise<void>((resolve, reject) =>
      db.open({ createIfMissing: true }, (err) => (err ? reject(describeOpenError(err, location)) : resolve())),
    );
    return new KvStore(db);
  }

  /**
   * Remembers which keys starting with byte `prefix` are absent, until the next write. For the chain's
   * transaction lookups: a client polling for a pending transaction's receipt asks for the same missing
   * key again and again, and each miss cost the chain thread a trip to RocksDB and the error object the
   * binding builds to say "not found".
   */
  rememberMisses(prefix: number): void {
    this.missPrefixes.add(prefix);
  }

  get(key: Uint8Array): Promise<Uint8Array | undefined> {
    const missKey = this.missPrefixes.size > 0 && this.missPrefixes.has(key[0]!) ? bytesToHex(key) : undefined;
    if (missKey !== undefined && !this.closed && this.misses.has(missKey)) return Promise.resolve(undefined);
    const generation = this.writeGeneration;
    return this.track(() => new Promise((resolve, reject) =>
      this.db.get(asBuffer(key), { asBuffer: true }, (err, value) => {
        if (err) {
          if (!/NotFound/i.test(err.message)) return reject(err);
          if (missKey !== undefined && this.writesInFlight === 0 && generation === this.writeGeneration) this.rememberMiss(missKey);
          resolve(undefined);
        } else {
          resolve(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
        }
      }),
    ));
  }

  write(ops: KvOp[], options: WriteOptions = {}): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    const sync = options.sync === true;
    const native = ops.map((op) =>
      op.type === 'put' ? { type: 'put' as const, key: asBuffer(op.key), value: asBuffer(op.value) } : { type: 'del' as const, key: asBuffer(op.key) },
    );
    this.forgetMisses();
    this.writesInFlight++;
    return this.track(() => new Promise<void>((resolve, reject) => this.db.batch(native, { sync }, (err) => (err ? reject(err) : resolve())))).finally(() => {
      this.writesInFlight--;
      this.forgetMisses();
    });
  }

  private rememberMiss(key: string): void {
    // Bounded: a client asking for ever new missing keys must not grow the set without end.
    if (this.misses.size >= MAX_REMEMBERED_MISSES) this.misses.clear();
    this.misses.add(key);
  }

  private forgetMisses(): void {
    this.misses.clear();
    this.writeGeneration++;
  }

  /**
   * The keys from `gte` (inclusive) to `lt` (exclusive), in order. RocksDB hands them over in batches
   * (its iterator's high-water mark), so a range of many short keys costs a few native calls.
   */
  keys(gte: Uint8Array, lt: Uint8Array): Promise<Uint8Array[]> {
    return this.track(
      () =>
        new Promise<Uint8Array[]>((resolve, reject) => {
          const iterator = this.db.iterator({ gte: asBuffer(gte), lt: asBuffer(lt), keys: true, values: false, keyAsBuffer: true });
          const found: Uint8Array[] = [];
          const finish = (err: Error | undefined) => iterator.end((endErr) => (err ?? endErr ? reject(err ?? endErr) : resolve(found)));
          const step = (): void =>
            iterator.next((err, key) => {
              if (err || key === undefined) return finish(err);
              found.push(new Uint8Array(key.buffer, key.byteOffset, key.byteLength));
              step();
            });
          step();
        }),
    );
  }

  /** Refuses new operations, waits for running ones, then closes the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    await new Promise<void>((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }

  private async track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the database is closed: the node is shutting down');
    this.inFlight++;
    try {
      return await operation();
    } finally {
      if (--this.inFlight === 0) this.drained?.();
    }
  }
}

const MAX_REMEMBERED_MISSES = 65_536;

/** The binding treats anything but a Buffer as a string: a plain Uint8Array would be stored as "1,2,3". */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function describeOpenError(err: Error, location: string): Error {
  if (/lock/i.test(err.message)) {
    return new Error(`Data path ${location} is in use by another process (${err.message})`);
  }
  return new Error(`Cannot open database at ${location}: ${err.message}`);
}
