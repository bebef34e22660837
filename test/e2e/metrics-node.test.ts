/**
 * Prometheus metrics of a running node (`--metrics-enabled`, port 0 read from the node's log): the
 * scrape parsed as Prometheus text, chain height following the head, JSON-RPC calls counted and timed
 * per method across both transport threads, pool size and peer count against the node's own JSON-RPC
 * answers, QBFT height and round on the dev network, event-loop lag and mailbox depth of every thread,
 * `--metrics-category` restricting what is served, and the port's 403/404/405.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Wallet, parseUnits } from 'ethers';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess, StartOptions } from '../helpers/node-process.js';
import { parsePrometheusText, sampleValue, type Family } from '../helpers/prometheus-text.js';

const METRICS_LISTENING = /Metrics service started and listening on (\S+):(\d+)/;
const APIS = '--rpc-http-api=ETH,NET,WEB3,TXPOOL';

const started: NodeProcess[] = [];

test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  for (const node of started) removeDataPath(node.dataPath);
});

/** A node with metrics on port 0, and its metrics URL. */
async function metricsNode(args: string[], opts: StartOptions = {}): Promise<{ node: NodeProcess; metricsUrl: string }> {
  const node = await startNode({ ...opts, args: ['--metrics-enabled', '--metrics-port=0', '--rpc-http-workers=2', '--Xstate-reader-threads=1', APIS, ...args] });
  started.push(node);
  const { match } = await node.waitForLog(METRICS_LISTENING);
  return { node, metricsUrl: `http://127.0.0.1:${match[2]}/metrics` };
}

async function scrape(metricsUrl: string): Promise<Map<string, Family>> {
  const res = await fetch(metricsUrl);
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? '')) throw new Error(`content type ${res.headers.get('content-type')}`);
  return parsePrometheusText(await res.text());
}

/** A GET with exactly the Host header given (fetch would set its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

/** The label values a family has for `label`, sorted. */
function labelValues(families: Map<string, Family>, name: string, label: string): string[] {
  return (families.get(name)?.samples ?? []).map((s) => s.labels[label]!).sort();
}

const THREADS = ['chain', 'consensus', 'logindex', 'main', 'p2p', 'reader-0', 'transport-0', 'transport-1', 'txpool'];
const ACTORS = ['chain', 'consensus', 'logindex', 'p2p', 'reader', 'transport', 'txpool'];
const LAG_STATS = ['mean', 'p50', 'p90', 'p99', 'max'];

test.serial('a dev node: height follows the head, QBFT height and round, RPC calls per method, pool size, peers, every thread\'s lag and mailbox', async (t) => {
  const { node, metricsUrl } = await metricsNode([], { p2p: true });

  // Chain height: what the scrape reads lies between the head before and after it, and moves with it.
  const before = Number(await node.rpc<string>('eth_blockNumber'));
  let families = await scrape(metricsUrl);
  const height = sampleValue(families, 'ethereum_blockchain_height');
  t.true(height >= before && height <= Number(await node.rpc<string>('eth_blockNumber')), `height ${height}`);
  await node.waitForLog(new RegExp(`Imported #${height + 2} `));
  families = await scrape(metricsUrl);
  const later = sampleValue(families, 'ethereum_blockchain_height');
  t.true(later >= height + 2 && later <= Number(await node.rpc<string>('eth_blockNumber')), `height ${later} after #${height + 2}`);
  t.is(families.get('ethereum_blockchain_height')?.type, 'gauge');
  t.is(families.get('ethereum_blockchain_height')?.help, 'The current height of the canonical chain');
  t.is(sampleValue(families, 'ethereum_peer_limit'), 25);
  t.is(sampleValue(families, 'besu_blockchain_chain_head_gas_limit') > 0, true);

  // QBFT works on the block after the head; the sole validator never needs a round change.
  const qbftHeight = sampleValue(families, 'besu_consensus_qbft_height');
  t.true(qbftHeight >= later && qbftHeight <= later + 2, `QBFT height ${qbftHeight}, chain ${later}`);
  t.is(sampleValue(families, 'besu_consensus_qbft_round'), 0);

  // JSON-RPC: three calls of a method no one called yet, spread over two transport threads, count 3.
  t.false(labelValues(families, 'besu_rpc_request_time', 'methodName').includes('eth_chainId'));
  for (let i = 0; i < 3; i++) await node.rpc('eth_chainId');
  families = await scrape(metricsUrl);
  t.is(families.get('besu_rpc_request_time')?.type, 'summary');
  t.is(sampleValue(families, 'besu_rpc_request_time_count', { methodName: 'eth_chainId' }), 3);
  const sum = sampleValue(families, 'besu_rpc_request_time_sum', { methodName: 'eth_chainId' });
  t.true(sum > 0 && sum < 3, `sum ${sum}`);
  const quantiles = ['0.2', '0.5', '0.8', '0.95', '0.99', '1.0'].map((quantile) => sampleValue(families, 'besu_rpc_request_time', { methodName: 'eth_chainId', quantile }));
  t.true(quantiles.every((q, i) => q > 0 && q <= sum && (i === 0 || q >= quantiles[i - 1]!)), `quantiles ${quantiles.join(', ')}`);
  // eth_blockNumber, answered by the transports from shared memory, is counted too: the three calls above.
  t.is(sampleValue(families, 'besu_rpc_request_time_count', { methodName: 'eth_blockNumber' }), 3);

  // Pool size: a transaction with a nonce gap stays in the pool (not mined), as txpool_besuStatistics says.
  t.is(sampleValue(families, 'besu_transaction_pool_transactions'), 0);
  const future = await new Wallet(DEV_ACCOUNTS[1].privateKey).signTransaction({
    chainId: 1337n, type: 2, nonce: 5, to: DEV_ACCOUNTS[0].address, value: 1n, gasLimit: 21_000n,
    maxFeePerGas: parseUnits('10', 'gwei'), maxPriorityFeePerGas: 1n,
  });
  await node.rpc('eth_sendRawTransaction', [future]);
  families = await scrape(metricsUrl);
  t.is(sampleValue(families, 'besu_transaction_pool_transactions'), 1);
  t.deepEqual(await node.rpc('txpool_besuStatistics'), { maxSize: -1, localCount: 1, remoteCount: 0 });

  // Peer count: a second node (its own key, not a validator) dials this one.
  t.is(sampleValue(families, 'ethereum_peer_count'), 0);
  const enode = await node.rpc<string>('net_enode');
  const peerPath = tempDataPath();
  const peerKey = join(peerPath, 'peer.key');
  writeFileSync(peerKey, formatNodeKey(randomBytes(32)));
  const peer = await startNode({ p2p: true, dataPath: peerPath, args: [`--bootnodes=${enode}`, `--node-private-key-file=${peerKey}`, APIS] });
  started.push(peer);
  await waitFor('the first node sees its peer', () => node.rpc<string>('net_peerCount'), (count) => count === '0x1', 30_000);
  families = await scrape(metricsUrl);
  t.is(sampleValue(families, 'ethereum_peer_count'), 1);

  // The state reader thread starts at the first call that reads state; from then on it is scraped too.
  t.false(labelValues(families, 'besu_executors_event_loop_lag_mean_seconds', 'thread').includes('reader-0'));
  await node.rpc('eth_getBalance', [DEV_ACCOUNTS[0].address, 'latest']);
  await node.waitForLog(/State reader threads started: 1/);
  families = await scrape(metricsUrl);

  // Every thread's event-loop lag and every actor's mailbox depth, as numbers a scrape can graph.
  for (const stat of LAG_STATS) {
    const name = `besu_executors_event_loop_lag_${stat}_seconds`;
    t.deepEqual(labelValues(families, name, 'thread'), THREADS, name);
    t.true(families.get(name)!.samples.every((s) => Number.isFinite(s.value) && s.value >= 0), name);
  }
  t.deepEqual(labelValues(families, 'besu_executors_actor_mailbox_depth', 'actor'), ACTORS);
  t.true(families.get('besu_executors_actor_mailbox_depth')!.samples.every((s) => Number.isInteger(s.value) && s.value >= 0 && s.value < 1000));

  // The process and runtime collectors (PROCESS, JVM) are on by default.
  t.true(families.has('process_cpu_user_seconds_total'));
  t.true(families.has('nodejs_heap_size_used_bytes'));
});

test.serial('--metrics-category restricts what is served; net_services names the port; it answers 403 to a host not allowed, 404 elsewhere, 405 to POST', async (t) => {
  const { node, metricsUrl } = await metricsNode(['--metrics-category=RPC,transaction_pool']);
  // net_services names the metrics port, as Besu's does (called before any other method: it is counted too).
  t.deepEqual(await node.rpc('net_services'), {
    jsonrpc: { host: '127.0.0.1', port: String(node.port) },
    metrics: { host: '127.0.0.1', port: new URL(metricsUrl).port },
  });
  await node.rpc('eth_blockNumber');
  const families = await scrape(metricsUrl);
  t.deepEqual([...families.keys()].sort(), ['besu_rpc_request_time', 'besu_transaction_pool_transactions']);
  t.is(sampleValue(families, 'besu_rpc_request_time_count', { methodName: 'eth_blockNumber' }), 1);

  t.deepEqual(await getWithHost(metricsUrl, 'attacker.example'), { status: 403, body: '' });
  t.is((await getWithHost(metricsUrl, 'localhost')).status, 200);
  t.is((await fetch(metricsUrl.replace('/metrics', '/'))).status, 404);
  t.is((await fetch(metricsUrl, { method: 'POST' })).status, 405);
});
