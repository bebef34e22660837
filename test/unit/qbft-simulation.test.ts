/**
 * The QBFT core in a deterministic simulated network (src/consensus/simulation): 4 and 7 validators
 * in one process on a virtual clock, with message delay, loss, duplication and partitions, crashed
 * validators, an equivocating proposer and an outside adversary. Every run is reproducible from its
 * seed; each test logs its runs, the heights reached and the round changes seen.
 */
import test from 'ava';
import type { ExecutionContext } from 'ava';

import { SET_CONTRACT_VALIDATORS } from '../harness/qbft-simulation/fake-chain.js';
import { Simulation, simulationAddresses } from '../harness/qbft-simulation/simulation.js';
import type { SimulationConfig, SimulationReport, SimNode } from '../harness/qbft-simulation/simulation.js';
import { compareAddresses, recoverSealSigner } from '../../src/shared/qbft/seal.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');

function describe(name: string, config: SimulationConfig, report: SimulationReport): string {
  const rounds = report.roundChanges.length;
  const maxRound = report.roundChanges.reduce((m, r) => Math.max(m, r.round), 0);
  return (
    `${name} seed=${config.seed} n=${config.validators}: heads [${report.heads.join(',')}] ` +
    `round changes ${rounds} (at ${report.heightsWithRoundChanges.length} heights, max round ${maxRound}) ` +
    `messages ${report.messagesSent} (${report.messagesLost} lost) rejected ${report.rejectedMessages}`
  );
}

async function simulate(t: ExecutionContext, name: string, config: SimulationConfig, setup?: (sim: Simulation) => void): Promise<SimulationReport> {
  const sim = new Simulation(config);
  setup?.(sim);
  const report = await sim.run();
  t.log(describe(name, config, report));
  t.deepEqual(report.safetyViolations, [], `${name}: safety`);
  t.deepEqual(report.importErrors, [], `${name}: every committed block imports`);
  return report;
}

/** Validator index (by node) in the sorted order proposers rotate through. */
function sortedPositions(sim: Simulation): number[] {
  const sorted = [...sim.addresses].sort(compareAddresses).map(hex);
  return sim.addresses.map((a) => sorted.indexOf(hex(a)));
}

/** Round r+1 started by the round timer exactly requestTimeout × 2^r after round r started. */
function checkTimeoutDoubling(t: ExecutionContext, nodes: SimNode[], baseMs: number): number {
  let checked = 0;
  for (const node of nodes) {
    const byHeight = new Map<bigint, typeof node.rounds>();
    for (const r of node.rounds) byHeight.set(r.height, [...(byHeight.get(r.height) ?? []), r]);
    for (const rounds of byHeight.values()) {
      for (let i = 1; i < rounds.length; i++) {
        const previous = rounds[i - 1]!;
        const current = rounds[i]!;
        t.is(current.timeoutMs, baseMs * 2 ** current.round);
        if (current.reason !== 'roundTimer' || current.round !== previous.round + 1) continue;
        t.is(current.atMs - previous.atMs, baseMs * 2 ** previous.round, `round ${current.round} at height ${current.height}`);
        checked += 1;
      }
    }
  }
  return checked;
}

test('safety and liveness over seeded runs of 4 and 7 validators on a lossy, duplicating, jittery network', async (t) => {
  const runs: [number, number][] = [
    ...[1, 2, 3, 4, 5, 6, 7, 8].map((seed): [number, number] => [seed, 4]),
    ...[1, 2, 3].map((seed): [number, number] => [seed, 7]),
  ];
  for (const [seed, validators] of runs) {
    const loss = (seed % 4) * 0.05;
    const config: SimulationConfig = {
      seed,
      validators,
      durationMs: 20_000,
      network: { baseDelayMs: 10, jitterMs: 20 + seed * 15, loss, duplication: (seed % 3) * 0.1 },
    };
    const report = await simulate(t, `lossy(${loss})`, config);
    t.true(report.minHonestHead >= 12n, `seed ${seed}: head ${report.minHonestHead} after 20 s`);
    t.true(report.maxHead - report.minHonestHead <= 1n);
  }
});

test('with f validators crashed the chain goes on, round changes appear where they propose, timeouts double', async (t) => {
  // n = 4, f = 1: each validator in turn is the crashed one.
  for (const crashed of [0, 1, 2]) {
    const config: SimulationConfig = { seed: 20 + crashed, validators: 4, durationMs: 20_000, crashes: [{ node: crashed, atMs: 0 }] };
    let sim!: Simulation;
    const report = await simulate(t, `crashed n${crashed}`, config, (s) => (sim = s));
    t.true(report.minHonestHead >= 10n, `head ${report.minHonestHead}`);
    t.true(report.heightsWithRoundChanges.length >= 3);
    // Round 0 of a height fails exactly when the crashed validator is its proposer.
    const position = sortedPositions(sim)[crashed]!;
    for (const height of report.heightsWithRoundChanges) {
      const parent = sim.nodes.find((n) => n.index !== crashed)!.chain.blockAt(height - 1n)!;
      const sorted = [...sim.addresses].sort(compareAddresses);
      const previous = sorted.findIndex((a) => hex(a) === hex(parent.coinbase));
      const proposerAtRound0 = previous < 0 ? 0 : (previous + 1) % sorted.length;
      t.is(proposerAtRound0, position, `height ${height}: round 0 proposer is the crashed validator`);
    }
    t.true(checkTimeoutDoubling(t, sim.nodes.filter((n) => n.index !== crashed), 1000) > 0);
  }

  // n = 7, f = 2: the first two proposers are both down, so height 1 needs round 2 (timeouts 1 s then 2 s).
  let sim!: Simulation;
  const probe = new Simulation({ seed: 30, validators: 7, durationMs: 1 });
  const positions = sortedPositions(probe);
  const firstTwo = [positions.indexOf(0), positions.indexOf(1)];
  const report = await simulate(
    t,
    'crashed the first two proposers',
    { seed: 30, validators: 7, durationMs: 25_000, crashes: firstTwo.map((node) => ({ node, atMs: 0 })) },
    (s) => (sim = s),
  );
  t.true(report.minHonestHead >= 10n, `head ${report.minHonestHead}`);
  const height1 = report.roundChanges.filter((r) => r.height === 1n);
  t.true(height1.some((r) => r.round === 2 && r.atMs === 1000 + 1000 + 2000), 'round 2 of height 1 starts 1 s + 2 s after the block timer');
  t.true(checkTimeoutDoubling(t, sim.nodes.filter((n) => !firstTwo.includes(n.index)), 1000) > 0);
});

test('a partition without a quorum halts the chain; after it heals the chain resumes with no fork', async (t) => {
  const cases: [string, SimulationConfig][] = [
    ['2|2', { seed: 40, validators: 4, durationMs: 40_000, partitions: [{ fromMs: 4_500, toMs: 16_000, groups: [[0, 1], [2, 3]] }] }],
    ['4|3', { seed: 41, validators: 7, durationMs: 40_000, partitions: [{ fromMs: 4_500, toMs: 16_000, groups: [[0, 1, 2, 3], [4, 5, 6]] }] }],
  ];
  for (const [name, config] of cases) {
    const heads: Record<string, bigint> = {};
    const report = await simulate(t, `partition ${name}`, config, (sim) => {
      const sample = (label: string, at: number) => sim.at(at, () => (heads[label] = sim.nodes.reduce((m, n) => (n.head > m ? n.head : m), 0n)));
      sample('start', 5_000);
      sample('end', 15_900);
    });
    t.log(`  highest head when partitioned ${heads.start}, at heal ${heads.end}, at the end ${report.maxHead}`);
    t.true(heads.end! - heads.start! <= 1n, 'no block without a quorum');
    t.true(report.minHonestHead >= heads.end! + 8n, 'the chain resumes after the partition heals');
    t.true(report.roundChanges.some((r) => r.round >= 3), 'rounds kept changing, with growing timeouts, while partitioned');
  }

  // A majority side that holds a quorum (5 of 7) keeps going; the minority catches up after the heal.
  const report = await simulate(t, 'partition 5|2', {
    seed: 42,
    validators: 7,
    durationMs: 30_000,
    partitions: [{ fromMs: 3_000, toMs: 15_000, groups: [[0, 1, 2, 3, 4], [5, 6]] }],
  });
  t.true(report.minHonestHead >= 25n);
});

test('an equivocating proposer cannot fork the chain or stop it', async (t) => {
  for (const seed of [50, 51, 52]) {
    const config: SimulationConfig = { seed, validators: 4, durationMs: 20_000, behaviours: { [seed % 4]: 'equivocating' } };
    const report = await simulate(t, `equivocating n${seed % 4}`, config);
    t.true(report.minHonestHead >= 15n);
    t.true(report.rejectedMessages > 0, 'the conflicting prepares/commits are refused somewhere');
  }
  const report = await simulate(t, 'two equivocating of 7', {
    seed: 53,
    validators: 7,
    durationMs: 20_000,
    behaviours: { 1: 'equivocating', 4: 'equivocating' },
    network: { jitterMs: 80, loss: 0.05 },
  });
  t.true(report.minHonestHead >= 12n);
});

test('forged signatures, messages from a non-validator, forged seals and replayed old messages change nothing', async (t) => {
  const cases: SimulationConfig[] = [
    // A crashed proposer makes round changes, so replays hit prior rounds of the current height too.
    { seed: 60, validators: 4, durationMs: 16_000, crashes: [{ node: 2, atMs: 0 }] },
    { seed: 61, validators: 7, durationMs: 12_000, crashes: [{ node: 5, atMs: 0 }], network: { loss: 0.05, jitterMs: 60 } },
  ];
  for (const config of cases) {
    const clean = await simulate(t, 'without adversary', config);
    for (const replayDelayMs of [1_500, 4_000]) {
      const attacked = await simulate(t, `adversary replaying after ${replayDelayMs} ms`, {
        ...config,
        adversary: { forge: true, nonValidator: true, forgedBlocks: true, replayDelayMs },
      });
      t.true(attacked.rejectedMessages > clean.rejectedMessages + 100, 'the adversary was heard and refused');
      t.true(attacked.refusedBlocks > 0, 'blocks with forged or too few seals were refused');
      t.deepEqual(attacked.chain, clean.chain, 'the same blocks');
      t.deepEqual(attacked.traces, clean.traces, 'the same round starts, proposals and commits at the same times');
    }
  }
});

test('three of four validators vote the fourth out: the set shrinks right after the third vote and the chain goes on', async (t) => {
  let sim!: Simulation;
  const config: SimulationConfig = { seed: 70, validators: 4, durationMs: 25_000 };
  const report = await simulate(t, 'vote out', config, (s) => {
    sim = s;
    const target = s.nodes[3]!.signer.address;
    for (const voter of [0, 1, 2]) {
      s.at(0, () => void s.nodes[voter]!.rpc.qbft_proposeValidatorVote({ address: target, add: false }));
    }
  });
  const chain = sim.nodes[0]!.chain;
  const target = hex(sim.nodes[3]!.signer.address);
  const voters = new Set<string>();
  let removalBlock: bigint | undefined;
  for (let n = 1n; n <= chain.headNumber && removalBlock === undefined; n++) {
    const block = chain.blockAt(n)!;
    const vote = block.extraData.vote;
    if (!vote) continue;
    t.is(hex(vote.recipient), target);
    t.false(vote.add);
    voters.add(hex(block.coinbase));
    if (voters.size === 3) removalBlock = n;
  }
  t.truthy(removalBlock, 'three drop votes were cast');
  const x = removalBlock!;
  t.log(`  drop votes by ${voters.size} validators; the third is in block ${x}`);
  t.false(voters.has(target));
  const listed = (n: bigint) => chain.blockAt(n)!.extraData.validators.map(hex);
  t.is(listed(x).length, 4);
  t.true(listed(x).includes(target));
  t.is(listed(x + 1n).length, 3, 'the block after the third vote is signed by three validators');
  t.false(listed(x + 1n).includes(target));
  t.deepEqual(await sim.nodes[1]!.rpc.qbft_getValidatorsByBlockNumber({ block: { kind: 'number', number: x } }), listed(x));
  t.deepEqual(await sim.nodes[1]!.rpc.qbft_getValidatorsByBlockNumber({ block: { kind: 'number', number: x + 1n } }), listed(x + 1n));
  t.true(report.minHonestHead >= x + 8n, 'the chain goes on with three validators');
  // Blocks after the removal carry only seals of the remaining three (quorum of 3 = 2).
  for (let n = x + 1n; n <= chain.headNumber; n++) t.true(chain.blockAt(n)!.extraData.seals.length >= 2);
  // Once its votes changed nothing, no further drop vote was cast.
  for (let n = x + 1n; n <= chain.headNumber; n++) t.is(chain.blockAt(n)!.extraData.vote, undefined);
  t.is(sim.nodes[3]!.head, report.maxHead, 'the removed validator still follows the chain');
});

test('qbft_discardValidatorVote withdraws a held vote before it is cast', async (t) => {
  let sim!: Simulation;
  const discarded = Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 0xd1 : 0));
  const kept = Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 0xd2 : 0));
  const probe = new Simulation({ seed: 80, validators: 4, durationMs: 1 });
  // Without round changes the proposer of height h is sorted validator (h - 1) mod 4.
  const position = sortedPositions(probe)[0]!;
  const firstTurn = position === 0 ? 5 : position + 1;
  const report = await simulate(t, 'discard', { seed: 80, validators: 4, durationMs: 12_000 }, (s) => {
    sim = s;
    s.at(0, () => {
      void s.nodes[0]!.rpc.qbft_proposeValidatorVote({ address: discarded, add: true });
      void s.nodes[1]!.rpc.qbft_proposeValidatorVote({ address: kept, add: true });
    });
    // Node 0 holds the vote while others propose, and drops it just before its own block timer.
    s.at(firstTurn * 1000 - 300, () => void s.nodes[0]!.rpc.qbft_discardValidatorVote({ address: discarded }));
  });
  t.log(`  node 0 first proposes block ${firstTurn}; it discarded its vote 300 ms before`);
  t.is(report.roundChanges.length, 0);
  const chain = sim.nodes[2]!.chain;
  const votes = [];
  for (let n = 1n; n <= chain.headNumber; n++) {
    const block = chain.blockAt(n)!;
    if (block.extraData.vote) votes.push({ n, by: hex(block.coinbase), recipient: hex(block.extraData.vote.recipient) });
  }
  t.true(votes.length > 0);
  t.true(votes.every((v) => v.recipient === hex(kept) && v.by === hex(sim.nodes[1]!.signer.address)), 'only the kept vote was cast');
  t.true(chain.headNumber >= BigInt(firstTurn) + 2n, 'node 0 proposed after discarding');
  t.deepEqual(await sim.nodes[0]!.rpc.qbft_getPendingVotes(null), {});
  t.deepEqual(await sim.nodes[1]!.rpc.qbft_getPendingVotes(null), { [hex(kept)]: true });
});

test('transitions switch block-header → contract → block-header validator selection, and the contract can change the set', async (t) => {
  const contract = Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? 0x88 : 0));
  const addresses = simulationAddresses(90, 4);
  const dropped = hex(addresses[2]!);
  const remaining = addresses.filter((a) => hex(a) !== dropped);
  let sim!: Simulation;
  const report = await simulate(
    t,
    'mode transitions',
    {
      seed: 90,
      validators: 4,
      durationMs: 26_000,
      transitions: [
        { block: 5n, validatorSelectionMode: 'contract', validatorContractAddress: contract },
        { block: 16n, validatorSelectionMode: 'blockheader', validators: addresses },
      ],
      // Block 8 sets the contract's list to three validators, so validators(9) has three.
      payload: (node, height) =>
        height === 8n ? [Uint8Array.of(SET_CONTRACT_VALIDATORS, ...remaining.flatMap((a) => [...a]))] : [new TextEncoder().encode(`n${node}@${height}`)],
    },
    (s) => (sim = s),
  );
  t.true(report.minHonestHead >= 22n, `head ${report.minHonestHead}`);
  const chain = sim.nodes[0]!.chain;
  const sortedAll = [...addresses].sort(compareAddresses).map(hex);
  for (let n = 1n; n <= chain.headNumber; n++) {
    const block = chain.blockAt(n)!;
    const listed = block.extraData.validators.map(hex);
    const signers = block.extraData.seals.map((seal) => hex(recoverSealSigner(block.digest(), seal)));
    if (n < 5n || n >= 16n) t.deepEqual(listed, sortedAll, `block ${n} lists the block-header set`);
    else {
      t.deepEqual(listed, [], `contract-mode block ${n} lists no validators`);
      t.is(block.extraData.vote, undefined);
    }
    if (n >= 9n && n < 16n) t.false(signers.includes(dropped), `block ${n} is sealed without the dropped validator`);
    t.false(n >= 9n && n < 16n && hex(block.coinbase) === dropped);
  }
  // In contract mode Besu reports the contract on block N's own state: the set for N + 1.
  const rpc = sim.nodes[1]!.rpc;
  t.is(((await rpc.qbft_getValidatorsByBlockNumber({ block: { kind: 'number', number: 7n } })) as string[]).length, 4);
  t.deepEqual(await rpc.qbft_getValidatorsByBlockNumber({ block: { kind: 'number', number: 8n } }), remaining.map(hex).sort());
  t.deepEqual(await rpc.qbft_getValidatorsByBlockNumber({ block: { kind: 'number', number: 16n } }), sortedAll);
  // Votes need block-header mode at the head.
  t.is(sim.nodes[2]!.head, report.maxHead, 'the dropped validator followed the chain and came back');
});
