/**
 * QBFT consensus overhead, in one process, no node: (1) how many QBFT messages one core signs and
 * verifies per second (the crypto every validator does per block), (2) in the deterministic
 * simulation of 4 validators, the simulated time from the block timer to the finalised block and
 * the real CPU time spent per finalised block. Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/consensus-overhead.js [--messages=2000] [--seconds=120] [--validators=4]
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

import { MessageCode, createCommit, createPrepare, decodeMessage } from '../src/consensus/messages.js';
import type { Signer } from '../src/consensus/messages.js';
import { addressOf, recoverSealSigner } from '../src/shared/qbft/seal.js';
import { START_MS, Simulation } from '../test/harness/qbft-simulation/simulation.js';
import type { SimulationConfig } from '../test/harness/qbft-simulation/simulation.js';
import { parseFlags } from './lib/args.js';
import { runBenchmark } from './lib/cleanup.js';
import { fixed, log, printTable, rate } from './lib/format.js';

const flags = parseFlags('dist/bench/consensus-overhead.js', {
  messages: { default: 2000, min: 10, description: 'messages signed and verified in the crypto part' },
  seconds: { default: 120, min: 10, description: 'simulated seconds per network scenario' },
  validators: { default: 4, min: 1, description: 'validators in the simulation' },
  'max-seconds': { default: 300, min: 10, description: 'ceiling on the whole run' },
});

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function cryptoFigures(count: number): string[][] {
  const signer: Signer = { key: keccak_256(Uint8Array.of(1)), address: addressOf(keccak_256(Uint8Array.of(1))) };
  const digests = Array.from({ length: count }, (_, i) => keccak_256(Uint8Array.of(i & 0xff, i >> 8)));
  const rows: string[][] = [];

  let start = performance.now();
  const prepares = digests.map((digest) => createPrepare(signer, { height: 1n, round: 0, digest }));
  rows.push(['sign Prepare', fixed(rate(count, performance.now() - start), 0)]);

  start = performance.now();
  const commits = digests.map((digest) => createCommit(signer, 1n, 0, digest));
  rows.push(['sign Commit (seal + message)', fixed(rate(count, performance.now() - start), 0)]);

  start = performance.now();
  for (const p of prepares) decodeMessage(MessageCode.PREPARE, p.data);
  rows.push(['decode + verify Prepare', fixed(rate(count, performance.now() - start), 0)]);

  start = performance.now();
  for (const c of commits) {
    const decoded = decodeMessage(MessageCode.COMMIT, c.data);
    if (decoded.code === MessageCode.COMMIT) recoverSealSigner(decoded.signed.payload.digest, decoded.signed.payload.commitSeal);
  }
  rows.push(['decode + verify Commit (message + seal)', fixed(rate(count, performance.now() - start), 0)]);
  return rows;
}

interface ScenarioFigures {
  name: string;
  blocks: bigint;
  latencies: number[];
  cpuMs: number;
  messages: number;
  roundChanges: number;
}

async function scenario(name: string, config: SimulationConfig): Promise<ScenarioFigures> {
  const sim = new Simulation(config);
  const started = performance.now();
  const report = await sim.run();
  const cpuMs = performance.now() - started;
  if (report.safetyViolations.length > 0) throw new Error(`${name}: ${report.safetyViolations.join('; ')}`);
  // Block timer of height h fires at (parent timestamp + period) s; each node's commit time is measured from it.
  const latencies: number[] = [];
  for (const node of sim.nodes) {
    for (const [height, at] of node.commitTimes) {
      const parent = node.chain.blockAt(height - 1n);
      if (!parent) continue;
      const timerAt = Number(parent.timestamp + 1n) * 1000 - START_MS;
      latencies.push(at - timerAt);
    }
  }
  latencies.sort((a, b) => a - b);
  return { name, blocks: report.minHonestHead, latencies, cpuMs, messages: report.messagesSent, roundChanges: report.roundChanges.length };
}

runBenchmark(async () => {
  log(`signing and verifying ${flags.messages} messages of each kind on one core`);
  printTable(['operation', 'per second'], cryptoFigures(flags.messages));
  console.log('');

  const durationMs = flags.seconds * 1000;
  const n = flags.validators;
  log(`simulating ${n} validators for ${flags.seconds} s of 1-second blocks per scenario (fake execution: 5 ms build/validate)`);
  const scenarios = [
    await scenario('LAN: 1–5 ms one-way', { seed: 1, validators: n, durationMs, network: { baseDelayMs: 1, jitterMs: 4 } }),
    await scenario('WAN: 20–80 ms one-way', { seed: 2, validators: n, durationMs, network: { baseDelayMs: 20, jitterMs: 60 } }),
    await scenario('WAN, 10% loss', { seed: 3, validators: n, durationMs, network: { baseDelayMs: 20, jitterMs: 60, loss: 0.1 } }),
    await scenario('WAN, one validator down', { seed: 4, validators: n, durationMs, network: { baseDelayMs: 20, jitterMs: 60 }, crashes: n > 1 ? [{ node: 0, atMs: 0 }] : [] }),
  ];
  printTable(
    ['scenario', 'blocks', 'timer→final p50 ms', 'p90 ms', 'max ms', 'round changes', 'msgs/block', 'CPU ms/block'],
    scenarios.map((s) => [
      s.name,
      String(s.blocks),
      fixed(percentile(s.latencies, 50), 0),
      fixed(percentile(s.latencies, 90), 0),
      fixed(s.latencies[s.latencies.length - 1] ?? Number.NaN, 0),
      String(s.roundChanges),
      fixed(s.messages / Number(s.blocks), 0),
      fixed(s.cpuMs / Number(s.blocks), 1),
    ]),
  );
  console.log('');
  console.log('timer→final: simulated ms from a height\'s block timer to each validator\'s commit of that block (all nodes, all heights);');
  console.log('msgs/block: network sends (each copy to each peer, gossip included); CPU ms/block: real time of the whole simulation ÷ blocks.');
}, flags['max-seconds']);
