/**
 * What the p2p actor publishes to the transports in shared memory: the connected-peer count
 * (net_peerCount, /readiness) and the sync state (eth_syncing, /readiness maxBlocksBehind). One
 * writer (the p2p actor), many readers; each field is written atomically on its own, and a reader
 * that sees a sync start without its target yet just reports the previous state.
 */

const PEER_COUNT_INDEX = 0; // Int32 at byte 0
const SYNC_OFFSET = 8; // BigInt64 pairs must be 8-byte aligned
const STARTING_BLOCK_INDEX = 0; // BigInt64 at byte 8
const HIGHEST_BLOCK_INDEX = 1; // BigInt64 at byte 16; -1 = in sync
const BYTE_LENGTH = 24;

/**
 * Besu's sync tolerance: a node within this many blocks of its best peer counts as in sync
 * (eth_syncing answers false), so that a validator a block behind mid-round is not "syncing".
 */
export const SYNC_TOLERANCE = 5n;

export interface SyncStatus {
  startingBlock: bigint;
  highestBlock: bigint;
}

export function createP2pStatusBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(BYTE_LENGTH);
}

abstract class StatusViews {
  protected readonly ints: Int32Array;
  protected readonly bigints: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength < BYTE_LENGTH) throw new Error(`p2p status buffer must hold ${BYTE_LENGTH} bytes`);
    this.ints = new Int32Array(buffer, 0, 1);
    this.bigints = new BigInt64Array(buffer, SYNC_OFFSET, 2);
  }
}

/** The p2p actor's side. */
export class P2pStatusWriter extends StatusViews {
  constructor(buffer: SharedArrayBuffer) {
    super(buffer);
    Atomics.store(this.bigints, HIGHEST_BLOCK_INDEX, -1n);
  }

  setPeerCount(count: number): void {
    Atomics.store(this.ints, PEER_COUNT_INDEX, count);
  }

  /** The local head and the highest block a peer has: syncing starts beyond the tolerance and ends at it. */
  updateSync(localHead: bigint, highestKnown: bigint): void {
    const syncing = Atomics.load(this.bigints, HIGHEST_BLOCK_INDEX) >= 0n;
    if (highestKnown - localHead > SYNC_TOLERANCE) {
      if (!syncing) Atomics.store(this.bigints, STARTING_BLOCK_INDEX, localHead);
      Atomics.store(this.bigints, HIGHEST_BLOCK_INDEX, highestKnown);
    } else if (syncing) {
      Atomics.store(this.bigints, HIGHEST_BLOCK_INDEX, -1n);
    }
  }
}

/** A transport's side. */
export class P2pStatusReader extends StatusViews {
  peerCount(): number {
    return Atomics.load(this.ints, PEER_COUNT_INDEX);
  }

  /** The sync in progress, or undefined when the node is in sync. */
  sync(): SyncStatus | undefined {
    const highestBlock = Atomics.load(this.bigints, HIGHEST_BLOCK_INDEX);
    if (highestBlock < 0n) return undefined;
    return { startingBlock: Atomics.load(this.bigints, STARTING_BLOCK_INDEX), highestBlock };
  }
}
