/**
 * The peers this node dials: static peers (admin_addPeer, `--bootnodes`, always dialled and exempt from
 * --max-peers) and peers found by discovery (dialled only while there is room under --max-peers), each
 * with a per-peer exponential reconnect backoff. Pure bookkeeping on an injected clock; the service does
 * the dialling.
 */
import type { Enode } from '../shared/ethereum/enode.js';

export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 1_000, maxMs: 30_000 };

interface KnownPeer {
  enode: Enode;
  isStatic: boolean;
  failures: number;
  nextAttemptAt: number;
}

export class PeerTable {
  private readonly peers = new Map<string, KnownPeer>();

  constructor(private readonly backoff: BackoffSettings = DEFAULT_BACKOFF) {}

  /** Adds a static peer (dialled at once); false when it was already one. */
  add(enode: Enode, now: number): boolean {
    const existing = this.peers.get(enode.idHex);
    if (existing?.isStatic) {
      // The same node at a new address replaces the old address.
      existing.enode = enode;
      return false;
    }
    this.peers.set(enode.idHex, { enode, isStatic: true, failures: 0, nextAttemptAt: now });
    return true;
  }

  /** Adds a peer found by discovery; a node already known (static or discovered) is left as it is. */
  addDiscovered(enode: Enode, now: number): void {
    if (!this.peers.has(enode.idHex)) this.peers.set(enode.idHex, { enode, isStatic: false, failures: 0, nextAttemptAt: now });
  }

  /** Removes a static peer; false when it was not one. */
  remove(idHex: string): boolean {
    return this.peers.get(idHex)?.isStatic === true && this.peers.delete(idHex);
  }

  /** Discovery lost the peer: stop dialling it (a static peer stays). */
  forgetDiscovered(idHex: string): void {
    if (this.peers.get(idHex)?.isStatic === false) this.peers.delete(idHex);
  }

  isStatic(idHex: string): boolean {
    return this.peers.get(idHex)?.isStatic === true;
  }

  /**
   * Peers due for a dial attempt, given which node ids are connected or being dialled: every due static
   * peer, and at most `discoveredRoom` due discovered ones.
   */
  due(now: number, busy: (idHex: string) => boolean, discoveredRoom = 0): Enode[] {
    const due: Enode[] = [];
    let room = discoveredRoom;
    for (const [idHex, peer] of this.peers) {
      if (busy(idHex) || peer.nextAttemptAt > now) continue;
      if (peer.isStatic) {
        due.push(peer.enode);
      } else if (room > 0) {
        due.push(peer.enode);
        room--;
      }
    }
    return due;
  }

  /** A connection to a peer ended or failed: wait longer before the next attempt. */
  failed(idHex: string, now: number): void {
    const peer = this.peers.get(idHex);
    if (!peer) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** peer.failures);
    peer.failures++;
    peer.nextAttemptAt = now + delay;
  }

  /** A peer completed the eth Status exchange: the backoff starts over. */
  connected(idHex: string): void {
    const peer = this.peers.get(idHex);
    if (peer) peer.failures = 0;
  }

  /** The number of static peers. */
  get size(): number {
    let count = 0;
    for (const peer of this.peers.values()) if (peer.isStatic) count++;
    return count;
  }
}
