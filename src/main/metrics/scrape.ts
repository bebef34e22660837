/**
 * Gathers one scrape's figures from the running node: what the threads publish in shared memory (the
 * head, the peer count, the mailbox counters) is read directly; the rest is asked of every actor
 * thread over its control plane, one call per thread and scrape, all at once. Nothing is sent to or
 * from a thread between scrapes.
 */
import type { ActorName } from '../../shared/actors/channel.js';
import type { EventLoopLag, EventLoopLagMonitor } from '../../shared/metrics/event-loop-lag.js';
import type { ActorMetrics, ThreadMetrics } from '../../shared/metrics/thread-metrics.js';
import type { HeadReader } from '../../shared/shared-memory/head-view.js';
import { mailboxDepths } from '../../shared/shared-memory/mailbox-counters.js';
import type { P2pStatusReader } from '../../shared/shared-memory/p2p-status-view.js';
import { answerWithin } from '../supervisor/answer-within.js';
import type { NodeFigures } from './node-metrics.js';

/** The figures a thread of one kind of actor contributes. */
type ActorFigures = Partial<Pick<NodeFigures, 'chainHead' | 'poolTransactions' | 'qbft' | 'rpc'>>;

const ACTOR_FIGURES: { [A in ActorName]: (metrics: ActorMetrics[A]) => ActorFigures } = {
  chain: (chainHead) => ({ chainHead }),
  txpool: ({ transactions }) => ({ poolTransactions: transactions }),
  consensus: (qbft) => ({ qbft }),
  p2p: () => ({}),
  logindex: () => ({}),
  transport: ({ rpc }) => ({ rpc }),
  reader: () => ({}),
};

/** An actor thread as a scrape sees it. */
export interface MetricsThread {
  name: string;
  actor: ActorName;
  /** The buffer it counts its channel messages in. */
  mailboxCounters: SharedArrayBuffer;
  metrics(): Promise<{ eventLoop: EventLoopLag; figures: ActorFigures }>;
}

export function metricsThread<A extends ActorName>(
  actor: A,
  name: string,
  mailboxCounters: SharedArrayBuffer,
  control: { metrics(): Promise<ThreadMetrics<A>> },
): MetricsThread {
  const figuresOf = ACTOR_FIGURES[actor];
  return {
    name,
    actor,
    mailboxCounters,
    metrics: async () => {
      const taken = await control.metrics();
      return { eventLoop: taken.eventLoop, figures: figuresOf(taken.figures) };
    },
  };
}

export interface FigureSources {
  head: HeadReader;
  /** Absent without the p2p actor. */
  p2pStatus?: P2pStatusReader;
  maxPeers: number;
  /** The main thread's own event loop. */
  mainEventLoop: EventLoopLagMonitor;
  /** The actor threads running now. */
  threads(): readonly MetricsThread[];
}

/** How long a scrape waits for a busy thread before leaving its figures out (a Prometheus scrape times out after 10 s). */
const ANSWER_TIMEOUT_MS = 3_000;

export async function gatherFigures(sources: FigureSources): Promise<NodeFigures> {
  const threads = sources.threads();
  const depths = mailboxDepths(threads);
  const headNumber = sources.head.headNumber();
  const sync = sources.p2pStatus?.sync();
  const answers = await Promise.all(threads.map(async (thread) => ({ thread, answer: await answerWithin(thread.metrics(), ANSWER_TIMEOUT_MS) })));
  const figures: NodeFigures = {
    headNumber,
    ...(sync !== undefined && (headNumber === null || sync.highestBlock > headNumber) ? { bestKnownBlock: sync.highestBlock } : {}),
    peerCount: sources.p2pStatus?.peerCount() ?? 0,
    maxPeers: sources.maxPeers,
    rpc: [],
    mailboxDepths: depths,
    eventLoops: [{ thread: 'main', lag: sources.mainEventLoop.take() }],
  };
  for (const { thread, answer } of answers) {
    if (answer === undefined) continue;
    const { rpc, ...single } = answer.figures;
    Object.assign(figures, single);
    if (rpc !== undefined) figures.rpc = [...figures.rpc, ...rpc];
    figures.eventLoops = [...figures.eventLoops, { thread: thread.name, lag: answer.eventLoop }];
  }
  return figures;
}
