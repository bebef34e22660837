/**
 * Property-based fuzzing of a running node's JSON-RPC HTTP port (fast-check): random and mutated
 * bodies — requests of every registered method with right and wrong params, batches mixing good and
 * bad entries, random JSON, deep nesting, giant strings, long numbers, unicode — over keep-alive
 * connections. Every answer must be HTTP with a JSON-RPC body (or Besu's 413 text), within the
 * node's timeout, and the node must stay up: it keeps answering eth_blockNumber and producing blocks.
 * FUZZ_HTTP_RUNS sets the number of cases (bench/fuzz.ts runs a million), run within
 * FUZZ_TIME_LIMIT_MS; FUZZ_SEED replays a run.
 */
import test from 'ava';
import fc from 'fast-check';
import { FuzzHttpClient, type Verdict } from '../harness/fuzz/http-fuzz.js';
import { jsonRpcBodies } from '../harness/fuzz/jsonrpc-bodies.js';
import { removeDataPath, startNode } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const RUNS = Number(process.env.FUZZ_HTTP_RUNS ?? 4000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** A bound on the run on a busy machine; the cases done are logged. */
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 40_000);
/** How often the node is asked whether it still serves, between fuzz cases. */
const PROBE_EVERY = 250;

let node: NodeProcess;

test.before(async () => {
  node = await startNode({
    // A small batch limit so that batches past it are generated; every group that parses params.
    args: ['--rpc-http-api=ETH,NET,WEB3,TXPOOL,DEBUG,QBFT', '--rpc-http-max-batch-size=16'],
  });
});

test.after.always(async () => {
  await node?.kill();
  if (node) removeDataPath(node.dataPath);
});

test('every fuzzed body gets a JSON-RPC answer and the node keeps serving and producing blocks', async (t) => {
  t.timeout(240_000);
  const client = new FuzzHttpClient('127.0.0.1', node.port);
  t.teardown(() => client.close());
  const startHead = Number(await node.rpc<string>('eth_blockNumber'));
  let cases = 0;
  const property = fc.asyncProperty(jsonRpcBodies(), async (body) => {
    const verdict: Verdict = await client.send(body);
    if (verdict.kind !== 'ok') throw new Error(`${verdict.kind}${'detail' in verdict ? `: ${verdict.detail}` : ''}`);
    if (++cases % PROBE_EVERY === 0) {
      if (node.process.exitCode !== null) throw new Error(`the node exited with ${node.process.exitCode}`);
      await node.rpc('eth_blockNumber');
    }
  });
  const started = Date.now();
  await fc.assert(property, { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, ...(SEED === undefined ? {} : { seed: SEED }) });
  t.true(cases >= Math.min(RUNS, 500), `only ${cases} bodies were sent`);
  t.log(`${cases} bodies in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  t.is(node.process.exitCode, null, node.output().slice(-2000));
  // Still producing: a block after the fuzz (dev blocks come every second).
  const deadline = Date.now() + 15_000;
  let head = Number(await node.rpc<string>('eth_blockNumber'));
  while (head <= startHead && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    head = Number(await node.rpc<string>('eth_blockNumber'));
  }
  t.true(head > startHead, `head stayed at ${head}`);
  t.notRegex(node.output(), /actor failed|exited unexpectedly|Unhandled|uncaught/i);
});
