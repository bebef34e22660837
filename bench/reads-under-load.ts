/**
 * Read latency while blocks are built: a dev node includes a steady stream of transfers (1-second
 * blocks) while read clients, one request at a time each, ask `eth_getBalance` and `eth_call` at
 * `latest` and at the head's recent block numbers — where every new block moves the state the reads
 * walk. Prints the latency percentiles of each kind of read; asserts nothing.
 *
 *   npm run build && node dist/bench/reads-under-load.js [--seconds=20] [--rate=200] [--clients=6] [--compare-build=<checkout>]
 *
 * `--compare-build` measures another checkout's build (its bin/run.js) in the same run, alternated
 * round by round with this one.
 */
import { toBeHex } from 'ethers';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode, type BenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { RpcClient } from './lib/http-client.js';
import { SoakLoad } from './lib/soak-load.js';
import { LatencyRecorder, summarizeLatencies } from './lib/stats.js';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';

const flags = parseFlags('dist/bench/reads-under-load.js', {
  seconds: { default: 20, min: 5, description: 'length of the measured load' },
  rate: { default: 200, min: 1, description: 'transfers per second beside the reads' },
  clients: { default: 6, min: 1, description: 'read clients, each with one request in flight' },
  rounds: { default: 1, min: 1, description: 'rounds (each build once per round, alternated)' },
  'compare-build': { default: '', description: 'another checkout (its bin/run.js and dist/) measured beside this build' },
  'max-seconds': { default: 600, min: 30, description: 'ceiling on the whole run' },
});

const HOST = '127.0.0.1';
const KINDS = ['eth_getBalance latest', 'eth_getBalance recent', 'eth_call latest', 'eth_call recent'] as const;
type Kind = (typeof KINDS)[number];

runBenchmark(main, flags['max-seconds']);

/** Init code returning BALANCE(address): a call that runs the EVM and reads the state (PUSH20 a BALANCE …). */
function balanceOfInitCode(address: string): string {
  return `0x73${address.slice(2).toLowerCase()}3160005260206000f3`;
}

async function main(): Promise<void> {
  const builds = [{ name: 'this build', bin: undefined as string | undefined }];
  if (flags['compare-build'] !== '') builds.push({ name: flags['compare-build'], bin: `${flags['compare-build']}/bin/run.js` });
  const rows: string[][] = [];
  for (let round = 1; round <= flags.rounds; round++) {
    for (const build of builds) {
      const latencies = await measure(build.bin);
      for (const kind of KINDS) {
        const recorder = latencies.get(kind)!;
        const s = summarizeLatencies(recorder);
        rows.push([String(round), build.name, kind, String(recorder.count), fixed(s.p50, 1), fixed(s.p90, 1), fixed(s.p99, 1), fixed(s.max, 1)]);
      }
    }
  }
  console.log(`\nReads while a dev node includes ${flags.rate} transfers/s, ${flags.clients} read clients, ${flags.seconds} s; latency in ms`);
  printTable(['round', 'build', 'read', 'count', 'p50', 'p90', 'p99', 'max'], rows);
}

async function measure(bin: string | undefined): Promise<Map<Kind, LatencyRecorder>> {
  const node: BenchNode = await startBenchNode(bin ? { bin } : {});
  const forget = onCleanup('node', () => node.stop());
  try {
    log(`node on port ${node.port}${bin ? ` (${bin})` : ''}: funding senders`);
    const load = await SoakLoad.prepare({ port: node.port, rate: flags.rate, senders: 20, readRate: 0, connections: 4, seconds: flags.seconds + 10 });
    const latencies = new Map<Kind, LatencyRecorder>(KINDS.map((kind) => [kind, new LatencyRecorder()]));
    const target = DEV_ACCOUNTS[1]!.address;
    const callData = balanceOfInitCode(target);
    load.start();
    // Let a few blocks of the load go by before measuring.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const end = Date.now() + flags.seconds * 1000;
    await Promise.all(
      Array.from({ length: flags.clients }, async (_, client) => {
        const rpc = new RpcClient(HOST, node.port);
        for (let i = 0; Date.now() < end; i++) {
          const head = BigInt(await rpc.call<string>('eth_blockNumber'));
          const call = (i + client) % 2 === 0;
          const recent = i % 3 !== 0;
          const block = recent ? toBeHex(head - BigInt(i % 4 > head ? 0 : i % 4)) : 'latest';
          const started = performance.now();
          if (call) await rpc.call('eth_call', [{ data: callData }, block]);
          else await rpc.call('eth_getBalance', [target, block]);
          latencies.get(`${call ? 'eth_call' : 'eth_getBalance'} ${recent ? 'recent' : 'latest'}`)!.add(performance.now() - started);
        }
      }),
    );
    await load.stop();
    return latencies;
  } finally {
    forget();
    await node.stop();
  }
}
