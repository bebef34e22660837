/**
 * The node's Prometheus metrics, as prom-client metrics in one registry: each scrape gathers what the
 * threads keep (scrape.ts) into a `NodeFigures`, sets the metrics of the enabled categories from it,
 * and prom-client writes the text. Names, help texts and labels are Besu's where Besu has the metric
 * (categories.ts on how Besu builds names); the others follow Besu's naming rule.
 *
 * `besu_rpc_request_time` is a summary, as Besu's timers are: its quantiles come from every transport
 * thread's histograms added together (latency-histogram.ts), which a prom-client `Summary` cannot be
 * fed, so it is handed to prom-client as an aggregated metric (`AggregatorRegistry.aggregate`, the form
 * prom-client merges cluster workers' metrics in).
 */
import { AggregatorRegistry, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ActorName } from '../../shared/actors/channel.js';
import type { EventLoopLag } from '../../shared/metrics/event-loop-lag.js';
import { addBuckets, quantileOf } from '../../shared/metrics/latency-histogram.js';
import type { ChainHeadMetrics, MethodTimings, QbftProgress } from '../../shared/metrics/thread-metrics.js';
import type { MetricCategory } from './categories.js';

/** What one scrape found. A figure is absent when its source did not answer (it keeps its last value). */
export interface NodeFigures {
  /** null before the chain published a head. */
  headNumber: bigint | null;
  /** The highest block a peer announced, when above the head. */
  bestKnownBlock?: bigint;
  peerCount: number;
  maxPeers: number;
  chainHead?: ChainHeadMetrics;
  poolTransactions?: number;
  /** null while QBFT does not run (its gauges then read 0). */
  qbft?: QbftProgress | null;
  /** Every transport thread's calls, one entry per thread and method. */
  rpc: readonly MethodTimings[];
  mailboxDepths: ReadonlyMap<ActorName, number>;
  /** The main thread and every actor thread that answered. */
  eventLoops: readonly { thread: string; lag: EventLoopLag }[];
}

/** Besu's summary quantiles, written as Java writes the doubles. */
const RPC_QUANTILES: readonly (readonly [number, string])[] = [
  [0.2, '0.2'],
  [0.5, '0.5'],
  [0.8, '0.8'],
  [0.95, '0.95'],
  [0.99, '0.99'],
  [1, '1.0'],
];

const RPC_REQUEST_TIME = 'besu_rpc_request_time';

type Update = (figures: NodeFigures) => void;

export class NodeMetrics {
  private readonly registry = new Registry();
  /** prom-client's process and Node.js runtime collectors (PROCESS, JVM). */
  private readonly runtime: Registry | undefined;
  private readonly updates: Update[] = [];
  private readonly rpcEnabled: boolean;

  constructor(categories: readonly MetricCategory[]) {
    const enabled = new Set(categories);
    const gauge = (name: string, help: string, update: (gauge: Gauge) => Update) => {
      this.updates.push(update(new Gauge({ name, help, registers: [this.registry] })));
    };
    const labelledGauge = <L extends string>(name: string, help: string, label: L, update: (gauge: Gauge<L>) => Update) => {
      this.updates.push(update(new Gauge({ name, help, labelNames: [label], registers: [this.registry] })));
    };
    const setWhenKnown = (read: (figures: NodeFigures) => bigint | number | null | undefined) => (g: Gauge) => (figures: NodeFigures) => {
      const value = read(figures);
      if (value !== undefined && value !== null) g.set(Number(value));
    };

    if (enabled.has('ETHEREUM')) {
      gauge('ethereum_blockchain_height', 'The current height of the canonical chain', setWhenKnown((f) => f.headNumber));
      gauge('ethereum_best_known_block_number', 'The estimated highest block available', setWhenKnown((f) => f.bestKnownBlock ?? f.headNumber));
      gauge('ethereum_peer_count', 'The current number of peers connected', setWhenKnown((f) => f.peerCount));
      gauge('ethereum_peer_limit', 'The maximum number of peers this node allows to connect', setWhenKnown((f) => f.maxPeers));
    }
    if (enabled.has('BLOCKCHAIN')) {
      const head = (field: keyof ChainHeadMetrics) => setWhenKnown((f) => f.chainHead?.[field]);
      gauge('besu_blockchain_difficulty_total', 'Total difficulty of the chainhead', head('totalDifficulty'));
      gauge('besu_blockchain_chain_head_timestamp', 'Timestamp from the current chain head', head('timestamp'));
      gauge('besu_blockchain_chain_head_gas_used', 'Gas used by the current chain head block', head('gasUsed'));
      gauge('besu_blockchain_chain_head_gas_limit', 'Block gas limit of the current chain head block', head('gasLimit'));
      gauge('besu_blockchain_chain_head_transaction_count', 'Number of transactions in the current chain head block', head('transactionCount'));
      gauge('besu_blockchain_chain_head_ommer_count', 'Number of ommers in the current chain head block', head('ommerCount'));
    }
    if (enabled.has('TRANSACTION_POOL')) {
      gauge('besu_transaction_pool_transactions', 'Current size of the transaction pool', setWhenKnown((f) => f.poolTransactions));
    }
    if (enabled.has('CONSENSUS')) {
      gauge('besu_consensus_qbft_height', 'The block height QBFT is agreeing on (Basalt)', setWhenKnown((f) => f.qbft?.height));
      gauge('besu_consensus_qbft_round', 'The current QBFT round at that height (Basalt)', setWhenKnown((f) => f.qbft?.round));
    }
    if (enabled.has('EXECUTORS')) {
      labelledGauge(
        'besu_executors_actor_mailbox_depth',
        'Messages posted to the actor over its channels and not yet taken, all its threads together (Basalt)',
        'actor',
        (g) => (figures) => {
          g.reset();
          for (const [actor, depth] of figures.mailboxDepths) g.set({ actor }, depth);
        },
      );
      const lag = (stat: string, field: keyof EventLoopLag) =>
        labelledGauge(`besu_executors_event_loop_lag_${stat}_seconds`, `The thread's event-loop lag since the previous scrape: ${stat} (Basalt)`, 'thread', (g) => (figures) => {
          g.reset();
          for (const { thread, lag: taken } of figures.eventLoops) g.set({ thread }, taken[field]);
        });
      lag('mean', 'meanSeconds');
      lag('p50', 'p50Seconds');
      lag('p90', 'p90Seconds');
      lag('p99', 'p99Seconds');
      lag('max', 'maxSeconds');
    }
    this.rpcEnabled = enabled.has('RPC');

    if (enabled.has('PROCESS') || enabled.has('JVM')) {
      this.runtime = new Registry();
      collectDefaultMetrics({ register: this.runtime });
      for (const metric of this.runtime.getMetricsAsArray()) {
        const category: MetricCategory = metric.name.startsWith('process_') ? 'PROCESS' : 'JVM';
        if (!enabled.has(category)) this.runtime.removeSingleMetric(metric.name);
      }
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text of every enabled metric, set from `figures`. */
  async text(figures: NodeFigures): Promise<string> {
    for (const update of this.updates) update(figures);
    const registries = [this.registry];
    if (this.runtime !== undefined) registries.push(this.runtime);
    if (this.rpcEnabled) registries.push(AggregatorRegistry.aggregate([[rpcRequestTime(figures.rpc)]]));
    return Registry.merge(registries).metrics();
  }
}

/** `besu_rpc_request_time` as prom-client's JSON form of a summary, every thread's calls of a method added up. */
function rpcRequestTime(threads: readonly MethodTimings[]) {
  const byMethod = new Map<string, MethodTimings>();
  for (const timings of threads) {
    const merged = byMethod.get(timings.method);
    if (merged === undefined) {
      byMethod.set(timings.method, { ...timings, window: Uint32Array.from(timings.window) });
      continue;
    }
    merged.count += timings.count;
    merged.sumSeconds += timings.sumSeconds;
    addBuckets(merged.window, timings.window);
    merged.windowMaxSeconds = Math.max(merged.windowMaxSeconds, timings.windowMaxSeconds);
  }
  const values = [...byMethod.values()]
    .sort((a, b) => a.method.localeCompare(b.method))
    .flatMap(({ method, count, sumSeconds, window, windowMaxSeconds }) => [
      ...RPC_QUANTILES.map(([q, label]) => ({ labels: { methodName: method, quantile: label }, value: quantileOf(window, q, windowMaxSeconds) })),
      { metricName: `${RPC_REQUEST_TIME}_count`, labels: { methodName: method }, value: count },
      { metricName: `${RPC_REQUEST_TIME}_sum`, labels: { methodName: method }, value: sumSeconds },
    ]);
  return { name: RPC_REQUEST_TIME, help: 'Time taken to process a JSON-RPC request', type: 'summary', aggregator: 'sum', values };
}

