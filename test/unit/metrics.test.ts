/**
 * Metrics in one process: the options in their three forms, Besu's category names, the latency
 * histograms that let every transport thread's JSON-RPC timings add up exactly, the summary's
 * 10-minute window, which calls are timed, mailbox depths counted from the channels' messages, and
 * what the registry serves per category (parsed back as Prometheus text).
 */
import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { CliUsageError } from '../../src/main/cli/errors.js';
import { dependencyWarnings, resolveOptions, type Environment } from '../../src/main/cli/resolve.js';
import { renderHelp } from '../../src/main/cli/help.js';
import { METRIC_CATEGORIES, type MetricCategory } from '../../src/main/metrics/categories.js';
import { NodeMetrics, type NodeFigures } from '../../src/main/metrics/node-metrics.js';
import { countChannelMessages, openChannel } from '../../src/shared/actors/channel.js';
import { TXPOOL_CHAIN } from '../../src/shared/actors/channels.js';
import { bucketOf, emptyBuckets, quantileOf } from '../../src/shared/metrics/latency-histogram.js';
import { createMailboxCounters, mailboxDepths } from '../../src/shared/shared-memory/mailbox-counters.js';
import { createMethodCaller } from '../../src/transport/jsonrpc.js';
import { RpcTimings } from '../../src/transport/rpc-timings.js';
import { parsePrometheusText, sampleValue } from '../helpers/prometheus-text.js';

function resolve(argv: string[], env: Environment = {}, toml?: string) {
  const read = (path: string) => {
    if (toml === undefined || path !== '/etc/basalt.toml') throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return toml;
  };
  return resolveOptions(toml === undefined ? argv : ['--config-file=/etc/basalt.toml', ...argv], env, read);
}

function picked(options: ReturnType<typeof resolve>) {
  const { metricsEnabled, metricsHost, metricsPort, metricsCategory } = options;
  return { metricsEnabled, metricsHost, metricsPort, metricsCategory };
}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

test('defaults: off, 127.0.0.1:9545, every category', (t) => {
  t.deepEqual(picked(resolve([])), { metricsEnabled: false, metricsHost: '127.0.0.1', metricsPort: 9545, metricsCategory: METRIC_CATEGORIES });
  t.true(METRIC_CATEGORIES.includes('BLOCKCHAIN') && METRIC_CATEGORIES.includes('RPC') && METRIC_CATEGORIES.includes('JVM'));
});

const GIVEN = { metricsEnabled: true, metricsHost: '0.0.0.0', metricsPort: 9999, metricsCategory: ['RPC', 'TRANSACTION_POOL', 'PROCESS'] };

test('on the command line, either category spelling, any case', (t) => {
  t.deepEqual(picked(resolve(['--metrics-enabled', '--metrics-host=0.0.0.0', '--metrics-port', '9999', '--metrics-category=rpc,Transaction_Pool,PROCESS'])), GIVEN);
  t.deepEqual(picked(resolve(['--metrics-enabled', '--metrics-host=0.0.0.0', '--metrics-port=9999', '--metrics-categories=RPC,TRANSACTION_POOL', '--metrics-categories=PROCESS'])), GIVEN);
});

test('in the environment', (t) => {
  const env = { BASALT_METRICS_ENABLED: 'true', BASALT_METRICS_HOST: '0.0.0.0', BASALT_METRICS_PORT: '9999', BASALT_METRICS_CATEGORY: 'RPC,TRANSACTION_POOL,PROCESS' };
  t.deepEqual(picked(resolve([], env)), GIVEN);
  t.deepEqual(resolve([], { BASALT_METRICS_CATEGORIES: 'JVM' }).metricsCategory, ['JVM']);
});

test('in the config file', (t) => {
  const toml = ['metrics-enabled=true', 'metrics-host="0.0.0.0"', 'metrics-port=9999', 'metrics-category=["RPC","TRANSACTION_POOL","PROCESS"]'].join('\n');
  t.deepEqual(picked(resolve([], {}, toml)), GIVEN);
  t.deepEqual(resolve([], {}, 'metrics-categories=["EXECUTORS"]').metricsCategory, ['EXECUTORS']);
});

test('the command line beats the environment, which beats the config file', (t) => {
  const options = resolve(['--metrics-port=1001'], { BASALT_METRICS_PORT: '1002', BASALT_METRICS_HOST: '10.0.0.1' }, 'metrics-port=1003\nmetrics-host="10.0.0.2"');
  t.is(options.metricsPort, 1001);
  t.is(options.metricsHost, '10.0.0.1');
});

test('an unknown category is a conversion error naming it; a bad port is refused', (t) => {
  const error = t.throws(() => resolve(['--metrics-category=RPC,FOO']), { instanceOf: CliUsageError });
  t.is(error?.message, "Invalid value for option '--metrics-categories': cannot convert 'FOO' to MetricCategory (java.lang.IllegalArgumentException: Unknown category: FOO)");
  t.throws(() => resolve(['--metrics-port=70000']), { instanceOf: CliUsageError });
});

test('the metrics port must differ from the other enabled ports', (t) => {
  const error = t.throws(() => resolve(['--rpc-http-enabled', '--metrics-enabled', '--metrics-port=8545']), { instanceOf: CliUsageError });
  t.is(error?.message, "Port number '8545' has been specified multiple times. Please review the supplied configuration.");
  t.notThrows(() => resolve(['--rpc-http-enabled', '--metrics-port=8545']), 'disabled metrics hold no port');
  t.notThrows(() => resolve(['--rpc-http-enabled', '--rpc-http-port=0', '--metrics-enabled', '--metrics-port=0', '--p2p-port=0']));
});

test('host and port without --metrics-enabled are reported as ignored, as Besu does', (t) => {
  t.deepEqual(dependencyWarnings(resolve(['--metrics-host=0.0.0.0', '--metrics-port=9999'])), [
    '--metrics-host, --metrics-port has been ignored because --metrics-enabled was not defined on the command line.',
  ]);
  t.deepEqual(dependencyWarnings(resolve(['--metrics-enabled', '--metrics-port=9999'])), []);
});

test('help lists the metrics options and the categories', (t) => {
  const help = renderHelp();
  for (const name of ['--metrics-enabled', '--metrics-host', '--metrics-port', '--metrics-category, --metrics-categories']) t.true(help.includes(name), name);
  t.true(help.replace(/\s+/g, ' ').includes(METRIC_CATEGORIES.join(', ')));
});

// ---------------------------------------------------------------------------------------------
// Latency histograms and the RPC summary's window
// ---------------------------------------------------------------------------------------------

/** The exact q-quantile as a summary defines it: the ⌈q·n⌉-th smallest. */
function exactQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

test('quantiles from the buckets are within 4.5 % of the exact ones; q = 1 is the exact maximum; no data is NaN', (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  // Durations from 5 µs to 5 s, log-uniform.
  const durations = Array.from({ length: 5000 }, () => 5e-6 * 10 ** (6 * random()));
  const buckets = emptyBuckets();
  for (const d of durations) buckets[bucketOf(d)]!++;
  const sorted = [...durations].sort((a, b) => a - b);
  const max = sorted.at(-1)!;
  for (const q of [0.2, 0.5, 0.8, 0.95, 0.99]) {
    const exact = exactQuantile(sorted, q);
    const read = quantileOf(buckets, q, max);
    t.true(Math.abs(read / exact - 1) <= 0.045, `q=${q}: ${read} vs ${exact}`);
  }
  t.is(quantileOf(buckets, 1, max), max);
  t.true(Number.isNaN(quantileOf(emptyBuckets(), 0.5, 0)));
});

test('a call counts in the summary window for 8 to 10 minutes; count and sum keep every call', (t) => {
  let now = 0;
  const timings = new RpcTimings(() => now);
  timings.record('eth_call', now - 30);
  const inWindow = () => timings.snapshot()[0]!.window.reduce((a, b) => a + b, 0);
  now = 9.9 * 60_000;
  t.is(inWindow(), 1);
  now = 10 * 60_000;
  t.is(inWindow(), 0);
  const [taken] = timings.snapshot();
  t.is(taken!.count, 1);
  t.is(taken!.sumSeconds, 0.03);
  t.is(taken!.windowMaxSeconds, 0);
  // Hours later, a new call is alone in the window.
  now = 5 * 3_600_000;
  timings.record('eth_call', now - 2);
  t.is(inWindow(), 1);
  t.is(timings.snapshot()[0]!.windowMaxSeconds, 0.002);
});

test('only calls of served and enabled methods are timed, whatever they answer', async (t) => {
  const timings = new RpcTimings();
  const call = createMethodCaller({ enabledApis: ['ETH'], send: async () => ({ error: { code: -32000, message: 'no' } }), timer: timings });
  await call('eth_chainId', []);
  await call('eth_chainId', []);
  await call('eth_noSuchMethod', []);
  await call('admin_peers', []);
  await call('eth_getBalance', ['not an address', 'latest']);
  t.deepEqual(
    timings.snapshot().map(({ method, count }) => ({ method, count })),
    [
      { method: 'eth_chainId', count: 2 },
      { method: 'eth_getBalance', count: 1 },
    ],
  );
});

// ---------------------------------------------------------------------------------------------
// Mailbox depth
// ---------------------------------------------------------------------------------------------

test('mailbox depth: what was posted to an actor and not yet taken, answers included', async (t) => {
  const chainCounters = createMailboxCounters();
  const poolCounters = createMailboxCounters();
  const { port1, port2 } = new MessageChannel();
  // Each end counts into the buffer of the thread it stands for.
  countChannelMessages(chainCounters);
  const chain = openChannel(TXPOOL_CHAIN, 'chain', port2);
  countChannelMessages(poolCounters);
  openChannel(TXPOOL_CHAIN, 'txpool', port1).serve({ nextNonce: () => 1n, senderKeys: ({ hashes }) => hashes.map(() => null) });
  const threads = [
    { actor: 'chain' as const, mailboxCounters: chainCounters },
    { actor: 'txpool' as const, mailboxCounters: poolCounters },
  ];
  const asked = [1, 2, 3].map(() => chain.request('nextNonce', { address: new Uint8Array(20) }));
  // Posted in this turn of the event loop; the pool's end takes them in a later one.
  t.deepEqual(Object.fromEntries(mailboxDepths(threads)), { chain: 0, txpool: 3 });
  await Promise.all(asked);
  t.deepEqual(Object.fromEntries(mailboxDepths(threads)), { chain: 0, txpool: 0 });
  port1.close();
});

test('mailbox depth across the counters\' wrap at 2^32, and a read that overtook the posts is 0', (t) => {
  const sender = createMailboxCounters();
  const receiver = createMailboxCounters();
  const posted = new Uint32Array(sender);
  const taken = new Uint32Array(receiver);
  posted[2] = 5; // to txpool, after wrapping
  taken[0] = 2 ** 32 - 2;
  const threads = [
    { actor: 'chain' as const, mailboxCounters: sender },
    { actor: 'txpool' as const, mailboxCounters: receiver },
  ];
  t.is(mailboxDepths(threads).get('txpool'), 7);
  posted[2] = 2 ** 32 - 3;
  t.is(mailboxDepths(threads).get('txpool'), 0);
});

// ---------------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------------

const LAG = { meanSeconds: 0.001, p50Seconds: 0.0005, p90Seconds: 0.002, p99Seconds: 0.004, maxSeconds: 0.01 };

function figures(rpc: NodeFigures['rpc'] = []): NodeFigures {
  return {
    headNumber: 42n,
    peerCount: 3,
    maxPeers: 25,
    chainHead: { timestamp: 1_700_000_000n, gasUsed: 21_000n, gasLimit: 30_000_000n, transactionCount: 1, ommerCount: 0, totalDifficulty: 43n },
    poolTransactions: 7,
    qbft: { height: 43n, round: 1 },
    rpc,
    mailboxDepths: new Map([
      ['chain', 2],
      ['transport', 0],
    ]),
    eventLoops: [
      { thread: 'main', lag: LAG },
      { thread: 'chain', lag: { ...LAG, maxSeconds: 0.5 } },
    ],
  };
}

async function served(categories: readonly MetricCategory[], given = figures()) {
  return parsePrometheusText(await new NodeMetrics(categories).text(given));
}

test('every category\'s metrics, with Besu\'s names and types', async (t) => {
  const families = await served(METRIC_CATEGORIES);
  t.is(sampleValue(families, 'ethereum_blockchain_height'), 42);
  t.is(sampleValue(families, 'ethereum_best_known_block_number'), 42);
  t.is(sampleValue(families, 'ethereum_peer_count'), 3);
  t.is(sampleValue(families, 'ethereum_peer_limit'), 25);
  t.is(sampleValue(families, 'besu_blockchain_chain_head_timestamp'), 1_700_000_000);
  t.is(sampleValue(families, 'besu_blockchain_chain_head_gas_used'), 21_000);
  t.is(sampleValue(families, 'besu_blockchain_difficulty_total'), 43);
  t.is(sampleValue(families, 'besu_transaction_pool_transactions'), 7);
  t.is(sampleValue(families, 'besu_consensus_qbft_height'), 43);
  t.is(sampleValue(families, 'besu_consensus_qbft_round'), 1);
  t.is(sampleValue(families, 'besu_executors_actor_mailbox_depth', { actor: 'chain' }), 2);
  t.is(sampleValue(families, 'besu_executors_event_loop_lag_max_seconds', { thread: 'chain' }), 0.5);
  t.is(sampleValue(families, 'besu_executors_event_loop_lag_p99_seconds', { thread: 'main' }), 0.004);
  t.is(families.get('besu_rpc_request_time')?.type, 'summary');
  t.true(families.has('process_resident_memory_bytes'));
  t.true(families.has('nodejs_eventloop_lag_seconds'));
  for (const family of families.values()) t.regex(family.name, /^(ethereum_|besu_|process_|nodejs_)/);
});

test('each category serves only its own metrics', async (t) => {
  const names = async (category: MetricCategory) => [...(await served([category])).keys()].sort();
  t.deepEqual(await names('ETHEREUM'), ['ethereum_best_known_block_number', 'ethereum_blockchain_height', 'ethereum_peer_count', 'ethereum_peer_limit']);
  t.deepEqual(await names('TRANSACTION_POOL'), ['besu_transaction_pool_transactions']);
  t.deepEqual(await names('CONSENSUS'), ['besu_consensus_qbft_height', 'besu_consensus_qbft_round']);
  t.deepEqual(await names('RPC'), ['besu_rpc_request_time']);
  t.true((await names('BLOCKCHAIN')).every((name) => name.startsWith('besu_blockchain_')));
  t.true((await names('EXECUTORS')).every((name) => name.startsWith('besu_executors_')));
  t.true((await names('PROCESS')).every((name) => name.startsWith('process_')));
  t.true((await names('JVM')).length > 0 && (await names('JVM')).every((name) => name.startsWith('nodejs_')));
  t.deepEqual(await names('KVSTORE_ROCKSDB'), [], 'accepted, nothing to serve');
});

test('besu_rpc_request_time adds every thread\'s calls of a method: counts, sums, and quantiles of all the durations', async (t) => {
  let now = 0;
  const clock = () => now;
  const [first, second] = [new RpcTimings(clock), new RpcTimings(clock)];
  const durationsMs = { first: [1, 2, 3, 4], second: [10, 20, 30, 40, 50, 60] };
  for (const ms of durationsMs.first) first.record('eth_call', now - ms);
  for (const ms of durationsMs.second) second.record('eth_call', now - ms);
  second.record('eth_blockNumber', now - 0.05);
  now = 1;
  const families = await served(['RPC'], figures([...first.snapshot(), ...second.snapshot()]));
  const all = [...durationsMs.first, ...durationsMs.second].map((ms) => ms / 1000).sort((a, b) => a - b);
  t.is(sampleValue(families, 'besu_rpc_request_time_count', { methodName: 'eth_call' }), 10);
  t.true(Math.abs(sampleValue(families, 'besu_rpc_request_time_sum', { methodName: 'eth_call' }) - 0.22) < 1e-9);
  for (const [q, label] of [[0.2, '0.2'], [0.5, '0.5'], [0.8, '0.8'], [0.95, '0.95'], [0.99, '0.99']] as const) {
    const read = sampleValue(families, 'besu_rpc_request_time', { methodName: 'eth_call', quantile: label });
    t.true(Math.abs(read / exactQuantile(all, q) - 1) <= 0.045, `q=${q}: ${read}`);
  }
  t.is(sampleValue(families, 'besu_rpc_request_time', { methodName: 'eth_call', quantile: '1.0' }), 0.06);
  t.is(sampleValue(families, 'besu_rpc_request_time_count', { methodName: 'eth_blockNumber' }), 1);
});

test('a figure whose thread did not answer keeps its last value; labelled ones list only who answered', async (t) => {
  const metrics = new NodeMetrics(['TRANSACTION_POOL', 'EXECUTORS']);
  await metrics.text(figures());
  const { poolTransactions: _, ...withoutPool } = figures();
  const families = parsePrometheusText(await metrics.text({ ...withoutPool, eventLoops: [{ thread: 'main', lag: LAG }] }));
  t.is(sampleValue(families, 'besu_transaction_pool_transactions'), 7);
  t.deepEqual(
    families.get('besu_executors_event_loop_lag_mean_seconds')!.samples.map((s) => s.labels.thread),
    ['main'],
  );
});
