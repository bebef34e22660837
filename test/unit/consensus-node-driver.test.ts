/**
 * NodeConsensus — QBFT wired to chain and pool ports as the consensus actor runs it — against a fake
 * chain on a virtual clock: build → seal → importCommitted for its own blocks, a held block replaced
 * by the next build, and the empty-block period.
 */
import test from 'ava';
import type { ExecutionContext } from 'ava';

import type { BuildRequest, HeadInfo, PrebuildRequest } from '../../src/shared/actors/messages.js';
import { parseGenesis, loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { HeaderField, QbftBlock } from '../../src/shared/qbft/block.js';
import { genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, recoverSealSigner } from '../../src/shared/qbft/seal.js';
import { NodeConsensus } from '../../src/consensus/node-consensus.js';
import type { NodeChainPorts } from '../../src/consensus/node-consensus.js';
import { FakeChain, fakeGenesis } from '../harness/qbft-simulation/fake-chain.js';
import { VirtualClock } from '../harness/qbft-simulation/virtual-clock.js';
import { bytesEqual } from '../../src/shared/qbft/header-rules.js';

const dev = loadDevNetwork();
const VALIDATOR = addressOf(dev.validatorKey);
const T0 = 1_700_000_000n;

function headInfo(block: QbftBlock): HeadInfo {
  return {
    number: block.number,
    hash: block.hash(),
    timestamp: block.timestamp,
    gasLimit: block.scalar(HeaderField.gasLimit),
    nextHardfork: 'prague',
    stateRoot: block.field(HeaderField.stateRoot),
    coinbase: block.coinbase,
    extraData: block.field(HeaderField.extraData),
    totalDifficulty: block.number + 1n,
  };
}

/**
 * A node with the dev validator key over a fake chain; `emptyPeriod` sets xemptyblockperiodseconds. At
 * height `loseAheadAt` the chain has lost what prebuilds executed by the time the build comes.
 */
function setup(emptyPeriod: number, transactionsAt: (height: bigint) => number, validators: Uint8Array[] = [VALIDATOR], loseAheadAt?: bigint) {
  const json = structuredClone(dev.genesisJson) as { config: { qbft: Record<string, unknown> } };
  json.config.qbft.xemptyblockperiodseconds = emptyPeriod;
  json.config.qbft.requesttimeoutseconds = 1;
  const genesis = parseGenesis(json);
  const clock = new VirtualClock(Number(T0) * 1000);
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators }));
  const calls: string[] = [];
  const reads = { headers: 0 };
  const prebuilds: PrebuildRequest[] = [];
  const builds: BuildRequest[] = [];
  // The block prebuilds executed into, as the chain holds it until a build finishes it.
  let open: { parentHash: Uint8Array; timestamp: bigint; raws: Uint8Array[] } | undefined;
  let held: QbftBlock | undefined;
  let node!: NodeConsensus;
  const ports: NodeChainPorts = {
    head: async () => headInfo(chain.head),
    // The pool holds `transactionsAt(height)` transactions for each height, in arrival order.
    selectTransactions: async ({ fromSequence = 0 }) => {
      calls.push('select');
      const count = transactionsAt(chain.headNumber + 1n);
      const height = Number(chain.headNumber + 1n);
      const all = Array.from({ length: count }, (_, i) => ({ raw: Uint8Array.of(0xaa, i), hash: Uint8Array.of(height, i), senderPublicKey: new Uint8Array(64) }));
      return { transactions: all.slice(fromSequence), nextSequence: count, admitting: 0 };
    },
    prebuild: async (req) => {
      calls.push('prebuild');
      prebuilds.push(req);
      if (!open || !bytesEqual(open.parentHash, req.parentHash) || open.timestamp !== req.timestamp) open = { parentHash: req.parentHash, timestamp: req.timestamp, raws: [] };
      open.raws.push(...req.transactions.map((tx) => tx.raw));
      return open.raws.length;
    },
    build: async (req) => {
      calls.push('build');
      builds.push(req);
      // The chain drops a block it still holds from an earlier build before building again.
      if (held) calls.push('replaceHeld');
      if (chain.headNumber + 1n === loseAheadAt) open = undefined;
      const continued = open && bytesEqual(open.parentHash, chain.head.hash()) && open.timestamp === req.timestamp ? open.raws : [];
      open = undefined;
      // A candidate the open block has already is skipped, as the chain skips what it tried.
      const known = new Set(continued.map((raw) => Buffer.from(raw).toString('hex')));
      const fresh = req.transactions.map((tx) => tx.raw).filter((raw) => !known.has(Buffer.from(raw).toString('hex')));
      held = chain.build(
        { request: 0, height: chain.headNumber + 1n, round: 0, parentHash: chain.head.hash(), timestamp: req.timestamp, coinbase: req.coinbase, extraData: req.extraData },
        [...continued, ...fresh],
      );
      return { number: held.number, hash: held.hash(), rlp: held.encode(), txCount: held.transactionCount, executedAhead: continued.length, gasUsed: 0n, rejected: [] };
    },
    importCommitted: async (rlp) => {
      const block = QbftBlock.fromRlp(rlp);
      // The held block reuses its execution; any other committed block would be executed in full.
      calls.push(held && bytesEqual(held.hash(), block.hash()) ? 'importCommitted' : 'importOther');
      chain.append(block);
      held = undefined;
      node.onNewHead(headInfo(chain.head));
    },
    discardBuilt: async () => {
      calls.push('discardBuilt');
      held = undefined;
      open = undefined;
    },
    validateBlock: async () => ({ valid: false, reason: 'no proposals from peers in this test' }),
    reportRejected: async () => undefined,
    headers: (from, to) => {
      reads.headers++;
      return chain.headers(from, to);
    },
    headerByHash: async () => null,
    call: () => Promise.reject(new Error('no contract')),
  };
  node = new NodeConsensus(
    { nodeKey: dev.validatorKey, vanity: new Uint8Array(32), genesis, txSelectionShare: 0.75, maxTransactionsPerBlock: 100 },
    ports,
    { broadcast: () => undefined, gossip: () => undefined },
    clock,
    () => undefined,
  );
  return { node, chain, clock, calls, reads, prebuilds, builds };
}

test('a sole validator builds, seals with its own commit seal and imports its held block every period', async (t) => {
  const { node, chain, clock, calls } = setup(0, () => 1);
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 5_500);
  t.is(chain.headNumber, 5n);
  const blockWork = calls.filter((call) => call !== 'select' && call !== 'prebuild');
  t.deepEqual(blockWork.slice(0, 2), ['build', 'importCommitted']);
  t.false(calls.includes('importOther'));
  t.false(calls.includes('replaceHeld'));
  for (let n = 1n; n <= 5n; n++) {
    const block = chain.blockAt(n)!;
    t.is(block.timestamp, T0 + n, 'one block per second');
    t.deepEqual(block.extraData.seals.map((s) => recoverSealSigner(block.digest(), s)), [VALIDATOR]);
  }
  await node.stop();
});

test('an empty block is held back until xemptyblockperiodseconds, and the held block is replaced by the next build', async (t) => {
  // Transactions only from height 3 on; empty blocks wait up to 3 s after their parent.
  const { node, chain, clock, calls } = setup(3, (height) => (height >= 3n ? 1 : 0));
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 2_500);
  t.is(chain.headNumber, 0n, 'block 1 would be empty: not proposed yet');
  t.true(calls.includes('replaceHeld'), 'the empty block built first was replaced by the retry');
  await clock.runUntil(Number(T0) * 1000 + 4_500);
  t.is(chain.headNumber, 1n);
  t.true(chain.blockAt(1n)!.timestamp >= T0 + 3n, 'the empty block went out once its period had passed');
  await clock.runUntil(Number(T0) * 1000 + 7_500);
  t.true(chain.headNumber >= 3n);
  t.is(chain.blockAt(3n)!.transactionCount, 1);
  await node.stop();
});

test('after a re-org the validator sets cached above the fork point are read again from the new branch', async (t) => {
  const { node, chain, clock, reads } = setup(0, () => 1);
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 5_500);
  await node.stop();
  t.is(chain.headNumber, 5n);
  await node.tracker.tallyAfter(4n);
  const before = reads.headers;
  // An ordinary new head keeps the cache.
  node.onNewHead(headInfo(chain.head));
  await node.tracker.tallyAfter(4n);
  t.is(reads.headers, before, 'served from the cache');
  // A head reached through a re-org that forked after block 2.
  node.onNewHead(headInfo(chain.head), 2n);
  await node.tracker.tallyAfter(4n);
  t.true(reads.headers > before, 'read again from the chain');
  const again = reads.headers;
  await node.tracker.tallyAfter(2n);
  t.is(reads.headers, again, 'what lies below the fork point stays cached');
});

/** Runs a sole validator through its first three one-second blocks. */
async function runThreeBlocks(t: ExecutionContext, node: NodeConsensus, clock: VirtualClock, chain: FakeChain): Promise<void> {
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 3_500);
  await node.stop();
  t.is(chain.headNumber, 3n);
}

test('the proposer hands pool transactions to the chain ahead of its block timer, each once, for the block the timer then builds', async (t) => {
  const { node, chain, clock, calls, prebuilds } = setup(0, () => 3);
  await runThreeBlocks(t, node, clock, chain);
  for (let n = 1n; n <= 3n; n++) {
    const parent = chain.blockAt(n - 1n)!;
    const forBlock = prebuilds.filter((req) => bytesEqual(req.parentHash, parent.hash()));
    t.true(forBlock.length > 0, `block ${n}: transactions went to the chain before its timer`);
    for (const req of forBlock) {
      t.is(req.timestamp, parent.timestamp + 1n, 'the time the round-0 timer gives the block');
      t.deepEqual(req.coinbase, VALIDATOR);
    }
    const hashes = forBlock.flatMap((req) => req.transactions.map((tx) => Buffer.from(tx.hash).toString('hex')));
    t.is(hashes.length, 3, 'each of the three pool transactions once');
    t.is(new Set(hashes).size, 3);
    t.is(chain.blockAt(n)!.timestamp, parent.timestamp + 1n);
  }
  // Nothing is handed over for a height once its build started.
  const sequence = calls.filter((call) => call !== 'select');
  for (let i = 0; i < sequence.length; i++) {
    if (sequence[i] === 'build') t.not(sequence[i + 1], 'prebuild', 'no prebuild between a build and its import');
  }
});

/**
 * A pool whose transactions for a height keep arriving: one more every 100 ms of its period (the
 * period starts at the parent's time), so the build at the timer finds some the chain was not handed.
 */
function arriving(): { transactionsAt: (height: bigint) => number; useClock: (clock: { now(): number }) => void } {
  let clock: { now(): number } | undefined;
  return {
    transactionsAt: (height) => Math.max(1, Math.floor((clock!.now() - Number(T0 + height - 1n) * 1000) / 100) + 1),
    useClock: (c) => {
      clock = c;
    },
  };
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

test('the build at the timer asks the pool only for what the chain was not handed before; every transaction is in the block once', async (t) => {
  const pool = arriving();
  const { node, chain, clock, prebuilds, builds } = setup(0, pool.transactionsAt);
  pool.useClock(clock);
  await runThreeBlocks(t, node, clock, chain);
  for (let n = 1n; n <= 3n; n++) {
    const parent = chain.blockAt(n - 1n)!;
    const forBlock = prebuilds.filter((req) => bytesEqual(req.parentHash, parent.hash()));
    // Executed after the timer fired: bounded by the build's time (the catch-up rounds, block-prebuilder.ts).
    const raws = (reqs: PrebuildRequest[]) => reqs.flatMap((req) => req.transactions.map((tx) => hex(tx.raw)));
    const ahead = raws(forBlock.filter((req) => req.maxBuildMs === undefined));
    const atTimer = raws(forBlock.filter((req) => req.maxBuildMs !== undefined));
    const block = chain.blockAt(n)!;
    t.true(ahead.length > 0, `block ${n}: some ran ahead of the timer`);
    t.true(atTimer.length > 0, `block ${n}: some came after the last selection ahead of the timer`);
    t.false(atTimer.some((raw) => ahead.includes(raw)), `block ${n}: the build was not handed again what ran ahead`);
    const sealing = builds.filter((req) => req.timestamp === parent.timestamp + 1n);
    t.deepEqual(sealing.map((req) => req.transactions.length), [0], `block ${n}: one build, which only seals`);
    t.is(block.transactionCount, ahead.length + atTimer.length, `block ${n}: each once`);
  }
});

test('when the chain no longer holds what ran ahead, the build is dropped and made again from the whole pool', async (t) => {
  const pool = arriving();
  const { node, chain, clock, calls, builds } = setup(0, pool.transactionsAt, [VALIDATOR], 2n);
  pool.useClock(clock);
  await runThreeBlocks(t, node, clock, chain);
  const block2 = chain.blockAt(2n)!;
  const forBlock2 = builds.filter((req) => req.timestamp === chain.blockAt(1n)!.timestamp + 1n);
  t.is(forBlock2.length, 2, 'built twice');
  t.true(forBlock2[1]!.transactions.length > forBlock2[0]!.transactions.length, 'the second time from the whole pool');
  t.is(block2.transactionCount, forBlock2[1]!.transactions.length);
  const sequence = calls.filter((call) => call !== 'select' && call !== 'prebuild');
  t.deepEqual(sequence.slice(2, 6), ['build', 'discardBuilt', 'build', 'importCommitted']);
  const block3Builds = builds.filter((req) => req.timestamp === block2.timestamp + 1n);
  t.is(block3Builds.length, 1, 'the next height runs ahead as usual');
  t.true(block3Builds[0]!.transactions.length < chain.blockAt(3n)!.transactionCount);
});

test('a validator among several hands nothing to the chain ahead of the timer, also where it proposes round 0', async (t) => {
  // The genesis coinbase is zero: block 1's round-0 proposer is the lowest address.
  const low = new Uint8Array(20);
  low[19] = 1;
  const high = new Uint8Array(20).fill(0xff);
  for (const other of [low, high]) {
    const { node, clock, prebuilds } = setup(0, () => 3, [other, VALIDATOR].sort((a, b) => Buffer.compare(a, b)));
    await node.start();
    await clock.runUntil(Number(T0) * 1000 + 2_500);
    await node.stop();
    t.is(prebuilds.length, 0);
  }
});
