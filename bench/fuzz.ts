/**
 * The fuzz suites of test/e2e/fuzz-http.test.ts and fuzz-devp2p.test.ts at scale, against one dev
 * node with devp2p on: `--cases` JSON-RPC bodies over `--connections` keep-alive connections, then
 * `--p2p-cases` devp2p frame cases through fake peers and a batch of raw TCP garbage. Prints inputs
 * tried, crashes (the node process exiting; must be 0: it is restarted and the inputs in flight are
 * written to a file), non-JSON-RPC answers (must be 0), timeouts and unanswered requests, garbage
 * peers not disconnected (must be 0), and the node's RSS before and after.
 *
 *   npm run build && node dist/bench/fuzz.js [--cases=1000000] [--p2p-cases=20000] [--seed=1]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import fc from 'fast-check';
import { parseEnode } from '../src/shared/ethereum/enode.js';
import { loadDevNetwork, parseGenesis } from '../src/shared/ethereum/genesis.js';
import { HANDSHAKE_TIMEOUT_MS } from '../src/p2p/peer-limits.js';
import { jsonRpcBodies, type BodyLimits } from '../test/harness/fuzz/jsonrpc-bodies.js';
import { FuzzHttpClient, FuzzTally } from '../test/harness/fuzz/http-fuzz.js';
import { frameCases, type FrameCase } from '../test/harness/fuzz/devp2p-frames.js';
import { Devp2pFuzzer, rawSocketClosedWithin } from '../test/harness/fuzz/devp2p-fuzz.js';
import type { FakePeerChain, NodeTarget } from '../test/harness/fuzz/fake-peer.js';
import { parseFlags } from './lib/args.js';
import { runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, megabytes, printTable } from './lib/format.js';
import { RpcClient } from './lib/http-client.js';
import { readRssKb } from './lib/proc.js';

const HOST = '127.0.0.1';
const NODE_ARGS = ['--rpc-http-api=ETH,NET,WEB3,TXPOOL,DEBUG,QBFT', '--rpc-http-max-batch-size=16'];
const CHUNK = 5_000;

const flags = parseFlags('dist/bench/fuzz.js', {
  cases: { default: 1_000_000, min: 0, description: 'JSON-RPC bodies sent' },
  'p2p-cases': { default: 50_000, min: 0, description: 'devp2p frame cases sent through fake peers' },
  connections: { default: 4, min: 1, description: 'keep-alive HTTP connections, one body in flight each' },
  'p2p-peers': { default: 1, min: 1, description: 'fake peers fuzzing at once' },
  'raw-sockets': { default: 200, min: 0, description: 'raw TCP connections sending garbage before the handshake' },
  giant: { default: 1_000_000, min: 1000, description: 'longest giant string in a body (characters)' },
  seed: { default: 1, description: 'fast-check seed of the first chunk (chunk i uses seed + i)' },
  'max-crashes': { default: 3, min: 1, description: 'stop after this many node crashes' },
  'max-seconds': { default: 3600, min: 10, description: 'ceiling on the whole run' },
});

interface Crash {
  phase: string;
  exit: string;
  inFlight: string[];
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  let node = await startBenchNode({ args: NODE_ARGS, p2p: true });
  const crashes: Crash[] = [];
  const rssStartKb = readRssKb(node.pid);
  log(`node pid ${node.pid}: RPC ${node.port}, p2p ${node.p2pPort}; RSS at start ${megabytes(rssStartKb)}`);

  /** Restarts a node that died, after recording what was in flight. */
  const checkAlive = async (phase: string, inFlight: string[]): Promise<boolean> => {
    if (node.running()) return true;
    const exit = node.output().split('\n').slice(-20).join('\n');
    crashes.push({ phase, exit, inFlight });
    const file = join(tmpdir(), `basalt-fuzz-crash-${crashes.length}.json`);
    writeFileSync(file, JSON.stringify({ phase, exit, inFlight }, null, 1));
    log(`CRASH during ${phase}: inputs in flight written to ${file}`);
    await node.stop();
    if (crashes.length >= flags['max-crashes']) return false;
    node = await startBenchNode({ args: NODE_ARGS, p2p: true });
    return true;
  };

  // --- JSON-RPC over HTTP ----------------------------------------------------------------------
  const limits: BodyLimits = { maxGiantLength: flags.giant, maxBatchEntries: 24, maxDepth: 3000 };
  const bodies = jsonRpcBodies(limits);
  const tally = new FuzzTally();
  const httpStarted = performance.now();
  let chunkIndex = 0;
  let queue: string[] = [];
  let handedOut = 0;
  const nextBody = (): string | undefined => {
    if (handedOut >= flags.cases) return undefined;
    if (queue.length === 0) queue = fc.sample(bodies, { numRuns: Math.min(CHUNK, flags.cases - handedOut), seed: flags.seed + chunkIndex++ });
    handedOut++;
    return queue.pop();
  };
  let lastReport = performance.now();
  let stopped = false;
  while (!stopped && handedOut < flags.cases) {
    const clients = Array.from({ length: flags.connections }, () => new FuzzHttpClient(HOST, node.port));
    const inFlight: (string | undefined)[] = clients.map(() => undefined);
    let crashed = false;
    await Promise.all(
      clients.map(async (client, i) => {
        for (;;) {
          if (crashed) return;
          const body = nextBody();
          if (body === undefined) return;
          inFlight[i] = body;
          const verdict = await client.send(body);
          if (verdict.kind === 'no-answer' && !node.running()) {
            crashed = true;
            return;
          }
          tally.record(body, verdict);
          inFlight[i] = undefined;
          if (performance.now() - lastReport > 10_000) {
            lastReport = performance.now();
            log(`HTTP ${tally.tried} bodies (${fixed(tally.tried / ((lastReport - httpStarted) / 1000), 0)}/s), ${tally.nonJsonRpc} non-JSON-RPC, ${tally.timeouts} timeouts, ${tally.noAnswer} unanswered; RSS ${megabytes(readRssKb(node.pid))}`);
          }
        }
      }),
    );
    clients.forEach((client) => client.close());
    if (crashed && !(await checkAlive('HTTP', inFlight.filter((body): body is string => body !== undefined)))) stopped = true;
  }
  const httpSeconds = (performance.now() - httpStarted) / 1000;
  const rssAfterHttpKb = readRssKb(node.pid);
  const rpc = new RpcClient(HOST, node.port);
  const headAfterHttp = Number(await rpc.call<string>('eth_blockNumber'));

  // --- devp2p -------------------------------------------------------------------------------------
  const enode = parseEnode(await rpc.call<string>('net_enode'));
  const genesisBlock = await rpc.call<{ hash: string }>('eth_getBlockByNumber', ['0x0', false]);
  const chain: FakePeerChain = {
    genesis: parseGenesis(loadDevNetwork().genesisJson),
    genesisHash: Uint8Array.from(Buffer.from(genesisBlock.hash.slice(2), 'hex')),
    networkId: BigInt(await rpc.call<string>('net_version')),
  };
  rpc.close();
  const target: NodeTarget = { id: enode.id, host: HOST, port: node.p2pPort! };
  const fuzzers = Array.from({ length: flags['p2p-peers'] }, () => new Devp2pFuzzer(target, chain));
  const p2pStarted = performance.now();
  const frames = frameCases();
  let p2pHandedOut = 0;
  let p2pChunk = 0;
  let p2pQueue: FrameCase[] = [];
  await Promise.all(
    fuzzers.map(async (fuzzer) => {
      for (;;) {
        if (p2pHandedOut >= flags['p2p-cases'] || !node.running()) return;
        if (p2pQueue.length === 0) p2pQueue = fc.sample(frames, { numRuns: CHUNK, seed: flags.seed + 1_000_000 + p2pChunk++ });
        p2pHandedOut++;
        await fuzzer.run(p2pQueue.pop()!);
        const tried = fuzzers.reduce((sum, f) => sum + f.tried, 0);
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          log(`devp2p ${tried} cases (${fixed(tried / ((lastReport - p2pStarted) / 1000), 0)}/s), ${fuzzers.reduce((s, f) => s + f.garbageKept, 0)} garbage kept; RSS ${megabytes(readRssKb(node.pid))}`);
        }
      }
    }),
  );
  fuzzers.forEach((fuzzer) => fuzzer.close());
  const rawSamples = fc.sample(fc.uint8Array({ minLength: 0, maxLength: 4000 }), { numRuns: flags['raw-sockets'], seed: flags.seed });
  const rawClosed = await Promise.all(rawSamples.map((bytes) => rawSocketClosedWithin(HOST, target.port, bytes, HANDSHAKE_TIMEOUT_MS + 5_000)));
  const p2pSeconds = (performance.now() - p2pStarted) / 1000;
  if (!node.running()) await checkAlive('devp2p', []);

  // --- the node after it all --------------------------------------------------------------------
  const after = new RpcClient(HOST, node.port);
  const headBefore = Number(await after.call<string>('eth_blockNumber'));
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const headAfter = Number(await after.call<string>('eth_blockNumber'));
  after.close();
  const rssEndKb = readRssKb(node.pid);

  const sum = (pick: (f: Devp2pFuzzer) => number) => fuzzers.reduce((total, f) => total + pick(f), 0);
  const reasons = new Map<string, number>();
  for (const fuzzer of fuzzers) for (const [reason, count] of fuzzer.reasons) reasons.set(reason, (reasons.get(reason) ?? 0) + count);
  console.log('');
  printTable(
    ['figure', 'value'],
    [
      ['HTTP bodies tried', String(tally.tried)],
      ['HTTP bodies per second', fixed(tally.tried / httpSeconds, 0)],
      ['crashes (node exits)', String(crashes.length)],
      ['non-JSON-RPC answers', String(tally.nonJsonRpc)],
      ['timeouts (408)', String(tally.timeouts)],
      ['unanswered requests', String(tally.noAnswer)],
      ['devp2p cases tried', String(sum((f) => f.tried))],
      ['devp2p garbage cases', String(sum((f) => f.garbage))],
      ['garbage peers not disconnected', String(sum((f) => f.garbageKept))],
      ['fake peers refused', String(sum((f) => f.refusedConnections))],
      ['disconnect reasons', JSON.stringify(Object.fromEntries(reasons))],
      ['devp2p cases per second', fixed(sum((f) => f.tried) / p2pSeconds, 0)],
      ['raw TCP garbage sockets not closed', `${rawClosed.filter((ms) => ms === undefined).length} of ${rawClosed.length}`],
      ['blocks in 2.5 s after the run', String(headAfter - headBefore)],
      ['head after HTTP / at the end', `${headAfterHttp} / ${headAfter}`],
      ['RSS at start', megabytes(rssStartKb)],
      ['RSS after HTTP', megabytes(rssAfterHttpKb)],
      ['RSS at the end', megabytes(rssEndKb)],
    ],
  );
  for (const example of tally.examples) console.log(`\n${example.verdict.kind}: ${'detail' in example.verdict ? example.verdict.detail : ''}\n  body: ${example.body}`);
  for (const failure of fuzzers.flatMap((f) => f.failures).slice(0, 10)) console.log(`\ndevp2p: ${failure}`);
  for (const crash of crashes) console.log(`\ncrash during ${crash.phase}:\n${crash.exit}`);
  await node.stop();
}
