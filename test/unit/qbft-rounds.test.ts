/**
 * Round changes and message intake of the QBFT core: early round change (Besu
 * `--Xqbft-enable-early-round-change`, qbft-and-p2p.md §5.4), execution of blocks attached to round
 * changes (§4.6 RoundChange row), and the runner's bounded message queue (`messagequeuelimit`, §5.5).
 * State-machine tests drive the controller directly under explicit times; the rest run the runner or
 * whole simulated networks on a virtual clock.
 */
import test from 'ava';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { QbftController } from '../../src/consensus/controller.js';
import type { ControllerConfig } from '../../src/consensus/controller.js';
import type { ConsensusEvent, HeightContext, QbftAction } from '../../src/consensus/core-types.js';
import { encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { MessageCode, createPrepare, createProposal, createRoundChange } from '../../src/consensus/messages.js';
import type { ProposalMessage, RoundChangeMessage, Signer } from '../../src/consensus/messages.js';
import { QbftRunner } from '../../src/consensus/runner.js';
import type { QbftPorts } from '../../src/consensus/runner.js';
import { QbftSchedule } from '../../src/shared/qbft/schedule.js';
import { addressOf, compareAddresses, proposerFor } from '../../src/shared/qbft/seal.js';
import { ValidatorTracker } from '../../src/shared/qbft/validators.js';
import { FakeChain, fakeGenesis } from '../harness/qbft-simulation/fake-chain.js';
import { Simulation } from '../harness/qbft-simulation/simulation.js';
import type { SimulationConfig, SimulationReport } from '../harness/qbft-simulation/simulation.js';
import { VirtualClock } from '../harness/qbft-simulation/virtual-clock.js';
import type { QbftConfig } from '../../src/shared/ethereum/genesis.js';
import { renderHelp } from '../../src/main/cli/help.js';
import { resolveOptions } from '../../src/main/cli/resolve.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const key = (n: number): Uint8Array => keccak_256(Uint8Array.of(n));
const signer = (n: number): Signer => ({ key: key(n), address: addressOf(key(n)) });
const T0 = 1_700_000_000n;
const START = Number(T0) * 1000;

const QBFT_CONFIG: QbftConfig = {
  blockPeriodSeconds: 1,
  epochLength: 30000,
  requestTimeoutSeconds: 1,
  emptyBlockPeriodSeconds: 0,
  blockPeriodMilliseconds: 0,
  blockReward: 0n,
  gossipedHistoryLimit: 1000,
  messageQueueLimit: 1000,
  duplicateMessageLimit: 100,
  futureMessagesLimit: 1000,
  futureMessagesMaxDistance: 10,
};

function controllerFor(n: number, overrides: Partial<ControllerConfig> = {}): QbftController {
  return new QbftController({
    nodeKey: key(n),
    vanity: new Uint8Array(32),
    requestTimeoutSeconds: 1,
    duplicateMessageLimit: 100,
    futureMessagesLimit: 1000,
    futureMessagesMaxDistance: 10,
    ...overrides,
  });
}

/** Four validators (signers 1–4) on a fake chain, and the context of height 1. */
async function fourValidators(config: QbftConfig = QBFT_CONFIG) {
  const members = [1, 2, 3, 4];
  const validators = members.map((m) => signer(m).address).sort(compareAddresses);
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators }));
  const tracker = new ValidatorTracker(new QbftSchedule(config, []), chain);
  const context: HeightContext = await tracker.heightContext(chain.headInfo());
  /** Signer number of the proposer of `round` at height 1. */
  const proposerOf = (round: number): number => members.find((m) => hex(signer(m).address) === hex(proposerFor(validators, context.parent.coinbase, round)))!;
  return { chain, validators, context, members, proposerOf };
}

const only = <K extends QbftAction['kind']>(actions: QbftAction[], kind: K) => actions.filter((a): a is Extract<QbftAction, { kind: K }> => a.kind === kind);
const events = (actions: QbftAction[]): ConsensusEvent[] => only(actions, 'event').map((a) => a.event);
const broadcasts = (actions: QbftAction[], code: number) => only(actions, 'broadcast').map((a) => a.message).filter((m) => m.code === code);
const deliver = (controller: QbftController, message: { code: number; data: Uint8Array }, now: number) =>
  controller.handle({ kind: 'message', code: message.code, data: message.data, origin: 'peer' }, now);

// ---------------------------------------------------------------------------------------------
// Early round change
// ---------------------------------------------------------------------------------------------

test('early round change: f+1 validators in higher rounds move a lagging node to the smallest of them at once', async (t) => {
  const { context, members, proposerOf } = await fourValidators();
  // The lagging node is the proposer of round 2, so it also shows who proposes once round 2 has a quorum.
  const lagging = proposerOf(2);
  const [a, b, c] = members.filter((m) => m !== lagging) as [number, number, number];
  const run = (earlyRoundChange: boolean) => {
    const controller = controllerFor(lagging, { earlyRoundChange });
    controller.handle({ kind: 'newHeight', context }, START);
    controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, START + 1000);
    t.is(controller.round, 0);
    const first = deliver(controller, createRoundChange(signer(a), 1n, 3), START + 1100);
    const second = deliver(controller, createRoundChange(signer(b), 1n, 2), START + 1200);
    return { controller, first, second };
  };

  // n = 4, f = 1: one validator ahead is not enough, two are.
  const early = run(true);
  t.is(broadcasts(early.first, MessageCode.ROUND_CHANGE).length, 0, 'a single validator ahead moves nothing');
  t.is(early.controller.round, 2, 'rounds {3, 2} from two validators: the smallest, 2');
  const sent = broadcasts(early.second, MessageCode.ROUND_CHANGE) as RoundChangeMessage[];
  t.deepEqual(sent.map((m) => m.signed.payload.round), [2], 'it sends its own round change for round 2');
  const started = events(early.second).find((e) => e.type === 'roundStarted');
  t.like(started, { type: 'roundStarted', round: 2, reason: 'futureRoundChanges', timeoutMs: 4000 });
  t.deepEqual(
    only(early.second, 'setTimer').map((a) => a.timer),
    [{ slot: 'round', height: 1n, round: 2 }],
  );
  // Own + b = 2 round changes for round 2: no quorum (3) yet, so no block.
  t.is(only(early.second, 'buildBlock').length, 0);
  // c joins round 2: a quorum for the current round, and its proposer builds the round-2 block.
  const quorum = deliver(early.controller, createRoundChange(signer(c), 1n, 2), START + 1300);
  t.deepEqual(only(quorum, 'buildBlock').map((a) => a.round), [2]);

  // The same messages without the option: the node stays in round 0 until its own timer.
  const late = run(false);
  t.is(late.controller.round, 0);
  t.deepEqual([...late.first, ...late.second].filter((a) => a.kind !== 'gossip'), []);
});

test('early round change: the target is the smallest round among f+1 validators, each counted once at its highest', async (t) => {
  const { context, members } = await fourValidators();
  const [me, a, b] = members as [number, number, number];
  const controller = controllerFor(me, { earlyRoundChange: true });
  controller.handle({ kind: 'newHeight', context }, START);
  controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, START + 1000);
  // One validator sending round changes for two rounds is still one validator.
  deliver(controller, createRoundChange(signer(a), 1n, 3), START + 1100);
  deliver(controller, createRoundChange(signer(a), 1n, 5), START + 1150);
  t.is(controller.round, 0);
  deliver(controller, createRoundChange(signer(b), 1n, 4), START + 1200);
  t.is(controller.round, 4, 'a at 5 (its highest), b at 4: round 4');
  // Round changes for rounds at or below the current one do not count towards a jump.
  deliver(controller, createRoundChange(signer(a), 1n, 4), START + 1300);
  t.is(controller.round, 4);
});

test('without early round change a quorum for a later round still moves the node, and its proposer proposes', async (t) => {
  const { context, members, proposerOf } = await fourValidators();
  const lagging = proposerOf(3);
  const others = members.filter((m) => m !== lagging);
  const controller = controllerFor(lagging);
  controller.handle({ kind: 'newHeight', context }, START);
  let actions: QbftAction[] = [];
  for (const [i, other] of others.entries()) {
    actions = deliver(controller, createRoundChange(signer(other), 1n, 3), START + 1000 + i);
    if (i < 2) t.is(controller.round, undefined, `${i + 1} round change(s): no move in default mode`);
  }
  t.is(controller.round, 3);
  t.like(events(actions).find((e) => e.type === 'roundStarted'), { reason: 'roundChangeQuorum', round: 3 });
  t.deepEqual(only(actions, 'buildBlock').map((a) => a.round), [3]);
  t.is(broadcasts(actions, MessageCode.ROUND_CHANGE).length, 0, 'no own round change on this path');
});

test('--Xqbft-enable-early-round-change: off by default, a flag with an optional value, hidden from help', (t) => {
  const noFiles = () => {
    throw new Error('no files here');
  };
  t.false(resolveOptions([], {}, noFiles).qbftEarlyRoundChange);
  t.true(resolveOptions(['--Xqbft-enable-early-round-change'], {}, noFiles).qbftEarlyRoundChange);
  t.false(resolveOptions(['--Xqbft-enable-early-round-change=false'], {}, noFiles).qbftEarlyRoundChange);
  t.true(resolveOptions([], { BASALT_XQBFT_ENABLE_EARLY_ROUND_CHANGE: 'true' }, noFiles).qbftEarlyRoundChange);
  t.false(renderHelp().includes('early-round-change'));
});

// ---------------------------------------------------------------------------------------------
// Blocks attached to round changes are executed
// ---------------------------------------------------------------------------------------------

test('a round change carrying a block counts only once the block executed; an invalid block is ignored', async (t) => {
  const { chain, validators, context, members, proposerOf } = await fourValidators();
  const proposer0 = proposerOf(0);
  const proposer1 = proposerOf(1);
  const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] });
  const block = chain.build(
    { request: 0, height: 1n, round: 0, parentHash: context.parent.hash, timestamp: T0 + 1n, coinbase: signer(proposer0).address, extraData },
    [Uint8Array.of(7)],
  );
  // A quorum really prepared it: the certificate is valid, only execution can tell the block is bad.
  const prepares = members.slice(0, 3).map((m) => createPrepare(signer(m), { height: 1n, round: 0, digest: block.digest() }).signed);
  const others = members.filter((m) => m !== proposer1);

  const attempt = (verdict: boolean) => {
    const controller = controllerFor(proposer1);
    controller.handle({ kind: 'newHeight', context }, START);
    const withBlock = createRoundChange(signer(others[0]!), 1n, 1, { block, prepares, round: 0 });
    const received = deliver(controller, withBlock, START + 2000);
    const executions = only(received, 'validateBlock');
    t.is(executions.length, 1, 'the attached block goes to execution');
    t.is(hex(executions[0]!.block.hash()), hex(block.hash()));
    // The same block in another round change waits for that one execution.
    const again = createRoundChange(signer(others[1]!), 1n, 1, { block, prepares, round: 0 });
    t.is(only(deliver(controller, again, START + 2001), 'validateBlock').length, 0);
    const plain = deliver(controller, createRoundChange(signer(others[2]!), 1n, 1), START + 2002);
    t.is(only(plain, 'buildBlock').length + broadcasts(plain, MessageCode.PROPOSAL).length, 0, 'one counted round change: no quorum yet');
    return { controller, after: controller.handle({ kind: 'blockValidated', request: executions[0]!.request, valid: verdict, reason: 'state root mismatch' }, START + 2010) };
  };

  const refused = attempt(false);
  const rejections = events(refused.after).filter((e) => e.type === 'messageRejected');
  t.is(rejections.length, 2, 'both round changes carrying the block are ignored');
  t.true(rejections.every((e) => e.type === 'messageRejected' && /prepared block is invalid: state root mismatch/.test(e.reason)));
  t.is(broadcasts(refused.after, MessageCode.PROPOSAL).length, 0);
  t.is(refused.controller.round, undefined, 'no quorum, no round 1');

  const accepted = attempt(true);
  const proposal = broadcasts(accepted.after, MessageCode.PROPOSAL)[0] as ProposalMessage | undefined;
  t.truthy(proposal, 'with the block executed the quorum is complete and the round-1 proposer re-proposes it');
  t.is(hex(proposal!.signed.payload.block.hash()), hex(block.hash()));
  t.is(proposal!.signed.payload.round, 1);
});

test('a block once executed is not executed again at the height, in a proposal or a round change', async (t) => {
  const { chain, validators, context, members, proposerOf } = await fourValidators();
  const proposer0 = proposerOf(0);
  const observer = members.find((m) => m !== proposer0 && m !== proposerOf(1))!;
  const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] });
  const block = chain.build(
    { request: 0, height: 1n, round: 0, parentHash: context.parent.hash, timestamp: T0 + 1n, coinbase: signer(proposer0).address, extraData },
    [Uint8Array.of(8)],
  );
  const controller = controllerFor(observer);
  controller.handle({ kind: 'newHeight', context }, START);
  const proposal = createProposal(signer(proposer0), 1n, 0, block);
  const execution = only(deliver(controller, proposal, START + 1000), 'validateBlock')[0]!;
  controller.handle({ kind: 'blockValidated', request: execution.request, valid: true }, START + 1005);
  const prepares = members.slice(0, 3).map((m) => createPrepare(signer(m), { height: 1n, round: 0, digest: block.digest() }).signed);
  const sender = members.find((m) => m !== observer)!;
  const actions = deliver(controller, createRoundChange(signer(sender), 1n, 1, { block, prepares, round: 0 }), START + 1500);
  t.is(only(actions, 'validateBlock').length, 0);
  t.false(events(actions).some((e) => e.type === 'messageRejected'));
});

// ---------------------------------------------------------------------------------------------
// The runner's message queue
// ---------------------------------------------------------------------------------------------

/** A runner on a virtual clock whose controller works on height 1; counts what reaches the controller. */
async function floodTarget(messageQueueLimit?: number) {
  const { context, members } = await fourValidators();
  const clock = new VirtualClock(START);
  const controller = controllerFor(members[0]!);
  const seen: ConsensusEvent[] = [];
  let gossiped = 0;
  const ports: QbftPorts = {
    buildBlock: () => Promise.reject(new Error('not in this test')),
    validateBlock: async () => ({ valid: true }),
    importBlock: async () => undefined,
    broadcast: () => undefined,
    gossip: () => {
      gossiped += 1;
    },
    heightContext: async () => context,
    onEvent: (event) => seen.push(event),
  };
  const runner = new QbftRunner(controller, ports, clock, messageQueueLimit === undefined ? {} : { messageQueueLimit });
  runner.onNewHead(context.parent);
  await clock.runUntil(START);
  expectHeightOne(controller);
  /** A distinct valid prepare from a validator: the controller gossips each one it handles. */
  const prepare = (i: number) => createPrepare(signer(members[1]!), { height: 1n, round: 0, digest: keccak_256(new Uint8Array(new Uint32Array([i]).buffer)) });
  return { clock, runner, seen, gossipedCount: () => gossiped, prepare };
}

function expectHeightOne(controller: QbftController): void {
  if (controller.height !== 1n) throw new Error('the controller did not start height 1');
}

test('messagequeuelimit: a flood in one turn keeps limit+1 messages and drops the rest; the queue then drains and takes more', async (t) => {
  const target = await floodTarget(10);
  for (let i = 0; i < 50; i++) {
    const m = target.prepare(i);
    target.runner.onMessage(m.code, m.data, 'flooder');
  }
  // Besu drops while the queue holds more than the limit: 11 kept.
  t.is(target.runner.queuedMessages, 11);
  t.is(target.runner.droppedMessages, 39);
  t.is(target.gossipedCount(), 0, 'nothing is handled in the turn the messages arrive');
  const overflow = target.seen.filter((e) => e.type === 'messageQueueFull');
  t.deepEqual(overflow, [{ type: 'messageQueueFull', limit: 10, dropped: 1 }], 'one event per overflow');
  await target.clock.runUntil(START + 1);
  t.is(target.gossipedCount(), 11, 'every queued message reached the controller');
  t.is(target.runner.queuedMessages, 0);
  // Room again: later messages are taken.
  const late = target.prepare(1000);
  target.runner.onMessage(late.code, late.data, 'flooder');
  await target.clock.runUntil(START + 2);
  t.is(target.gossipedCount(), 12);
  t.is(target.runner.droppedMessages, 39);
});

test('messagequeuelimit: the default of 1000 from the genesis reaches the runner of a simulated node', async (t) => {
  const target = await floodTarget();
  for (let i = 0; i < 1500; i++) {
    const m = target.prepare(i);
    target.runner.onMessage(m.code, m.data, 'flooder');
  }
  t.is(target.runner.queuedMessages, 1001);
  t.is(target.runner.droppedMessages, 499);
  await target.clock.runUntil(START + 1);
  t.is(target.gossipedCount(), 1001);

  const sim = new Simulation({ seed: 5, validators: 4, durationMs: 1, messageQueueLimit: 3 });
  const node = sim.nodes[0]!;
  for (let i = 0; i < 10; i++) node.runner.onMessage(MessageCode.PREPARE, Uint8Array.of(0xc0, i), 'n1');
  t.is(node.runner.queuedMessages, 4, 'the genesis messagequeuelimit (3) of the simulation reached the runner');
  t.is(node.runner.droppedMessages, 6);
});

test('a stopped runner drops its queue', async (t) => {
  const target = await floodTarget(10);
  for (let i = 0; i < 5; i++) {
    const m = target.prepare(i);
    target.runner.onMessage(m.code, m.data, 'peer');
  }
  await target.runner.stop();
  await target.clock.runUntil(START + 10);
  t.is(target.gossipedCount(), 0);
  t.is(target.runner.queuedMessages, 0);
});

// ---------------------------------------------------------------------------------------------
// Whole networks
// ---------------------------------------------------------------------------------------------

async function simulate(config: SimulationConfig): Promise<{ sim: Simulation; report: SimulationReport }> {
  const sim = new Simulation(config);
  const report = await sim.run();
  return { sim, report };
}

test('simulation with early round change: safety and liveness on lossy networks and with a validator down', async (t) => {
  for (const seed of [61, 62, 63]) {
    const config: SimulationConfig = {
      seed,
      validators: seed === 63 ? 7 : 4,
      durationMs: 20_000,
      earlyRoundChange: true,
      network: { baseDelayMs: 10, jitterMs: 40, loss: 0.1, duplication: 0.1 },
      crashes: [{ node: seed % 4, atMs: 0 }],
    };
    const { report } = await simulate(config);
    t.log(`seed ${seed} n=${config.validators}: heads [${report.heads.join(',')}], ${report.roundChanges.length} round starts above 0`);
    t.deepEqual(report.safetyViolations, [], `seed ${seed}: safety`);
    t.deepEqual(report.importErrors, []);
    t.true(report.minHonestHead >= 8n, `seed ${seed}: head ${report.minHonestHead}`);
    t.true(report.heightsWithRoundChanges.length > 0, 'the crashed proposer forced round changes');
  }
});

test('simulation: a validator that restarts behind catches up with the others\' round at once only with early round change', async (t) => {
  // n = 4: two validators down from the start, so the other two climb rounds (timeouts 1, 2, 4, 8,
  // 16 s...) without a quorum. One comes back at 20 s, starting over at round 0.
  const run = async (earlyRoundChange: boolean) => {
    const { sim, report } = await simulate({
      seed: 71,
      validators: 4,
      durationMs: 120_000,
      earlyRoundChange,
      crashes: [
        { node: 0, atMs: 0, restartAtMs: 20_000 },
        { node: 1, atMs: 0 },
      ],
    });
    t.deepEqual(report.safetyViolations, []);
    t.deepEqual(report.importErrors, []);
    const restarted = sim.nodes[0]!;
    const firstCommit = Math.min(...sim.nodes.filter((n) => n.index !== 1).map((n) => n.commitTimes.get(1n) ?? Infinity));
    const jumps = restarted.rounds.filter((r) => r.reason === 'futureRoundChanges');
    t.log(`early=${earlyRoundChange}: block 1 committed at ${firstCommit} ms, heads [${report.heads.join(',')}], jumps of the restarted node ${jumps.map((r) => `${r.round}@${r.atMs}`).join(' ')}`);
    return { report, firstCommit, jumps };
  };
  const early = await run(true);
  const late = await run(false);
  t.true(early.jumps.length > 0, 'the restarted node jumped on f+1 round changes');
  t.is(late.jumps.length, 0);
  t.true(early.firstCommit < late.firstCommit, 'the chain resumed sooner');
  t.true(early.report.minHonestHead >= 10n, `liveness with the option: head ${early.report.minHonestHead}`);
  t.true(late.report.minHonestHead >= 1n);
});

test('simulation: blocks a validator\'s execution refuses are never committed, and the chain goes on', async (t) => {
  // Every node's execution refuses the blocks node 2 creates at round 0: node 2's round-0 proposals
  // fail, and round changes carrying them (prepared by nobody) cannot appear.
  let refusals = 0;
  let sim!: Simulation;
  const config: SimulationConfig = {
    seed: 81,
    validators: 4,
    durationMs: 20_000,
    refuseBlock: (_node, block) => {
      if (block.round !== 0 || hex(block.coinbase) !== hex(sim.nodes[2]!.signer.address)) return undefined;
      refusals += 1;
      return 'refused by the test';
    },
  };
  sim = new Simulation(config);
  const report = await sim.run();
  t.deepEqual(report.safetyViolations, []);
  t.true(refusals > 0);
  t.true(report.minHonestHead >= 8n, `head ${report.minHonestHead}`);
  const longest = sim.nodes.reduce((a, b) => (b.head > a.head ? b : a));
  for (let n = 1n; n <= longest.head; n++) {
    const block = longest.chain.blockAt(n)!;
    t.false(block.extraData.round === 0 && hex(block.coinbase) === hex(sim.nodes[2]!.signer.address), `block ${n}`);
  }
});
