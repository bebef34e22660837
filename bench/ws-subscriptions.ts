/**
 * Subscriptions over WebSocket under load, against a dev node (1-second blocks):
 *
 * 1. newHeads latency: `--subscribers` (1, 100, 1000) connections each subscribe to newHeads; for
 *    `--blocks` (10) blocks, the time from the chain's `Imported #N` log line (the block is stored
 *    and announced) to each notification's arrival, p50/p99/max over all notifications, and p99 of
 *    the last subscriber of each block.
 * 2. Block import beside `logs` subscriptions: `--logs-subscriptions` (1000) subscriptions held on
 *    20 connections (999 for random addresses, 1 for a storeAndLog contract) against none, while
 *    blocks are filled with `--txs` (600) storeAndLog calls, one log each: the import lag of those
 *    blocks, from the block's slot (its timestamp) to its `Imported` line (building, execution,
 *    storing), mean and max.
 *
 * Prints figures; asserts nothing.   npm run build && node dist/bench/ws-subscriptions.js
 */
import { randomBytes } from 'node:crypto';
import { getCreateAddress, toBeHex, zeroPadValue } from 'ethers';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { storeAndLogDeployCode } from '../test/helpers/contracts.js';
import { parseFlags } from './lib/args.js';
import { runBenchmark } from './lib/cleanup.js';
import { startBenchNode, type BenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { RpcClient } from './lib/http-client.js';
import { RawWs } from './lib/raw-ws.js';
import { MachineMeter } from './lib/proc.js';
import { accountFromKey, signingCommon, signTx } from './lib/signing.js';
import { LatencyRecorder, percentile, summarizeLatencies } from './lib/stats.js';

const flags = parseFlags('dist/bench/ws-subscriptions.js', {
  subscribers: { default: '1,100,1000', description: 'comma-separated newHeads subscriber counts, one connection each' },
  blocks: { default: 10, min: 2, description: 'blocks measured per subscriber count' },
  'logs-subscriptions': { default: 1000, min: 1, description: 'logs subscriptions held during the import measurement' },
  'skip-import': { default: false, description: 'measure newHeads latency only' },
  'cpu-prof-dir': { default: '', description: 'run the node with --cpu-prof, profiles into this directory' },
  txs: { default: 600, min: 1, description: 'storeAndLog calls sent during each import measurement (at most 600: 200 per dev account)' },
  'max-seconds': { default: 600, min: 30, description: 'ceiling on the whole run' },
});

const IMPORTED = /^(\S+) \|.*\| Chain \| Imported #(\d+) \/ (\d+) tx/gm;

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const counts = flags.subscribers.split(',').map((n) => Number(n.trim()));
  const largest = Math.max(...counts);
  const node = await startBenchNode({
    args: ['--rpc-ws-enabled', `--rpc-ws-max-active-connections=${largest + 100}`],
    cpuProfileDir: flags['cpu-prof-dir'] || undefined,
  });
  try {
    const url = node.wsUrl!;
    const latencyRows: string[][] = [];
    for (const count of counts) latencyRows.push(await measureLatency(node, url, count));
    const importRows = flags['skip-import'] ? [] : [await measureImport(node, url, 0), await measureImport(node, url, flags['logs-subscriptions'])];

    console.log(`\n=== newHeads: chain's Imported line → notification received (${flags.blocks} blocks each) ===`);
    printTable(['subscribers', 'notifications', 'p50 ms', 'p99 ms', 'max ms', 'p99 of last per block ms', 'machine CPU'], latencyRows);
    if (importRows.length === 0) return;
    console.log(`\n=== block import lag (slot → Imported line) while ${flags.txs} storeAndLog calls are mined ===`);
    printTable(['logs subscriptions', 'blocks', 'txs', 'mean lag ms', 'max lag ms', 'notifications', 'machine CPU'], importRows);
    console.log('(log line timestamps have millisecond resolution; "machine CPU" is what every process used meanwhile, % of one core, of 2 cores)');
  } finally {
    await node.stop();
  }
}

/** When each block's `Imported` line was written (ms since the epoch) and how many transactions it had. */
function importedBlocks(output: string): Map<bigint, { at: number; txs: number }> {
  const blocks = new Map<bigint, { at: number; txs: number }>();
  for (const match of output.matchAll(IMPORTED)) blocks.set(BigInt(match[2]!), { at: Date.parse(match[1]!), txs: Number(match[3]) });
  return blocks;
}

/** Opens `count` connections, a few at a time. */
async function openMany(url: string, count: number): Promise<RawWs[]> {
  const sockets: RawWs[] = [];
  while (sockets.length < count) sockets.push(...(await Promise.all(Array.from({ length: Math.min(50, count - sockets.length) }, () => RawWs.open(url)))));
  return sockets;
}

/** Subscribes each of `params` on its socket and resolves once every subscription is answered. */
async function subscribeAll(requests: { socket: RawWs; params: unknown[] }[]): Promise<void> {
  const waiting = new Map<number, () => void>();
  const bySocket = new Set(requests.map((r) => r.socket));
  for (const socket of bySocket) {
    socket.onMessage(({ text }) => {
      const id = /^\{"jsonrpc":"2.0","id":(\d+),"result"/.exec(text)?.[1];
      if (id !== undefined) waiting.get(Number(id))?.();
    });
  }
  await Promise.all(
    requests.map(
      ({ socket, params }, id) =>
        new Promise<void>((resolve) => {
          waiting.set(id, resolve);
          socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params }));
        }),
    ),
  );
}

async function measureLatency(node: BenchNode, url: string, count: number): Promise<string[]> {
  log(`newHeads: ${count} subscriber(s)`);
  const sockets = await openMany(url, count);
  const arrivals: { block: bigint; at: number }[] = [];
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  let first: bigint | undefined;
  await subscribeAll(sockets.map((socket) => ({ socket, params: ['newHeads'] })));
  const machine = new MachineMeter();
  for (const socket of sockets) {
    socket.onMessage(({ text, at }) => {
      const match = /"number":"(0x[0-9a-f]+)"/.exec(text);
      if (match === null) return;
      const block = BigInt(match[1]!);
      first ??= block + 1n; // the first block may have been half-delivered when the subscriptions began
      if (block < first || block >= first + BigInt(flags.blocks)) return;
      arrivals.push({ block, at });
      if (arrivals.length === count * flags.blocks) done();
    });
  }
  await finished;
  const machineCpu = machine.busyCores() * 100;
  for (const socket of sockets) socket.close();
  // The Imported lines reach this process through a pipe: give them a moment to arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const imported = importedBlocks(node.output());
  const all = new LatencyRecorder();
  const lastPerBlock = new Map<bigint, number>();
  for (const { block, at } of arrivals) {
    const importedAt = imported.get(block)?.at;
    if (importedAt === undefined) throw new Error(`no Imported line for block ${block}`);
    all.add(at - importedAt);
    lastPerBlock.set(block, Math.max(lastPerBlock.get(block) ?? 0, at - importedAt));
  }
  const summary = summarizeLatencies(all);
  const last = Float64Array.from(lastPerBlock.values()).sort();
  log(`  p50 ${fixed(summary.p50, 2)} ms, p99 ${fixed(summary.p99, 2)} ms, max ${fixed(summary.max, 2)} ms`);
  return [String(count), String(all.count), fixed(summary.p50, 2), fixed(summary.p99, 2), fixed(summary.max, 2), fixed(percentile(last, 99), 2), `${fixed(machineCpu, 0)}%`];
}

async function measureImport(node: BenchNode, url: string, subscriptions: number): Promise<string[]> {
  log(`import with ${subscriptions} logs subscription(s)`);
  const rpc = new RpcClient('127.0.0.1', node.port);
  const sockets: RawWs[] = [];
  try {
    const contract = await deployStoreAndLog(rpc);
    let notifications = 0;
    if (subscriptions > 0) {
      sockets.push(...(await openMany(url, 20)));
      await subscribeAll(
        Array.from({ length: subscriptions }, (_, i) => ({
          socket: sockets[i % sockets.length]!,
          params: ['logs', { address: i === 0 ? contract : `0x${randomBytes(20).toString('hex')}` }],
        })),
      );
      for (const socket of sockets) socket.onMessage(({ text }) => (text.includes('eth_subscription') ? notifications++ : 0));
    }
    // The three dev accounts send in turn: the pool keeps at most 200 nonces ahead per sender.
    const senders = DEV_ACCOUNTS.map((account) => accountFromKey(account.privateKey));
    const nonces = await Promise.all(senders.map(async (sender) => BigInt(await rpc.call<string>('eth_getTransactionCount', [sender.address, 'pending']))));
    const common = signingCommon(1337);
    const fees = { value: 0n, gasLimit: 60_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n };
    const txs = Array.from({ length: flags.txs }, (_, i) => {
      const from = i % senders.length;
      const nonce = nonces[from]! + BigInt(Math.floor(i / senders.length));
      return signTx(common, senders[from]!, { nonce, to: contract, data: zeroPadValue(toBeHex(i + 1), 32), ...fees });
    });
    const machine = new MachineMeter();
    const startBlock = BigInt(await rpc.call<string>('eth_blockNumber'));
    for (let i = 0; i < txs.length; i += 200) {
      const answers = await rpc.batch(txs.slice(i, i + 200).map((tx) => ['eth_sendRawTransaction', [tx.raw]]));
      const refused = answers.find((answer) => answer.error !== undefined);
      if (refused) throw new Error(`a storeAndLog call was refused: ${refused.error!.message}`);
    }
    const lastHash = txs.at(-1)!.hash;
    const deadline = Date.now() + 60_000;
    let receipt: { blockNumber: string } | null = null;
    while ((receipt = await rpc.call<{ blockNumber: string } | null>('eth_getTransactionReceipt', [lastHash])) === null) {
      if (Date.now() > deadline) throw new Error('the storeAndLog calls were not mined within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const endBlock = BigInt(receipt.blockNumber);
    const machineCpu = machine.busyCores() * 100;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const imported = importedBlocks(node.output());
    const lags: number[] = [];
    let mined = 0;
    for (let n = startBlock + 1n; n <= endBlock; n++) {
      const line = imported.get(n);
      if (line === undefined || line.txs === 0) continue;
      const block = await rpc.call<{ timestamp: string }>('eth_getBlockByNumber', [toBeHex(n), false]);
      lags.push(line.at - Number(BigInt(block.timestamp)) * 1000);
      mined += line.txs;
    }
    const mean = lags.reduce((a, b) => a + b, 0) / lags.length;
    log(`  ${lags.length} blocks, ${mined} txs, lag mean ${fixed(mean, 0)} ms, max ${fixed(Math.max(...lags), 0)} ms, ${notifications} notifications`);
    return [String(subscriptions), String(lags.length), String(mined), fixed(mean, 0), fixed(Math.max(...lags), 0), String(notifications), `${fixed(machineCpu, 0)}%`];
  } finally {
    for (const socket of sockets) socket.close();
    rpc.close();
  }
}

/** Deploys storeAndLog from dev account 1 and answers its address once mined. */
async function deployStoreAndLog(rpc: RpcClient): Promise<string> {
  const deployer = accountFromKey(DEV_ACCOUNTS[1].privateKey);
  const common = signingCommon(1337);
  const nonce = BigInt(await rpc.call<string>('eth_getTransactionCount', [deployer.address, 'pending']));
  const deploy = signTx(common, deployer, { nonce, value: 0n, data: storeAndLogDeployCode(), gasLimit: 200_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n });
  await rpc.call('eth_sendRawTransaction', [deploy.raw]);
  const deadline = Date.now() + 30_000;
  while ((await rpc.call('eth_getTransactionReceipt', [deploy.hash])) === null) {
    if (Date.now() > deadline) throw new Error('the storeAndLog deployment was not mined within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return getCreateAddress({ from: deployer.address, nonce }).toLowerCase();
}
