/**
 * The chain head, published by the chain actor into shared memory so that transports answer
 * eth_blockNumber (and can read the head hash) without a message round trip.
 *
 * Single writer, many readers, lock-free: a sequence lock. The writer makes the sequence odd,
 * writes, then makes it even again; a reader retries when it saw an odd sequence or the sequence
 * changed under it. Sequence 0 means "nothing published yet".
 */

const SEQUENCE_OFFSET = 0; // Int32
const NUMBER_OFFSET = 8; // BigInt64 (8-byte aligned)
const HASH_OFFSET = 16; // 32 bytes
const HASH_LENGTH = 32;
const BYTE_LENGTH = HASH_OFFSET + HASH_LENGTH;

export interface ChainHead {
  number: bigint;
  hash: Uint8Array;
}

/** Allocates the shared buffer a HeadWriter and its HeadReaders share. */
export function createHeadBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(BYTE_LENGTH);
}

/** The typed views over the shared buffer, the same for the writer and the readers. */
abstract class HeadViews {
  protected readonly sequence: Int32Array;
  protected readonly number: BigInt64Array;
  protected readonly hash: Uint8Array;

  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength < BYTE_LENGTH) throw new Error(`head buffer must hold ${BYTE_LENGTH} bytes`);
    this.sequence = new Int32Array(buffer, SEQUENCE_OFFSET, 1);
    this.number = new BigInt64Array(buffer, NUMBER_OFFSET, 1);
    this.hash = new Uint8Array(buffer, HASH_OFFSET, HASH_LENGTH);
  }
}

/** Used by the chain actor only: exactly one writer per buffer. */
export class HeadWriter extends HeadViews {
  publish(number: bigint, hash: Uint8Array): void {
    if (hash.length !== HASH_LENGTH) throw new Error('head hash must be 32 bytes');
    const sequence = Atomics.load(this.sequence, 0);
    Atomics.store(this.sequence, 0, (sequence + 1) | 0);
    Atomics.store(this.number, 0, number);
    this.hash.set(hash);
    Atomics.store(this.sequence, 0, (sequence + 2) | 0);
  }
}

/** Used by transports (any number of threads). */
export class HeadReader extends HeadViews {
  /** The head block number, or null before the first publish. A 64-bit atomic load needs no retry. */
  headNumber(): bigint | null {
    if (Atomics.load(this.sequence, 0) === 0) return null;
    return Atomics.load(this.number, 0);
  }

  /**
   * Changes at every publish: the same even value before and after a piece of work means no head was
   * published meanwhile. 0 before the first publish, odd while one is in progress.
   */
  version(): number {
    return Atomics.load(this.sequence, 0);
  }

  /** A consistent (number, hash) pair, or null before the first publish. */
  read(): ChainHead | null {
    for (;;) {
      const before = Atomics.load(this.sequence, 0);
      if (before === 0) return null;
      if ((before & 1) === 1) continue; // a publish is in progress: it takes nanoseconds
      const number = Atomics.load(this.number, 0);
      const hash = this.hash.slice();
      if (Atomics.load(this.sequence, 0) === before) return { number, hash };
    }
  }
}
