import { parentPort, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpointModule from 'comlink/dist/umd/node-adapter.js';
import { countChannelMessages } from './channel.js';
import type { ActorName } from './channel.js';
import type { HeadInfo } from './messages.js';
import { actorData } from './worker-data.js';
import { EventLoopLagMonitor } from '../metrics/event-loop-lag.js';
import type { ActorMetrics, ThreadMetrics } from '../metrics/thread-metrics.js';
import { threadMemory } from '../util/thread-memory.js';
import { collectGarbage } from '../util/collect-garbage.js';
import type { ThreadMemory } from '../util/thread-memory.js';

/**
 * What each actor's thread implements: start once its channels are in place, stop at shutdown, and
 * its own figures for /metrics (asked only with `--metrics-enabled`, at each scrape).
 */
export interface ActorLifecycle<StartInfo, Metrics> {
  start(): Promise<StartInfo>;
  /** Stop intake, finish the work in progress, release resources. */
  stop(): Promise<void>;
  metrics(): Metrics;
}

/**
 * The control plane between the supervisor and an actor: its lifecycle, plus what every actor thread
 * answers alike (its memory figures, its event-loop lag). Comlink carries it; it is a handful of calls
 * per minute at most (a Prometheus scrape is one call per thread).
 */
export interface ActorControl<A extends ActorName> {
  start(): Promise<ActorStartInfo[A]>;
  stop(): Promise<void>;
  memory(): ThreadMemory;
  /** A full garbage collection of the thread's heap (collect-garbage.ts says when and why). */
  collectGarbage(): void;
  metrics(): ThreadMetrics<A>;
}

/** What each actor answers when it has started. */
export interface ActorStartInfo {
  chain: { head: HeadInfo; genesisHash: Uint8Array };
  txpool: null;
  consensus: null;
  /** The devp2p port actually bound. */
  p2p: { port: number };
  /** Where the index stood when it opened (it catches up with the chain afterwards). */
  logindex: { indexedBlocks: bigint };
  /** The ports this thread bound itself (the HTTP port is the supervisor's connection guard's). */
  transport: { httpPort?: number; wsPort?: number; graphqlPort?: number };
  reader: null;
}

export type ControlOf<A extends ActorName> = ActorControl<A>;

type NodeEndpointFactory = (target: Worker | NonNullable<typeof parentPort>) => Comlink.Endpoint;
// comlink's node adapter is CommonJS whose typings claim a default export; the factory is the module.
const nodeEndpoint = nodeEndpointModule as unknown as NodeEndpointFactory;

/**
 * Called once in a worker, before it opens its channels, to offer actor `actor`'s control interface to
 * the supervisor. With metrics on (the actor's data has its mailbox counters), this thread's channel
 * messages are counted and its event loop watched from here on.
 */
export function exposeControl<A extends ActorName>(actor: A, lifecycle: ActorLifecycle<ActorStartInfo[A], ActorMetrics[A]>): void {
  if (!parentPort) throw new Error('exposeControl must run inside a worker thread');
  const metricsData = actorData(actor).metrics;
  if (metricsData !== undefined) countChannelMessages(metricsData.mailboxCounters);
  const eventLoop = metricsData === undefined ? undefined : new EventLoopLagMonitor();
  const control: ControlOf<A> = {
    start: () => lifecycle.start(),
    stop: () => lifecycle.stop(),
    memory: threadMemory,
    collectGarbage,
    metrics: () => {
      if (eventLoop === undefined) throw new Error(`metrics are off: the ${actor} thread keeps none`);
      return { eventLoop: eventLoop.take(), figures: lifecycle.metrics() };
    },
  };
  Comlink.expose(control, nodeEndpoint(parentPort));
}

/** The supervisor's handle on the control interface of the `actor` running in `worker`. */
export function controlOf<A extends ActorName>(_actor: A, worker: Worker): Comlink.Remote<ControlOf<A>> {
  return Comlink.wrap<ControlOf<A>>(nodeEndpoint(worker));
}
