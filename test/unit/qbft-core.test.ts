/**
 * The pure QBFT pieces one by one: the state machine's actions for given inputs (controller.ts), the
 * vote tally and epochs (validators.ts), vote selection (votes.ts), per-block settings (schedule.ts)
 * and the header rules (header-rules.ts).
 */
import test from 'ava';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { QbftController } from '../../src/consensus/controller.js';
import type { ControllerConfig } from '../../src/consensus/controller.js';
import type { HeightContext, QbftAction } from '../../src/consensus/core-types.js';
import { decodeExtraData, encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { checkHeaderRules } from '../../src/shared/qbft/header-rules.js';
import type { HeaderRuleContext } from '../../src/shared/qbft/header-rules.js';
import { MessageCode, createCommit, createPrepare, createProposal, createRoundChange, decodeMessage } from '../../src/consensus/messages.js';
import type { ProposalMessage, RoundChangeMessage, Signer } from '../../src/consensus/messages.js';
import { QbftSchedule } from '../../src/shared/qbft/schedule.js';
import { addressOf, compareAddresses, proposerFor, signHash } from '../../src/shared/qbft/seal.js';
import { VoteTally, ValidatorTracker, decodeAddressArray, tallyAfterHeader } from '../../src/shared/qbft/validators.js';
import type { HeaderSummary } from '../../src/shared/qbft/validators.js';
import { PendingVotes } from '../../src/shared/qbft/votes.js';
import { FakeChain, encodeAddressArray, fakeGenesis } from '../harness/qbft-simulation/fake-chain.js';
import type { QbftConfig } from '../../src/shared/ethereum/genesis.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const key = (n: number): Uint8Array => keccak_256(Uint8Array.of(n));
const signer = (n: number): Signer => ({ key: key(n), address: addressOf(key(n)) });
const address = (n: number): Uint8Array => Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : 0));
const T0 = 1_700_000_000n;

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

/** A chain and the context of its next height, for validators `members` (signer numbers). */
function setup(members: number[], schedule = new QbftSchedule(QBFT_CONFIG, [])) {
  const validators = members.map((m) => signer(m).address).sort(compareAddresses);
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators }));
  const tracker = new ValidatorTracker(schedule, chain);
  return { chain, tracker, validators, context: () => tracker.heightContext(chain.headInfo()) };
}

const kinds = (actions: QbftAction[]) => actions.map((a) => (a.kind === 'event' ? `event:${a.event.type}` : a.kind === 'broadcast' ? `broadcast:0x${a.message.code.toString(16)}` : a.kind));
const only = <K extends QbftAction['kind']>(actions: QbftAction[], kind: K) => actions.filter((a): a is Extract<QbftAction, { kind: K }> => a.kind === kind);

// ---------------------------------------------------------------------------------------------
// State machine
// ---------------------------------------------------------------------------------------------

test('a sole validator: block timer → round 0 → build → propose, prepare and commit itself → import with one seal', async (t) => {
  const { chain, context } = setup([1]);
  const controller = controllerFor(1);
  const startMs = Number(T0) * 1000;
  let actions = controller.handle({ kind: 'newHeight', context: await context() }, startMs);
  t.deepEqual(actions, [{ kind: 'setTimer', timer: { slot: 'block', height: 1n }, atMs: startMs + 1000 }]);

  actions = controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, startMs + 1003);
  t.deepEqual(kinds(actions), ['setTimer', 'event:roundStarted', 'buildBlock']);
  t.deepEqual(only(actions, 'setTimer')[0], { kind: 'setTimer', timer: { slot: 'round', height: 1n, round: 0 }, atMs: startMs + 1003 + 1000 });
  const build = only(actions, 'buildBlock')[0]!;
  t.is(build.timestamp, T0 + 1n);
  t.is(hex(build.coinbase), hex(signer(1).address));
  const extra = decodeExtraData(build.extraData);
  t.deepEqual(extra.validators.map(hex), [hex(signer(1).address)]);
  t.is(extra.round, 0);
  t.is(extra.vote, undefined);

  const block = chain.build(build, [Uint8Array.of(1)]);
  actions = controller.handle({ kind: 'blockBuilt', request: build.request, block }, startMs + 1010);
  t.deepEqual(kinds(actions), ['broadcast:0x12', 'event:proposed', 'importBlock', 'event:committed', 'broadcast:0x14', 'broadcast:0x13']);
  const imported = only(actions, 'importBlock')[0]!.block;
  t.is(hex(imported.hash()), hex(block.hash()));
  t.is(imported.extraData.seals.length, 1);
  t.is(hex(imported.extraData.seals[0]!), hex(signHash(block.digest(), key(1))));
  // After committing, further messages for the height change nothing.
  t.deepEqual(controller.handle({ kind: 'timer', timer: { slot: 'round', height: 1n, round: 0 } }, startMs + 2010), []);
});

test('round timeouts double: base × 2^r, and every expiry sends a round change for the next round', async (t) => {
  const { context } = setup([1, 2]);
  const controller = controllerFor(1);
  const start = Number(T0) * 1000;
  controller.handle({ kind: 'newHeight', context: await context() }, start);
  let now = start + 1000;
  let actions = controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, now);
  for (let round = 0; round < 5; round++) {
    const timer = only(actions, 'setTimer').find((a) => a.timer.slot === 'round')!;
    t.deepEqual(timer.timer, { slot: 'round', height: 1n, round });
    t.is(timer.atMs - now, 1000 * 2 ** round);
    now = timer.atMs;
    // A stale expiry of another round is ignored.
    t.deepEqual(controller.handle({ kind: 'timer', timer: { slot: 'round', height: 1n, round: round + 7 } }, now), []);
    actions = controller.handle({ kind: 'timer', timer: { slot: 'round', height: 1n, round } }, now);
    const roundChange = only(actions, 'broadcast').map((a) => a.message).find((m): m is RoundChangeMessage => m.code === MessageCode.ROUND_CHANGE)!;
    t.is(roundChange.signed.payload.round, round + 1);
    t.is(controller.round, round + 1);
  }
});

test('proposals are checked: proposer, justification, coinbase, block round, header rules', async (t) => {
  const { chain, context, validators } = setup([1, 2, 3, 4]);
  const ctx = await context();
  const proposer0 = proposerFor(validators, ctx.parent.coinbase, 0);
  const proposerSigner = [1, 2, 3, 4].map(signer).find((s) => hex(s.address) === hex(proposer0))!;
  const other = [1, 2, 3, 4].map(signer).find((s) => hex(s.address) !== hex(proposer0))!;
  const observerNumber = [1, 2, 3, 4].find((n) => hex(signer(n).address) !== hex(proposer0) && hex(signer(n).address) !== hex(other.address))!;
  const now = Number(T0) * 1000 + 1100;
  const extraData = (round: number) => encodeExtraData({ vanity: new Uint8Array(32), validators, round, seals: [] });
  const build = (coinbase: Uint8Array, round = 0) =>
    chain.build({ request: 0, height: 1n, round, parentHash: ctx.parent.hash, timestamp: T0 + 1n, coinbase, extraData: extraData(round) }, []);

  const cases: [string, ProposalMessage, RegExp][] = [
    ['not the proposer', createProposal(other, 1n, 0, build(other.address)), /not the proposer/],
    ['coinbase of another validator', createProposal(proposerSigner, 1n, 0, build(other.address)), /coinbase/],
    ['block of another round', createProposal(proposerSigner, 1n, 0, build(proposerSigner.address, 1)), /another round/],
    [
      'round 0 with a justification',
      createProposal(proposerSigner, 1n, 0, build(proposerSigner.address), [createRoundChange(other, 1n, 1).signed]),
      /no justification/,
    ],
  ];
  for (const [name, proposal, reason] of cases) {
    const controller = controllerFor(observerNumber);
    controller.handle({ kind: 'newHeight', context: ctx }, now);
    const actions = controller.handle({ kind: 'message', code: proposal.code, data: proposal.data, origin: 'peer' }, now);
    const rejected = only(actions, 'event').map((a) => a.event).find((e) => e.type === 'messageRejected');
    t.regex(rejected && rejected.type === 'messageRejected' ? rejected.reason : '', reason, name);
    t.is(only(actions, 'validateBlock').length, 0, name);
  }

  // A round-1 proposal whose round changes are fewer than a quorum.
  const controller = controllerFor(observerNumber);
  controller.handle({ kind: 'newHeight', context: ctx }, now);
  const round1Proposer = [1, 2, 3, 4].map(signer).find((s) => hex(s.address) === hex(proposerFor(validators, ctx.parent.coinbase, 1)))!;
  const rcs = [1, 2].map((n) => createRoundChange(signer(n), 1n, 1).signed);
  const short = createProposal(round1Proposer, 1n, 1, build(round1Proposer.address, 1), rcs);
  const actions = controller.handle({ kind: 'message', code: short.code, data: short.data }, now);
  t.true(actions.some((a) => a.kind === 'event' && a.event.type === 'messageRejected' && /fewer round changes/.test(a.event.reason)));

  // The valid round-0 proposal goes to execution, and once valid the node prepares it.
  const good = createProposal(proposerSigner, 1n, 0, build(proposerSigner.address));
  const fresh = controllerFor(observerNumber);
  fresh.handle({ kind: 'newHeight', context: ctx }, now);
  const validate = only(fresh.handle({ kind: 'message', code: good.code, data: good.data, origin: 'peer' }, now), 'validateBlock')[0]!;
  t.truthy(validate);
  const after = fresh.handle({ kind: 'blockValidated', request: validate.request, valid: true }, now + 5);
  // The proposal arrived before this node's block timer: it starts round 0 early and prepares.
  t.deepEqual(kinds(after), ['setTimer', 'event:roundStarted', 'broadcast:0x13']);
});

test('received messages: duplicates dropped, non-validators refused before gossip, future heights buffered and replayed', async (t) => {
  const { chain, context, validators } = setup([1, 2, 3, 4]);
  const controller = controllerFor(1);
  const now = Number(T0) * 1000 + 1500;
  controller.handle({ kind: 'newHeight', context: await context() }, now);
  const digest = keccak_256(Uint8Array.of(9));
  const prepare = createPrepare(signer(2), { height: 1n, round: 0, digest });
  t.deepEqual(kinds(controller.handle({ kind: 'message', code: prepare.code, data: prepare.data, origin: 'a' }, now)), ['gossip']);
  t.deepEqual(controller.handle({ kind: 'message', code: prepare.code, data: prepare.data, origin: 'b' }, now), [], 'duplicate');

  const outsider = createPrepare(signer(9), { height: 1n, round: 0, digest });
  const refused = controller.handle({ kind: 'message', code: outsider.code, data: outsider.data, origin: 'a' }, now);
  t.deepEqual(kinds(refused), ['event:messageRejected']);

  // Height 3 while working on height 1: buffered, and the peer's height is noted.
  const future = createPrepare(signer(3), { height: 3n, round: 0, digest });
  const buffered = controller.handle({ kind: 'message', code: future.code, data: future.data, origin: 'c' }, now);
  t.deepEqual(buffered, [{ kind: 'peerHeight', origin: 'c', height: 2n }]);
  t.is(controller.bufferedFutureMessages, 1);
  // Beyond the window (10 heights): not buffered.
  const far = createPrepare(signer(3), { height: 13n, round: 0, digest });
  controller.handle({ kind: 'message', code: far.code, data: far.data, origin: 'c' }, now);
  t.is(controller.bufferedFutureMessages, 1);

  // Two blocks later the buffered message is replayed (and gossiped) at its height.
  for (const n of [1n, 2n]) {
    const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] });
    chain.append(chain.build({ request: 0, height: n, round: 0, parentHash: chain.head.hash(), timestamp: T0 + n, coinbase: validators[0]!, extraData }, []));
  }
  const replay = controller.handle({ kind: 'newHeight', context: await context() }, now + 2000);
  t.deepEqual(kinds(replay), ['cancelTimer', 'cancelTimer', 'setTimer', 'gossip']);
  t.is(controller.bufferedFutureMessages, 0);
});

test('the future-message buffer drops its highest height when full, or the oldest message of a single height', async (t) => {
  const { context } = setup([1, 2, 3, 4]);
  const controller = controllerFor(1, { futureMessagesLimit: 3 });
  const now = Number(T0) * 1000;
  controller.handle({ kind: 'newHeight', context: await context() }, now);
  const send = (height: bigint, n: number) => {
    const m = createPrepare(signer(2), { height, round: 0, digest: keccak_256(Uint8Array.of(n)) });
    controller.handle({ kind: 'message', code: m.code, data: m.data }, now);
  };
  send(3n, 1);
  send(3n, 2);
  send(4n, 3);
  t.is(controller.bufferedFutureMessages, 3);
  send(3n, 4); // over the cap with two heights buffered: all of height 4 goes
  t.is(controller.bufferedFutureMessages, 3);
  const only3 = controllerFor(1, { futureMessagesLimit: 2 });
  only3.handle({ kind: 'newHeight', context: await context() }, now);
  for (const n of [1, 2, 3]) {
    const m = createPrepare(signer(2), { height: 5n, round: 0, digest: keccak_256(Uint8Array.of(n)) });
    only3.handle({ kind: 'message', code: m.code, data: m.data }, now);
  }
  t.is(only3.bufferedFutureMessages, 2);
});

test('a commit whose seal is not the author\'s is refused once the proposal is known', async (t) => {
  const { chain, context, validators } = setup([1, 2, 3, 4]);
  const ctx = await context();
  const proposer = [1, 2, 3, 4].map(signer).find((s) => hex(s.address) === hex(proposerFor(validators, ctx.parent.coinbase, 0)))!;
  const observer = [1, 2, 3, 4].find((n) => hex(signer(n).address) !== hex(proposer.address))!;
  const third = [1, 2, 3, 4].find((n) => n !== observer && hex(signer(n).address) !== hex(proposer.address))!;
  const now = Number(T0) * 1000 + 1100;
  const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] });
  const block = chain.build({ request: 0, height: 1n, round: 0, parentHash: ctx.parent.hash, timestamp: T0 + 1n, coinbase: proposer.address, extraData }, []);
  const controller = controllerFor(observer);
  controller.handle({ kind: 'newHeight', context: ctx }, now);
  // A commit signed by `third` carrying the proposer's seal arrives before the proposal.
  const stolenSeal = createCommit(signer(third), 1n, 0, block.digest(), signHash(block.digest(), proposer.key));
  controller.handle({ kind: 'message', code: stolenSeal.code, data: stolenSeal.data }, now);
  const proposal = createProposal(proposer, 1n, 0, block);
  const validate = only(controller.handle({ kind: 'message', code: proposal.code, data: proposal.data }, now), 'validateBlock')[0]!;
  controller.handle({ kind: 'blockValidated', request: validate.request, valid: true }, now);
  // Genuine prepares from the proposer and `third` make the node prepared; genuine commits finish it.
  for (const n of [third]) {
    const p = createPrepare(signer(n), { height: 1n, round: 0, digest: block.digest() });
    controller.handle({ kind: 'message', code: p.code, data: p.data }, now);
  }
  const proposerPrepare = createPrepare(proposer, { height: 1n, round: 0, digest: block.digest() });
  controller.handle({ kind: 'message', code: proposerPrepare.code, data: proposerPrepare.data }, now);
  const proposerCommit = createCommit(proposer, 1n, 0, block.digest());
  const actions = controller.handle({ kind: 'message', code: proposerCommit.code, data: proposerCommit.data }, now);
  // Own + proposer = 2 commits: the stolen one was dropped, so no import yet.
  t.is(only(actions, 'importBlock').length, 0);
  const genuine = createCommit(signer(third), 1n, 0, block.digest());
  const done = controller.handle({ kind: 'message', code: genuine.code, data: genuine.data }, now);
  t.is(only(done, 'importBlock').length, 1);
});

test('an empty block before xemptyblockperiodseconds is not proposed: the round is dropped and the block timer re-armed', async (t) => {
  const schedule = new QbftSchedule({ ...QBFT_CONFIG, emptyBlockPeriodSeconds: 5 }, []);
  const { chain, context } = setup([1], schedule);
  const controller = controllerFor(1);
  const start = Number(T0) * 1000;
  controller.handle({ kind: 'newHeight', context: await context() }, start);
  const build = only(controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, start + 1000), 'buildBlock')[0]!;
  const empty = chain.build(build, []);
  const actions = controller.handle({ kind: 'blockBuilt', request: build.request, block: empty }, start + 1005);
  t.deepEqual(kinds(actions), ['cancelTimer', 'setTimer', 'event:emptyBlockSkipped']);
  // min(parent + 5 s, now + period)
  t.is(only(actions, 'setTimer')[0]!.atMs, start + 1005 + 1000);
  // With a transaction the next attempt is proposed at once.
  const retry = only(controller.handle({ kind: 'timer', timer: { slot: 'block', height: 1n } }, start + 2005), 'buildBlock')[0]!;
  const full = chain.build(retry, [Uint8Array.of(1)]);
  t.is(only(controller.handle({ kind: 'blockBuilt', request: retry.request, block: full }, start + 2010), 'importBlock').length, 1);
});

test('the proposer of round r>0 re-proposes the best prepared block with its round changes and prepares', async (t) => {
  const { chain, context, validators } = setup([1, 2, 3, 4]);
  const ctx = await context();
  const signers = [1, 2, 3, 4].map(signer);
  const byAddress = (a: Uint8Array) => signers.find((s) => hex(s.address) === hex(a))!;
  const proposer0 = byAddress(proposerFor(validators, ctx.parent.coinbase, 0));
  const proposer1 = byAddress(proposerFor(validators, ctx.parent.coinbase, 1));
  const n1 = [1, 2, 3, 4].find((n) => hex(signer(n).address) === hex(proposer1.address))!;
  const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] });
  const block = chain.build({ request: 0, height: 1n, round: 0, parentHash: ctx.parent.hash, timestamp: T0 + 1n, coinbase: proposer0.address, extraData }, []);
  const prepares = signers.slice(0, 3).map((s) => createPrepare(s, { height: 1n, round: 0, digest: block.digest() }).signed);
  const now = Number(T0) * 1000 + 2000;
  const controller = controllerFor(n1);
  controller.handle({ kind: 'newHeight', context: ctx }, now);
  const others = signers.filter((s) => s !== proposer1);
  const received: QbftAction[] = [];
  for (const [i, s] of others.entries()) {
    const rc = createRoundChange(s, 1n, 1, i === 0 ? { block, prepares, round: 0 } : undefined);
    received.push(...controller.handle({ kind: 'message', code: rc.code, data: rc.data }, now));
  }
  // The round change carrying the prepared block counts once that block executed (Besu executes it too).
  t.false(only(received, 'broadcast').some((a) => a.message.code === MessageCode.PROPOSAL));
  const execution = only(received, 'validateBlock')[0]!;
  t.is(hex(execution.block.hash()), hex(block.hash()));
  const actions = controller.handle({ kind: 'blockValidated', request: execution.request, valid: true }, now + 5);
  const proposal = only(actions, 'broadcast').map((a) => a.message).find((m): m is ProposalMessage => m.code === MessageCode.PROPOSAL)!;
  t.truthy(proposal, 'a quorum of round changes makes the round-1 proposer propose at once');
  t.is(proposal.signed.payload.round, 1);
  t.is(hex(proposal.signed.payload.block.hash()), hex(block.hash()), 'the prepared block, same on-chain hash');
  t.is(proposal.signed.payload.block.round, 1);
  t.is(hex(proposal.signed.payload.block.coinbase), hex(proposer0.address), 'coinbase of its creator kept');
  t.is(proposal.roundChanges.length, 3);
  t.is(proposal.prepares.length, 3);
  // It decodes, and another validator accepts it as justified.
  const decoded = decodeMessage(proposal.code, proposal.data) as ProposalMessage;
  const observer = controllerFor([1, 2, 3, 4].find((n) => n !== n1)!);
  observer.handle({ kind: 'newHeight', context: ctx }, now);
  const check = observer.handle({ kind: 'message', code: decoded.code, data: decoded.data }, now);
  t.is(only(check, 'validateBlock').length, 1);
});

// ---------------------------------------------------------------------------------------------
// Vote tally, epochs, selection
// ---------------------------------------------------------------------------------------------

function header(number: bigint, coinbase: Uint8Array, validators: Uint8Array[], vote?: { recipient: Uint8Array; add: boolean }): HeaderSummary {
  const extraData = encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [], ...(vote ? { vote } : {}) });
  return { number, hash: keccak_256(extraData), coinbase, extraData, timestamp: number, gasLimit: 1n };
}

test('tally: more than half of the validators add or drop; a dropped validator\'s own votes go with it', (t) => {
  const [a, b, c, d, x] = [1, 2, 3, 4, 5].map(address) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  let tally = VoteTally.of([a, b, c, d]);
  tally = tally.withVote(a, x, true).withVote(b, x, true);
  t.false(tally.isValidator(x), '2 of 4 is not more than half');
  t.true(tally.hasAddVote(a, x));
  tally = tally.withVote(c, x, true);
  t.true(tally.isValidator(x));
  t.false(tally.hasAddVote(a, x), 'votes for an added validator are discarded');
  // Now 5 validators: 3 drops needed. d votes to drop a, and a changes its mind on x twice.
  tally = tally.withVote(d, x, false).withVote(a, x, false).withVote(a, x, true);
  t.false(tally.hasDropVote(a, x));
  t.true(tally.hasDropVote(d, x));
  tally = tally.withVote(b, d, false).withVote(c, d, false).withVote(x, d, false);
  t.false(tally.isValidator(d));
  t.false(tally.hasDropVote(d, x), 'the removed validator\'s vote on x is gone');
  t.deepEqual(tally.validators.map(hex), [a, b, c, x].map(hex));
});

test('tally: an epoch block restarts from its own list and its vote is ignored; transitions override the set', async (t) => {
  const [a, b, c, x] = [1, 2, 3, 9].map(address) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  let tally = VoteTally.of([a, b, c]);
  tally = tallyAfterHeader(tally, header(1n, a, [a, b, c], { recipient: x, add: true }), 2n);
  t.true(tally.hasAddVote(a, x));
  tally = tallyAfterHeader(tally, header(2n, b, [a, b, c], { recipient: x, add: true }), 2n);
  t.false(tally.isValidator(x), 'the vote in epoch block 2 is ignored');
  t.false(tally.hasAddVote(a, x), 'outstanding votes are discarded at the epoch');

  // The tracker walks back to the epoch or to a transition override.
  const schedule = new QbftSchedule({ ...QBFT_CONFIG, epochLength: 4 }, [{ block: 7n, validators: [c, b] }]);
  const headers = [header(0n, new Uint8Array(20), [a, b, c])];
  for (let n = 1n; n <= 8n; n++) headers.push(header(n, [a, b, c][Number(n) % 3]!, [a, b, c], n === 5n || n === 6n ? { recipient: x, add: true } : undefined));
  const tracker = new ValidatorTracker(schedule, {
    headers: async (from, to) => headers.filter((h) => h.number >= from && h.number <= to),
    callContract: () => Promise.reject(new Error('no contract')),
  });
  t.deepEqual((await tracker.validatorsFor(6n)).map(hex), [a, b, c].map(hex), 'one vote for x (block 5) of 3 needed');
  t.deepEqual((await tracker.validatorsFor(7n)).map(hex), [b, c].map(hex), 'override at 7 replaces the tally after 6');
  t.deepEqual((await tracker.validatorsFor(8n)).map(hex), [b, c].map(hex));
});

test('vote selection: only votes that still change something, one per block, round-robin', (t) => {
  const [me, b, x, y] = [1, 2, 8, 9].map(address) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
  const votes = new PendingVotes();
  const tally = VoteTally.of([me, b]);
  t.is(votes.selectVote(me, tally), undefined);
  votes.propose(x, true);
  votes.propose(b, true); // already a validator: nothing to add
  votes.propose(y, false); // not a validator: nothing to drop
  t.deepEqual(votes.selectVote(me, tally), { recipient: x, add: true });
  t.deepEqual(votes.selectVote(me, tally.withVote(me, x, true)), undefined, 'my add vote for x is already counted');
  votes.propose(b, false);
  const picks = [0, 1, 2, 3].map(() => hex(votes.selectVote(me, tally)!.recipient));
  t.deepEqual(picks, [hex(b), hex(x), hex(b), hex(x)]);
  t.deepEqual(votes.toJson(), { [hex(x)]: true, [hex(b)]: false, [hex(y)]: false });
  votes.discard(b);
  t.deepEqual(votes.selectVote(me, tally), { recipient: x, add: true });
});

// ---------------------------------------------------------------------------------------------
// Settings and rules
// ---------------------------------------------------------------------------------------------

test('transition settings are cumulative; a blank beneficiary reverts to the coinbase', (t) => {
  const contract = address(0x88);
  const beneficiary = address(0xbe);
  const schedule = new QbftSchedule({ ...QBFT_CONFIG, blockReward: 10n }, [
    { block: 20n, blockPeriodSeconds: 5, miningBeneficiary: beneficiary },
    { block: 10n, blockReward: 0n },
    { block: 30n, validatorSelectionMode: 'contract', validatorContractAddress: contract },
    { block: 40n, miningBeneficiary: null },
  ]);
  t.is(schedule.settingsFor(9n).blockReward, 10n);
  t.is(schedule.settingsFor(10n).blockReward, 0n);
  t.is(schedule.settingsFor(25n).blockPeriodSeconds, 5);
  t.is(hex(schedule.beneficiaryFor({ number: 25n, timestamp: T0 }, address(1))), hex(beneficiary));
  t.is(schedule.settingsFor(35n).validatorSelectionMode, 'contract');
  t.is(schedule.settingsFor(35n).blockPeriodSeconds, 5, 'inherited');
  t.is(hex(schedule.beneficiaryFor({ number: 45n, timestamp: T0 }, address(1))), hex(address(1)));
  t.is(schedule.settingsFor(45n).validatorSelectionMode, 'contract');
  t.throws(() => new QbftSchedule(QBFT_CONFIG, [{ block: 5n, validatorSelectionMode: 'contract' }]), { message: /validatorcontractaddress/ });
  t.throws(() => new QbftSchedule({ ...QBFT_CONFIG, validatorContractAddress: contract }, [{ block: 5n, validatorSelectionMode: 'blockheader' }]), {
    message: /validators list/,
  });
});

test('getValidators() results decode as an address array', (t) => {
  const list = [address(3), address(1), address(2)];
  t.deepEqual(decodeAddressArray(encodeAddressArray(list)).map(hex), list.map(hex));
  t.throws(() => decodeAddressArray(new Uint8Array(0)));
  t.throws(() => decodeAddressArray(encodeAddressArray(list).subarray(0, 100)));
});

test('header rules refuse each kind of bad header', async (t) => {
  const { chain, context, validators } = setup([1, 2, 3, 4]);
  const ctx: HeightContext = await context();
  const rules: HeaderRuleContext = {
    parent: ctx.parent,
    validators,
    mode: 'blockheader',
    blockPeriodSeconds: 1,
    blockPeriodMilliseconds: 0,
    nowMs: Number(T0) * 1000 + 1000,
  };
  const extraData = (v = validators, round = 0) => encodeExtraData({ vanity: new Uint8Array(32), validators: v, round, seals: [] });
  const build = (over: { timestamp?: bigint; coinbase?: Uint8Array; extra?: Uint8Array } = {}) =>
    chain.build(
      { request: 0, height: 1n, round: 0, parentHash: ctx.parent.hash, timestamp: over.timestamp ?? T0 + 1n, coinbase: over.coinbase ?? validators[0]!, extraData: over.extra ?? extraData() },
      [],
    );
  t.is(checkHeaderRules(build(), rules, false), undefined);
  t.regex(checkHeaderRules(build({ timestamp: T0 }), rules, false)!, /earlier than the parent/);
  t.regex(checkHeaderRules(build({ timestamp: T0 + 3n }), rules, false)!, /future/);
  t.regex(checkHeaderRules(build({ coinbase: address(7) }), rules, false)!, /coinbase is not a validator/);
  t.regex(checkHeaderRules(build({ extra: extraData(validators.slice(1)) }), rules, false)!, /not the validator set/);
  t.regex(checkHeaderRules(build({ extra: extraData([...validators].reverse()) }), rules, false)!, /not the validator set/);
  t.regex(checkHeaderRules(build(), { ...rules, mode: 'contract' }, false)!, /lists no validators/);
  t.regex(checkHeaderRules(build(), rules, true)!, /0 commit seals, quorum is 3/);
  t.regex(checkHeaderRules(build(), { ...rules, parent: { ...rules.parent, number: 5n } }, false)!, /does not follow/);
  // Sub-second periods do not install the period rule.
  t.is(checkHeaderRules(build({ timestamp: T0 }), { ...rules, blockPeriodMilliseconds: 500 }, false), undefined);
  // Seals: three distinct validators pass; a duplicate or an outsider does not.
  const block = build();
  const sealsBy = (ns: number[]) => block.withSeals(ns.map((n) => signHash(block.digest(), key(n))));
  t.is(checkHeaderRules(sealsBy([1, 2, 3]), rules, true), undefined);
  t.regex(checkHeaderRules(sealsBy([1, 1, 2]), rules, true)!, /two commit seals/);
  t.regex(checkHeaderRules(sealsBy([1, 2, 9]), rules, true)!, /not from a validator/);
});
