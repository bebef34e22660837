/**
 * Counters every transport thread shares: the open WebSocket connections (`--rpc-ws-max-active-connections`
 * holds for the node, however many threads serve the port) and the subscription ids, which come from
 * one counter for the whole node (`0x1`, `0x2`, ... across every connection, WebSocket and IPC alike).
 * The supervisor allocates the buffer; every thread updates it with atomics.
 */

const CONNECTIONS_INDEX = 0; // Int32 at byte 0
const SUBSCRIPTION_ID_OFFSET = 8; // BigInt64, 8-byte aligned: the last id handed out
const BYTE_LENGTH = 16;

export function createTransportCounters(): SharedArrayBuffer {
  return new SharedArrayBuffer(BYTE_LENGTH);
}

export class TransportCounters {
  private readonly ints: Int32Array;
  private readonly lastSubscriptionId: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength < BYTE_LENGTH) throw new Error(`transport counters buffer must hold ${BYTE_LENGTH} bytes`);
    this.ints = new Int32Array(buffer, 0, 1);
    this.lastSubscriptionId = new BigInt64Array(buffer, SUBSCRIPTION_ID_OFFSET, 1);
  }

  /** Counts a new WebSocket connection if fewer than `max` are open; false (and nothing counted) otherwise. */
  tryOpenConnection(max: number): boolean {
    if (Atomics.add(this.ints, CONNECTIONS_INDEX, 1) < max) return true;
    Atomics.sub(this.ints, CONNECTIONS_INDEX, 1);
    return false;
  }

  closeConnection(): void {
    Atomics.sub(this.ints, CONNECTIONS_INDEX, 1);
  }

  get openConnections(): number {
    return Atomics.load(this.ints, CONNECTIONS_INDEX);
  }

  /** The next subscription id of the node, from 1. */
  nextSubscriptionId(): bigint {
    return Atomics.add(this.lastSubscriptionId, 0, 1n) + 1n;
  }
}
