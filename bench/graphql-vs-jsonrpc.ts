/**
 * One block with its transactions, receipts and logs, fetched three ways from the same dev node:
 *
 * - GraphQL: one `POST /graphql` asking for the block, each transaction with its sender, receipt
 *   fields and logs;
 * - JSON-RPC, 2 calls: `eth_getBlockByNumber(n, true)` then `eth_getBlockReceipts(n)`;
 * - JSON-RPC, per transaction: `eth_getBlockByNumber(n, true)` then `eth_getTransactionReceipt` for
 *   each transaction (what a client without eth_getBlockReceipts does).
 *
 * Each is measured for `--seconds` of closed-loop load at each `--concurrency` (1 and 64 by default).
 * A unit is one block fetched: its requests go in order, round-robin over the connections, so
 * blocks/s = answered requests ÷ requests per unit.
 *
 * Then, where GraphQL runs: `eth_blockNumber` latency at `--mixed-concurrency` connections alone,
 * and again while as many connections run the GraphQL query. Each `--layouts` entry is a node with
 * `JSON-RPC workers:GraphQL workers` transport threads, `:0` meaning GraphQL shares the JSON-RPC
 * workers (`--graphql-http-workers=0`, the default). Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/graphql-vs-jsonrpc.js [--txs=50] [--concurrency=1,64] [--seconds=5] [--layouts=2:0,1:1]
 */
import { toBeHex, zeroPadValue } from 'ethers';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { parseFlags } from './lib/args.js';
import { runBenchmark } from './lib/cleanup.js';
import { deployStoreAndLog } from './lib/contracts.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { jsonPostRequest, rpcBody, RpcClient, runClosedLoop, type HttpAnswer, KeepAliveConnection } from './lib/http-client.js';
import { CpuMeter, ownCpuMsSince } from './lib/proc.js';
import { LatencyRecorder, summarizeLatencies, type LatencySummary } from './lib/stats.js';
import { accountFromKey, signingCommon, signTx } from './lib/signing.js';

const HOST = '127.0.0.1';

const flags = parseFlags('dist/bench/graphql-vs-jsonrpc.js', {
  txs: { default: 50, min: 1, description: 'storeAndLog calls (one log each) to put in the measured block' },
  concurrency: { default: '1,64', description: 'comma-separated keep-alive connection counts, one request in flight each' },
  seconds: { default: 5, min: 1, description: 'measured duration of each run' },
  warmup: { default: 1, min: 0, description: 'unmeasured seconds of load before each run' },
  layouts: { default: '2:0,1:1', description: 'comma-separated JSON-RPC:GraphQL worker counts (:0 = GraphQL in the JSON-RPC workers)' },
  'mixed-concurrency': { default: 16, min: 1, description: 'connections of each kind in the mixed-load measurement' },
  'max-seconds': { default: 600, min: 10, description: 'ceiling on the whole run' },
});

/** What a block explorer shows of a block: what the JSON-RPC calls below return too. */
const BLOCK_QUERY = (block: bigint) => `{
  block(number: ${block}) {
    number hash parent { hash } timestamp miner { address } gasUsed gasLimit baseFeePerGas
    transactions {
      hash nonce index from { address } to { address } value gas gasPrice maxFeePerGas maxPriorityFeePerGas inputData type
      status gasUsed cumulativeGasUsed effectiveGasPrice createdContract { address }
      logs { index account { address } topics data }
    }
  }
}`;

interface Unit {
  name: string;
  /** The HTTP requests of one block fetch, in order. */
  requests: { port: number; bytes: Buffer }[];
}

interface Measurement {
  layout: string;
  unit: string;
  concurrency: number;
  blocksPerSecond: number;
  requestsPerSecond: number;
  requestsPerUnit: number;
  bytesIn: number;
  bytesOut: number;
  errors: number;
  serverCpu: number;
  /** CPU of this process (the load generator), % of one core. */
  generatorCpu: number;
}

runBenchmark(main, flags['max-seconds']);

interface MixedMeasurement {
  layout: string;
  alone: LatencySummary & { requestsPerSecond: number };
  mixed: LatencySummary & { requestsPerSecond: number; graphqlBlocksPerSecond: number };
}

function layoutName(rpcWorkers: number, graphqlWorkers: number): string {
  return graphqlWorkers === 0 ? `${rpcWorkers} shared` : `${rpcWorkers} JSON-RPC + ${graphqlWorkers} GraphQL`;
}

async function main(): Promise<void> {
  const concurrencies = flags.concurrency.split(',').map((c) => Number(c.trim()));
  const layouts = flags.layouts.split(',').map((entry) => entry.split(':').map((n) => Number(n.trim())) as [number, number]);
  if (layouts.some(([rpc, graphql]) => !Number.isInteger(rpc) || rpc < 1 || !Number.isInteger(graphql) || graphql < 0)) {
    throw new Error(`--layouts must be JSON-RPC:GraphQL worker counts, got ${flags.layouts}`);
  }
  const results: Measurement[] = [];
  const mixedResults: MixedMeasurement[] = [];
  for (const [rpcWorkers, graphqlWorkers] of layouts) {
    const layout = layoutName(rpcWorkers, graphqlWorkers);
    log(`starting a dev node with ${layout} transport worker(s)`);
    const node = await startBenchNode({ graphql: true, args: [`--rpc-http-workers=${rpcWorkers}`, `--graphql-http-workers=${graphqlWorkers}`] });
    try {
      const block = await fillBlock(node.port);
      const units = await unitsFor(block, node.port, node.graphqlPort!);
      for (const unit of units) {
        const sizes = await oneUnit(unit);
        log(`${unit.name}: ${unit.requests.length} request(s), ${sizes.bytesOut} bytes sent, ${sizes.bytesIn} bytes received per block`);
        for (const concurrency of concurrencies) {
          const measured = await measure(unit, concurrency, node.pid);
          const result = { layout, unit: unit.name, concurrency, ...measured, ...sizes, requestsPerUnit: unit.requests.length };
          results.push(result);
          log(
            `  c=${concurrency}: ${fixed(result.blocksPerSecond, 1)} blocks/s (${fixed(result.requestsPerSecond, 0)} req/s), errors ${result.errors}, ` +
              `server CPU ${fixed(result.serverCpu, 0)}%, generator CPU ${fixed(result.generatorCpu, 0)}%`,
          );
        }
      }
      const mixed = await measureMixed(node.port, units[0]!);
      mixedResults.push({ layout, ...mixed });
      log(
        `eth_blockNumber ×${flags['mixed-concurrency']}: alone p50 ${fixed(mixed.alone.p50, 2)} ms p99 ${fixed(mixed.alone.p99, 2)} ms; ` +
          `beside GraphQL ×${flags['mixed-concurrency']} p50 ${fixed(mixed.mixed.p50, 2)} ms p99 ${fixed(mixed.mixed.p99, 2)} ms`,
      );
    } finally {
      await node.stop();
    }
  }
  console.log(`\n=== one block with ${flags.txs} transactions and ${flags.txs} logs, ${flags.seconds} s per run ===`);
  printTable(
    ['transport workers', 'fetch', 'connections', 'blocks/s', 'HTTP req/s', 'requests/block', 'bytes sent/block', 'bytes received/block', 'errors', 'server CPU', 'generator CPU'],
    results.map((r) => [
      r.layout,
      r.unit,
      String(r.concurrency),
      fixed(r.blocksPerSecond, 1),
      fixed(r.requestsPerSecond, 0),
      String(r.requestsPerUnit),
      String(r.bytesOut),
      String(r.bytesIn),
      String(r.errors),
      `${fixed(r.serverCpu, 0)}%`,
      `${fixed(r.generatorCpu, 0)}%`,
    ]),
  );
  console.log(`\n=== eth_blockNumber over ${flags['mixed-concurrency']} connections, alone and beside as many GraphQL block queries ===`);
  printTable(
    ['transport workers', 'alone req/s', 'alone p50 ms', 'alone p99 ms', 'mixed req/s', 'mixed p50 ms', 'mixed p99 ms', 'GraphQL blocks/s'],
    mixedResults.map((r) => [
      r.layout,
      fixed(r.alone.requestsPerSecond, 0),
      fixed(r.alone.p50, 2),
      fixed(r.alone.p99, 2),
      fixed(r.mixed.requestsPerSecond, 0),
      fixed(r.mixed.p50, 2),
      fixed(r.mixed.p99, 2),
      fixed(r.mixed.graphqlBlocksPerSecond, 1),
    ]),
  );
  console.log('(CPU is % of one core; the machine has 2 cores shared by the generator and the node)');
}

/** eth_blockNumber latency alone, then with GraphQL block queries running on as many connections. */
async function measureMixed(rpcPort: number, graphql: Unit): Promise<Omit<MixedMeasurement, 'layout'>> {
  const connections = flags['mixed-concurrency'];
  const durationMs = flags.seconds * 1000;
  const blockNumber = jsonPostRequest(HOST, rpcPort, rpcBody('eth_blockNumber'));
  const rpcRun = async () => {
    const latencies = new LatencyRecorder();
    const job = { bytes: blockNumber, onAnswer: (_answer: HttpAnswer, ms: number) => latencies.add(ms) };
    const run = await runClosedLoop({ host: HOST, port: rpcPort, connections, durationMs, maxRunMs: durationMs + 30_000 }, () => job);
    return { ...summarizeLatencies(latencies), requestsPerSecond: (run.answered * 1000) / run.wallMs };
  };
  const alone = await rpcRun();
  const { port, bytes } = graphql.requests[0]!;
  const [mixed, graphqlRun] = await Promise.all([
    rpcRun(),
    runClosedLoop({ host: HOST, port, connections, durationMs, maxRunMs: durationMs + 30_000 }, () => ({ bytes })),
  ]);
  return { alone, mixed: { ...mixed, graphqlBlocksPerSecond: (graphqlRun.answered * 1000) / graphqlRun.wallMs } };
}

/** Sends `--txs` storeAndLog calls at once and answers the block that took the most of them. */
async function fillBlock(port: number): Promise<bigint> {
  const contract = await deployStoreAndLog(port);
  const rpc = new RpcClient(HOST, port);
  try {
    const common = signingCommon(Number(await rpc.call<string>('eth_chainId')));
    const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const maxPriorityFeePerGas = 10n ** 9n;
    const maxFeePerGas = 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas;
    const senders = DEV_ACCOUNTS.map((account) => accountFromKey(account.privateKey));
    const nonces = await Promise.all(senders.map(async (sender) => BigInt(await rpc.call<string>('eth_getTransactionCount', [sender.address, 'pending']))));
    const txs = Array.from({ length: flags.txs }, (_, i) => {
      const s = i % senders.length;
      const nonce = nonces[s]!++;
      return signTx(common, senders[s]!, { nonce, to: contract, value: 0n, data: zeroPadValue(toBeHex(i + 1), 32), gasLimit: 100_000n, maxFeePerGas, maxPriorityFeePerGas });
    });
    const answers = await rpc.batch(txs.map((tx) => ['eth_sendRawTransaction', [tx.raw]]));
    const refused = answers.filter((answer) => answer.error !== undefined);
    if (refused.length > 0) throw new Error(`${refused.length} transactions refused, e.g. ${refused[0]!.error!.message}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const receipts = await rpc.batch(txs.map((tx) => ['eth_getTransactionReceipt', [tx.hash]]));
      if (receipts.every((receipt) => receipt.result !== null && receipt.result !== undefined)) {
        const perBlock = new Map<string, number>();
        for (const receipt of receipts) {
          const number = (receipt.result as { blockNumber: string }).blockNumber;
          perBlock.set(number, (perBlock.get(number) ?? 0) + 1);
        }
        const [fullest, count] = [...perBlock].sort((a, b) => b[1] - a[1])[0]!;
        log(`block ${BigInt(fullest)} holds ${count} of the ${flags.txs} transactions (${perBlock.size} block(s) used)`);
        return BigInt(fullest);
      }
      if (Date.now() > deadline) throw new Error('the transactions were not all mined within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    rpc.close();
  }
}

async function unitsFor(block: bigint, rpcPort: number, graphqlPort: number): Promise<Unit[]> {
  const rpc = new RpcClient(HOST, rpcPort);
  try {
    const hex = `0x${block.toString(16)}`;
    const full = await rpc.call<{ transactions: { hash: string }[] }>('eth_getBlockByNumber', [hex, true]);
    const blockCall = { port: rpcPort, bytes: jsonPostRequest(HOST, rpcPort, rpcBody('eth_getBlockByNumber', [hex, true])) };
    return [
      { name: 'GraphQL, 1 query', requests: [{ port: graphqlPort, bytes: jsonPostRequest(HOST, graphqlPort, JSON.stringify({ query: BLOCK_QUERY(block) }), '/graphql') }] },
      { name: 'JSON-RPC, block + block receipts', requests: [blockCall, { port: rpcPort, bytes: jsonPostRequest(HOST, rpcPort, rpcBody('eth_getBlockReceipts', [hex])) }] },
      {
        name: 'JSON-RPC, block + receipt per tx',
        requests: [
          blockCall,
          ...full.transactions.map((tx) => ({ port: rpcPort, bytes: jsonPostRequest(HOST, rpcPort, rpcBody('eth_getTransactionReceipt', [tx.hash])) })),
        ],
      },
    ];
  } finally {
    rpc.close();
  }
}

function failed(answer: HttpAnswer): boolean {
  const text = answer.body.toString('utf8');
  return answer.status !== 200 || text.includes('"error"') || text.includes('"errors"');
}

/** Fetches one block once: the bytes each way, and a check that every answer is a success. */
async function oneUnit(unit: Unit): Promise<{ bytesIn: number; bytesOut: number }> {
  let bytesIn = 0;
  let bytesOut = 0;
  for (const { port, bytes } of unit.requests) {
    const connection = await KeepAliveConnection.open(HOST, port);
    try {
      const answer = await connection.request(bytes);
      if (failed(answer)) throw new Error(`${unit.name}: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
      bytesIn += answer.body.length;
      bytesOut += bytes.length;
    } finally {
      connection.close();
    }
  }
  return { bytesIn, bytesOut };
}

async function measure(unit: Unit, concurrency: number, serverPid: number): Promise<Omit<Measurement, 'layout' | 'unit' | 'concurrency' | 'requestsPerUnit' | 'bytesIn' | 'bytesOut'>> {
  // All requests of a unit share one port (JSON-RPC or GraphQL).
  const port = unit.requests[0]!.port;
  let next = 0;
  let errors = 0;
  const jobs = unit.requests.map(({ bytes }) => ({ bytes, onAnswer: (answer: HttpAnswer) => void (failed(answer) && errors++) }));
  const nextJob = () => jobs[next++ % jobs.length];
  if (flags.warmup > 0) await runClosedLoop({ host: HOST, port, connections: concurrency, durationMs: flags.warmup * 1000, maxRunMs: flags.warmup * 1000 + 15_000 }, nextJob);
  errors = 0;
  const cpu = new CpuMeter(serverPid);
  const generatorStart = process.cpuUsage();
  const durationMs = flags.seconds * 1000;
  const run = await runClosedLoop({ host: HOST, port, connections: concurrency, durationMs, maxRunMs: durationMs + 30_000 }, nextJob);
  const generatorCpuMs = ownCpuMsSince(generatorStart);
  const requestsPerSecond = (run.answered * 1000) / run.wallMs;
  return {
    requestsPerSecond,
    blocksPerSecond: requestsPerSecond / unit.requests.length,
    errors: errors + run.transportErrors,
    serverCpu: cpu.percentOfOneCore(),
    generatorCpu: (generatorCpuMs / run.wallMs) * 100,
  };
}
