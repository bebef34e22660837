/**
 * Property-based fuzzing of a running node's devp2p port (fast-check): fake peers (the devp2p
 * library's RLPx on loopback) complete Hello and Status, then send random, malformed and mutated
 * eth/68 and istanbul/100 messages, unknown codes, frames that are no snappy or declare more than
 * 16 MiB, and base-protocol messages out of turn. Garbage must get the peer disconnected within
 * seconds; raw TCP garbage and silent sockets must be closed within the handshake timeout; and the
 * node must never die: it keeps producing blocks and answering JSON-RPC, and still accepts peers.
 * FUZZ_P2P_RUNS sets the number of cases (run within FUZZ_TIME_LIMIT_MS); FUZZ_SEED replays a run.
 */
import test from 'ava';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { parseEnode } from '../../src/shared/ethereum/enode.js';
import { loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { HANDSHAKE_TIMEOUT_MS } from '../../src/p2p/peer-limits.js';
import { frameCases } from '../harness/fuzz/devp2p-frames.js';
import { Devp2pFuzzer, rawSocketClosedWithin } from '../harness/fuzz/devp2p-fuzz.js';
import { FakePeer, type FakePeerChain, type NodeTarget } from '../harness/fuzz/fake-peer.js';
import { removeDataPath, startNode } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const RUNS = Number(process.env.FUZZ_P2P_RUNS ?? 1000);
/** Each garbage case costs a new connection (ECIES handshake): on a busy machine fewer cases fit. */
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 40_000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

let node: NodeProcess;
let target: NodeTarget;
let chain: FakePeerChain;

test.before(async () => {
  node = await startNode({ p2p: true, args: ['--logging=DEBUG'] });
  const enode = parseEnode(await node.rpc<string>('net_enode'));
  target = { id: enode.id, host: '127.0.0.1', port: enode.tcpPort };
  const genesisBlock = await node.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false]);
  chain = {
    genesis: parseGenesis(loadDevNetwork().genesisJson),
    genesisHash: Uint8Array.from(Buffer.from(genesisBlock.hash.slice(2), 'hex')),
    networkId: BigInt(await node.rpc<string>('net_version')),
  };
});

test.after.always(async () => {
  await node?.kill();
  if (node) removeDataPath(node.dataPath);
});

async function head(): Promise<number> {
  return Number(await node.rpc<string>('eth_blockNumber'));
}

test('fuzzed frames: garbage peers are disconnected, the node keeps producing, serving and accepting peers', async (t) => {
  t.timeout(240_000);
  const startHead = await head();
  const fuzzer = new Devp2pFuzzer(target, chain);
  t.teardown(() => fuzzer.close());
  let cases = 0;
  const property = fc.asyncProperty(frameCases(), async (fuzzCase) => {
    await fuzzer.run(fuzzCase);
    if (fuzzer.failures.length > 0) throw new Error(fuzzer.failures.join('\n'));
    if (++cases % 250 === 0) {
      if (node.process.exitCode !== null) throw new Error(`the node exited with ${node.process.exitCode}`);
      await head();
    }
  });
  const started = Date.now();
  await fc.assert(property, { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, ...(SEED === undefined ? {} : { seed: SEED }) });
  t.log(`${fuzzer.tried} cases (${fuzzer.garbage} garbage) over ${fuzzer.connections} connections in ${((Date.now() - started) / 1000).toFixed(1)} s; disconnect reasons ${JSON.stringify(Object.fromEntries(fuzzer.reasons))}`);
  t.is(fuzzer.garbageKept, 0);
  t.true(fuzzer.tried >= Math.min(RUNS, 200), `only ${fuzzer.tried} cases ran`);
  t.true(fuzzer.garbage > fuzzer.tried / 5, 'the generator made garbage');
  // Reasons Besu gives for such peers: breach of protocol (0x02) or subprotocol error (0x10).
  t.deepEqual([...fuzzer.reasons.keys()].filter((reason) => reason !== '0x02' && reason !== '0x10'), []);

  t.is(node.process.exitCode, null);
  const deadline = Date.now() + 15_000;
  while ((await head()) <= startHead && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  t.true((await head()) > startHead, 'blocks keep coming');
  // A well-behaved peer is still welcome.
  const peer = await FakePeer.connect(target, chain);
  t.true(peer.isOpen);
  peer.close();
  t.regex(node.output(), /breach of protocol/);
  t.notRegex(node.output(), /actor failed|exited unexpectedly|Unhandled|uncaught/i);
});

test('raw TCP garbage before the handshake, and a silent socket, are closed within the handshake timeout', async (t) => {
  const samples = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 2000 }), { numRuns: 24, ...(SEED === undefined ? {} : { seed: SEED }) });
  const inputs = [new Uint8Array(), ...samples, randomBytes(400), Uint8Array.from([0x00, 0x10, ...randomBytes(200)])];
  const closedAfter = await Promise.all(inputs.map((bytes) => rawSocketClosedWithin(target.host, target.port, bytes, HANDSHAKE_TIMEOUT_MS + 5_000)));
  t.deepEqual(closedAfter.filter((ms) => ms === undefined), [], 'every socket was closed by the node');
  t.is(node.process.exitCode, null);
  await head();
});
