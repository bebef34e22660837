/**
 * What each actor thread reports when /metrics is scraped (over its control plane, control.ts): its
 * event-loop lag and its actor's own figures. The threads keep these in their own memory and hand a
 * copy over only when asked, so nothing is sent while the node works.
 */
import type { EventLoopLag } from './event-loop-lag.js';

/** The chain head's figures (Besu's `blockchain` category). */
export interface ChainHeadMetrics {
  timestamp: bigint;
  gasUsed: bigint;
  gasLimit: bigint;
  transactionCount: number;
  ommerCount: number;
  totalDifficulty: bigint;
}

/** Where QBFT is: the height being agreed and its current round. */
export interface QbftProgress {
  height: bigint;
  round: number;
}

/** One JSON-RPC method's calls on one transport thread. */
export interface MethodTimings {
  method: string;
  /** Calls since the start, and their total duration. */
  count: number;
  sumSeconds: number;
  /** Durations of the calls in the summary's window (latency-histogram.ts buckets), and the longest. */
  window: Uint32Array;
  windowMaxSeconds: number;
}

/** Each actor's own figures. */
export interface ActorMetrics {
  chain: ChainHeadMetrics;
  txpool: { transactions: number };
  /** null until QBFT runs (never, for a genesis without qbft). */
  consensus: QbftProgress | null;
  /** The peer count is in shared memory already (p2p-status-view.ts). */
  p2p: null;
  logindex: null;
  transport: { rpc: MethodTimings[] };
  /** A state reader's calls are timed by the transport that sent them. */
  reader: null;
}

export interface ThreadMetrics<Actor extends keyof ActorMetrics> {
  eventLoop: EventLoopLag;
  /** The actor's own figures. */
  figures: ActorMetrics[Actor];
}
