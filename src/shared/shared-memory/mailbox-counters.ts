/**
 * How many messages wait in each actor's mailbox, without asking the actor (a busy actor is the one
 * whose answer would come late). Every actor thread counts, in a buffer of its own that only it
 * writes, the channel messages it has taken from its ports and those it has posted to each kind of
 * actor (requests, answers and events alike). An actor's mailbox depth is what every thread posted to
 * it minus what its threads took; the supervisor reads all the buffers when /metrics is scraped.
 *
 * Counting is one increment of this thread's own memory per message: no atomics (a single writer),
 * no lock, no message. The counts wrap at 2^32; differences are taken modulo 2^32.
 */
import type { ActorName } from '../actors/channel.js';

const ACTOR_SLOTS: Readonly<Record<ActorName, number>> = { chain: 1, txpool: 2, consensus: 3, p2p: 4, transport: 5, logindex: 6, reader: 7 };
const ACTORS = Object.keys(ACTOR_SLOTS) as ActorName[];
const RECEIVED_SLOT = 0;
const SLOT_COUNT = 8;
const WRAP = 2 ** 32;

export function createMailboxCounters(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOT_COUNT * Uint32Array.BYTES_PER_ELEMENT);
}

/** The side of the thread that owns the buffer. */
export class MailboxCounter {
  private readonly counts: Uint32Array;

  constructor(buffer: SharedArrayBuffer) {
    this.counts = new Uint32Array(buffer, 0, SLOT_COUNT);
  }

  /** A message posted to actor `to`. */
  posted(to: ActorName): void {
    this.counts[ACTOR_SLOTS[to]]!++;
  }

  /** A message taken from one of this thread's ports. */
  taken(): void {
    this.counts[RECEIVED_SLOT]!++;
  }
}

/** Each actor thread's buffer, by the kind of actor it runs. */
export interface ThreadCounters {
  actor: ActorName;
  mailboxCounters: SharedArrayBuffer;
}

/**
 * The messages waiting for each kind of actor that has threads in `threads` (the transports' added up).
 * The buffers are read one after the other while the threads go on counting, so a depth can be off by
 * the few messages that moved meanwhile; one that reads below zero is reported as 0.
 */
export function mailboxDepths(threads: readonly ThreadCounters[]): Map<ActorName, number> {
  const posted = new Map<ActorName, number>(ACTORS.map((actor) => [actor, 0]));
  const taken = new Map<ActorName, number>();
  for (const { actor, mailboxCounters } of threads) {
    const counts = new Uint32Array(mailboxCounters, 0, SLOT_COUNT);
    taken.set(actor, (taken.get(actor) ?? 0) + counts[RECEIVED_SLOT]!);
    for (const to of ACTORS) posted.set(to, posted.get(to)! + counts[ACTOR_SLOTS[to]]!);
  }
  const depths = new Map<ActorName, number>();
  for (const [actor, count] of taken) {
    const depth = (((posted.get(actor)! - count) % WRAP) + WRAP) % WRAP;
    depths.set(actor, depth >= WRAP / 2 ? 0 : depth);
  }
  return depths;
}
