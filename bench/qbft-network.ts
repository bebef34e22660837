/**
 * Four QBFT validators on this machine's loopback interface, each executing every block: how many
 * transfers per second the network includes. `operator generate-blockchain-config` writes the genesis
 * and the four keys, examples/four-nodes/start-network starts the nodes (free ports, each with the
 * earlier ones as bootnodes), then S funded senders submit T pre-signed transfers spread over the
 * four nodes' JSON-RPC ports. Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/qbft-network.js [--senders=200] [--txs=10000] [--concurrency=64]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNetwork, type Network } from '../examples/four-nodes/start-network.js';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { REPO_ROOT, runCli } from '../test/helpers/node-process.js';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { fixed, log, megabytes, printTable, rate } from './lib/format.js';
import { jsonPostRequest, rpcBody, RpcClient, runClosedLoop, type ClosedLoopResult, type LoadJob } from './lib/http-client.js';
import { MachineMeter, readCpuMs, RssSampler } from './lib/proc.js';
import { accountFromKey, randomAccount, signingCommon, signTx, type Account, type SignedTx } from './lib/signing.js';
import { LatencyRecorder, MessageTally, percentile, summarizeLatencies } from './lib/stats.js';
import { blockFill, includedRate, sendAllOrThrow, sleep, startInclusionWatch, tallyError, waitForNonces } from './lib/tx-load.js';

const HOST = '127.0.0.1';
const GWEI = 10n ** 9n;
const TRANSFER_GAS = 21_000n;
/** Block arrival is read by polling the observing node; this bounds its resolution. */
const POLL_MS = 25;
const ROUND_CHANGE = /QBFT round change/g;

const flags = parseFlags('dist/bench/qbft-network.js', {
  senders: { default: 200, min: 1, description: 'number of sending accounts' },
  txs: { default: 10_000, min: 1, description: 'transfers to submit, spread over the senders' },
  concurrency: { default: 64, min: 1, description: 'eth_sendRawTransaction requests in flight (over all target nodes)' },
  'submit-to': { default: 'all', description: "'all': sender i submits to node i mod 4; 'one': everything to node 1" },
  'block-period': { default: 1, min: 1, description: 'blockperiodseconds of the genesis' },
  'request-timeout': { default: 4, min: 1, description: 'requesttimeoutseconds of the genesis (round 0 timer)' },
  'include-timeout': { default: 60, min: 1, description: 'seconds to wait for inclusion once submission ended' },
  'cpu-prof-dir': { default: '', description: 'run every node with --cpu-prof, profiles into this directory' },
  'node-args': { default: '', description: "more node options for every node, space-separated" },
  'keep-dir': { default: false, description: 'keep the network folder (genesis, keys, logs/node-<i>.log) after the run' },
  'max-seconds': { default: 400, min: 30, description: 'ceiling on the whole run' },
});

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'basalt-qbft-bench-'));
  onCleanup('network folder', () => (flags['keep-dir'] ? log(`network folder kept: ${dir}`) : rmSync(dir, { recursive: true, force: true })));
  const networkDir = join(dir, 'network');
  await generateNetwork(dir, networkDir);

  const nodeArgs = ['--rpc-http-api=ETH,NET,WEB3,QBFT,ADMIN,TXPOOL', ...flags['node-args'].split(' ').filter((arg) => arg !== '')];
  const nodeFlags = flags['cpu-prof-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${flags['cpu-prof-dir']}`] : [];
  log(`starting four validators${flags['node-args'] ? ` with ${flags['node-args']}` : ''}${nodeFlags.length > 0 ? ' under --cpu-prof' : ''}`);
  let network: Network | undefined;
  onCleanup('four nodes', async () => {
    const codes = await network?.stop(15_000);
    if (codes?.some((code) => code !== 0)) log(`node exit codes ${codes.join(', ')}`);
  });
  network = await startNetwork({ networkDir, rpcPort: 0, p2pPort: 0, nodeArgs, nodeFlags, readyTimeoutMs: 90_000 });
  const nodes = network.nodes;
  const ports = nodes.map((node) => Number(new URL(node.rpcUrl).port));
  const rpcs = ports.map((port) => new RpcClient(HOST, port));
  onCleanup('setup RPC connections', () => rpcs.forEach((rpc) => rpc.close()));
  const rss = nodes.map((node) => new RssSampler(node.process.pid!));
  onCleanup('RSS samplers', () => rss.forEach((sampler) => sampler.stop()));
  await waitUntil('a full mesh', 60_000, async () => (await Promise.all(rpcs.map((rpc) => rpc.call<string>('net_peerCount')))).every((count) => count === '0x3'));
  await waitUntil('block 2 on every node', 60_000, async () => (await Promise.all(rpcs.map((rpc) => rpc.call<string>('eth_blockNumber')))).every((n) => Number(n) >= 2));
  log(`four nodes peered and producing blocks (pids ${nodes.map((node) => node.process.pid).join(', ')}; ports ${ports.join(', ')}; RSS ${rss.map((s) => megabytes(s.current())).join(', ')})`);

  const observer = rpcs[0]!;
  const chainId = Number(await observer.call<string>('eth_chainId'));
  const common = signingCommon(chainId);
  const head = await observer.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
  const maxPriorityFeePerGas = 1n * GWEI;
  // Base fee can only fall on this chain (blocks stay far below the gas target), so this always suffices.
  const maxFeePerGas = 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas;

  const senders = Array.from({ length: flags.senders }, () => randomAccount());
  const perSender = (index: number): number => Math.floor(flags.txs / senders.length) + (index < flags.txs % senders.length ? 1 : 0);
  const budget = BigInt(perSender(0)) * TRANSFER_GAS * maxFeePerGas * 2n + 10n ** 16n;
  await fund(observer, common, ports[0]!, senders, budget, maxFeePerGas, maxPriorityFeePerGas);

  // Each sender's transactions all go to one node, in nonce order: no node sees a nonce gap.
  const targets = flags['submit-to'] === 'one' ? [0] : nodes.map((_, i) => i);
  if (flags['submit-to'] !== 'one' && flags['submit-to'] !== 'all') throw new Error(`--submit-to must be 'all' or 'one', got ${flags['submit-to']}`);
  const signStarted = performance.now();
  const queues: SignedTx[][] = targets.map(() => []);
  const rounds = Math.max(...senders.map((_, i) => perSender(i)));
  for (let round = 0; round < rounds; round++) {
    for (const [s, sender] of senders.entries()) {
      if (round >= perSender(s)) continue;
      const to = senders[(s + 1) % senders.length]!.address;
      queues[s % targets.length]!.push(signTx(common, sender, { nonce: BigInt(round), to, value: 1n, gasLimit: TRANSFER_GAS, maxFeePerGas, maxPriorityFeePerGas }));
    }
  }
  const signed = queues.flat();
  const signMs = performance.now() - signStarted;
  log(`signed ${signed.length} transfers in ${fixed(signMs / 1000, 2)} s (excluded from the figures); submitting to node(s) ${targets.map((t) => t + 1).join(', ')}`);

  const pending = new Set(signed.map((tx) => tx.hash));
  const fromBlock = Number(await observer.call<string>('eth_blockNumber')) + 1;
  const roundChangesBefore = nodes.map((node) => countRoundChanges(node.output()));
  rss.forEach((sampler) => sampler.resetPeak());
  const cpuBefore = nodes.map((node) => readCpuMs(node.process.pid!) ?? Number.NaN);
  const machine = new MachineMeter();
  const latencies = new LatencyRecorder();
  const rejected = new MessageTally();
  let accepted = 0;

  const { submissionStarted, submissionEnded, result: watching } = startInclusionWatch(HOST, ports[0]!, {
    fromBlock,
    pending,
    includeTimeoutSeconds: flags['include-timeout'],
    maxSeconds: flags['max-seconds'],
    pollMs: POLL_MS,
  });

  const connectionsPerTarget = Math.max(1, Math.round(flags.concurrency / targets.length));
  const submissions: ClosedLoopResult[] = await Promise.all(
    targets.map((target, t) => {
      const port = ports[target]!;
      const queue = queues[t]!;
      let next = 0;
      return runClosedLoop({ host: HOST, port, connections: connectionsPerTarget, maxRunMs: 180_000 }, (): LoadJob | undefined => {
        const tx = queue[next++];
        if (!tx) return undefined;
        return {
          bytes: jsonPostRequest(HOST, port, rpcBody('eth_sendRawTransaction', [tx.raw], next)),
          onAnswer(answer, latencyMs) {
            latencies.add(latencyMs);
            if (answer.status === 200 && tallyError(answer.body, rejected)) accepted++;
            else {
              if (answer.status !== 200) rejected.add(`HTTP ${answer.status}`);
              pending.delete(tx.hash);
            }
          },
        };
      });
    }),
  );
  submissionEnded();
  const submitMs = Math.max(...submissions.map((s) => s.wallMs));
  const transportErrors = submissions.reduce((sum, s) => sum + s.transportErrors, 0);
  const latency = summarizeLatencies(latencies);
  log(`submitted: ${accepted} accepted of ${signed.length} in ${fixed(submitMs / 1000, 2)} s → ${fixed(rate(accepted, submitMs))} tx/s; latency p50 ${fixed(latency.p50, 2)} ms, p99 ${fixed(latency.p99, 2)} ms`);
  if (rejected.total > 0) log(`rejected ${rejected.total}: ${rejected.entries().map(([m, n]) => `${n}× "${m}"`).join(', ')}`);
  if (transportErrors > 0) log(`transport errors ${transportErrors}: ${submissions.flatMap((s) => s.transportErrorMessages).join('; ')}`);

  const inclusion = await watching;
  const workloadMs = performance.now() - submissionStarted;
  const cpuMs = nodes.map((node, i) => (readCpuMs(node.process.pid!) ?? Number.NaN) - cpuBefore[i]!);
  const totalCpuMs = cpuMs.reduce((a, b) => a + b, 0);
  const busyCores = machine.busyCores();
  const peaks = rss.map((sampler) => sampler.peak());
  const roundChanges = nodes.map((node, i) => countRoundChanges(node.output()) - roundChangesBefore[i]!);

  // Block times over the blocks holding our transactions (and the one before the first, as the start).
  const ours = inclusion.blocks.filter((b) => b.ours > 0);
  const span = ours.length === 0 ? [] : inclusion.blocks.filter((b) => b.number >= ours[0]!.number - 1 && b.number <= ours[ours.length - 1]!.number);
  const timestampDeltas = deltas(span.map((b) => b.timestamp * 1000));
  const arrivalDeltas = deltas(span.map((b) => b.seenAtMs));
  const included = includedRate(inclusion);

  log(
    `included: ${inclusion.included} in ${ours.length} blocks (${inclusion.txsInSpan} txs over ${inclusion.spanSeconds} s of block time → ${fixed(included)} tx/s); ` +
      (inclusion.allIncludedAfterMs === undefined
        ? `${inclusion.notIncluded} NOT included within ${flags['include-timeout']} s after submission`
        : `all included ${fixed(inclusion.allIncludedAfterMs / 1000, 2)} s after submission started`),
  );
  log(`transactions per block (seconds since the previous block): ${blockFill(inclusion).join(', ')}`);
  log(`round changes during the workload per node: ${roundChanges.join(', ')}`);

  console.log('\n=== summary ===');
  console.log(
    `4 validators, block period ${flags['block-period']} s, request timeout ${flags['request-timeout']} s; ${senders.length} senders, ${flags.txs} transfers, ` +
      `${connectionsPerTarget * targets.length} in flight over ${targets.length} node(s)`,
  );
  printTable(
    ['figure', 'value'],
    [
      ['submitted tx/s', fixed(rate(accepted, submitMs))],
      ['included tx/s', fixed(included)],
      ['all included after', inclusion.allIncludedAfterMs === undefined ? `${inclusion.notIncluded} missing` : `${fixed(inclusion.allIncludedAfterMs / 1000, 2)} s`],
      ['block time p50/p99 (timestamps)', `${fixed(percentile(timestampDeltas, 50) / 1000, 2)} / ${fixed(percentile(timestampDeltas, 99) / 1000, 2)} s`],
      ['block time p50/p99 (arrival at node 1)', `${fixed(percentile(arrivalDeltas, 50) / 1000, 2)} / ${fixed(percentile(arrivalDeltas, 99) / 1000, 2)} s`],
      ['round changes (all nodes)', String(roundChanges.reduce((a, b) => a + b, 0))],
      ['blocks / transactions per block (mean)', `${ours.length} / ${fixed(ours.length > 0 ? inclusion.txsInSpan / span.slice(1).length : Number.NaN)}`],
      ['submission latency p50/p99', `${fixed(latency.p50, 2)} / ${fixed(latency.p99, 2)} ms`],
      ['rejected', String(rejected.total + transportErrors)],
      // What the figures above cost, independent of how much of the machine others took meanwhile.
      ['CPU of the four nodes per included tx', `${fixed(inclusion.included > 0 ? totalCpuMs / inclusion.included : Number.NaN, 2)} ms`],
      ['machine busy (all processes)', `${fixed(busyCores, 2)} cores`],
    ],
  );
  console.log('');
  printTable(
    ['node', 'peak RSS', 'CPU s', 'CPU % of a core', 'round changes'],
    nodes.map((node, i) => [`${i + 1} ${node.address.slice(0, 10)}`, megabytes(peaks[i]), fixed(cpuMs[i]! / 1000), fixed((cpuMs[i]! / workloadMs) * 100), String(roundChanges[i])]),
  );
  log(`total run time ${fixed((performance.now() - started) / 1000)} s; stopping the nodes`);
}

/** Writes the bench's QBFT config (the example's, with this run's timers) and generates the network from it. */
async function generateNetwork(dir: string, networkDir: string): Promise<void> {
  const config = JSON.parse(readFileSync(join(REPO_ROOT, 'examples/four-nodes/qbftConfigFile.json'), 'utf8')) as {
    genesis: { config: { qbft: Record<string, number> } };
  };
  config.genesis.config.qbft.blockperiodseconds = flags['block-period'];
  config.genesis.config.qbft.requesttimeoutseconds = flags['request-timeout'];
  const configFile = join(dir, 'qbftConfigFile.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const generated = await runCli(['operator', 'generate-blockchain-config', `--config-file=${configFile}`, `--to=${networkDir}`, '--private-key-file-name=key']);
  if (generated.code !== 0) throw new Error(`operator generate-blockchain-config failed:\n${generated.output}`);
}

/** Funds every sender with `budget` wei from the example genesis' dev accounts, through node 1. */
async function fund(rpc: RpcClient, common: ReturnType<typeof signingCommon>, port: number, senders: Account[], budget: bigint, maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): Promise<void> {
  const funders = DEV_ACCOUNTS.map((a) => accountFromKey(a.privateKey));
  const nonces = await Promise.all(funders.map(async (f) => BigInt(await rpc.call<string>('eth_getTransactionCount', [f.address, 'latest']))));
  const signed = senders.map((sender, index) => {
    const f = index % funders.length;
    return signTx(common, funders[f]!, { nonce: nonces[f]!++, to: sender.address, value: budget, gasLimit: TRANSFER_GAS, maxFeePerGas, maxPriorityFeePerGas });
  });
  log(`funding ${senders.length} senders with ${budget} wei each`);
  await sendAllOrThrow(HOST, port, signed, 16, 'funding');
  await waitForNonces(rpc, funders, nonces, 60_000, 'funding transactions');
  log('funded');
}

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

function countRoundChanges(output: string): number {
  return output.match(ROUND_CHANGE)?.length ?? 0;
}

function deltas(values: number[]): Float64Array {
  return Float64Array.from(values.slice(1).map((v, i) => v - values[i]!)).sort();
}
