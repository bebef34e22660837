/**
 * The peers this node keeps connections to: static peers (admin_addPeer, `--bootnodes` — Basalt runs
 * no discovery, so bootnodes are dialled directly), with a per-peer exponential reconnect backoff.
 * Pure bookkeeping on an injected clock; the service does the dialling.
 */
import type { Enode } from '../shared/ethereum/enode.js';

export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 1_000, maxMs: 30_000 };

interface StaticPeer {
  enode: Enode;
  failures: number;
  nextAttemptAt: number;
}

export class PeerTable {
  private readonly statics = new Map<string, StaticPeer>();

  constructor(private readonly backoff: BackoffSettings = DEFAULT_BACKOFF) {}

  /** Adds a static peer (dialled at once); false when it was already one. */
  add(enode: Enode, now: number): boolean {
    const existing = this.statics.get(enode.idHex);
    if (existing) {
      // The same node at a new address replaces the old address.
      existing.enode = enode;
      return false;
    }
    this.statics.set(enode.idHex, { enode, failures: 0, nextAttemptAt: now });
    return true;
  }

  /** Removes a static peer; false when it was not one. */
  remove(idHex: string): boolean {
    return this.statics.delete(idHex);
  }

  isStatic(idHex: string): boolean {
    return this.statics.has(idHex);
  }

  /** Static peers due for a dial attempt, given which node ids are connected or being dialled. */
  due(now: number, busy: (idHex: string) => boolean): Enode[] {
    const due: Enode[] = [];
    for (const [idHex, peer] of this.statics) {
      if (!busy(idHex) && peer.nextAttemptAt <= now) due.push(peer.enode);
    }
    return due;
  }

  /** A connection to a static peer ended or failed: wait longer before the next attempt. */
  failed(idHex: string, now: number): void {
    const peer = this.statics.get(idHex);
    if (!peer) return;
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** peer.failures);
    peer.failures++;
    peer.nextAttemptAt = now + delay;
  }

  /** A static peer completed the eth Status exchange: the backoff starts over. */
  connected(idHex: string): void {
    const peer = this.statics.get(idHex);
    if (peer) peer.failures = 0;
  }

  get size(): number {
    return this.statics.size;
  }
}
