/**
 * BlockPrebuilder.catchUp, the build at the timer taking in what arrives while it runs, against a fake
 * pool and chain on a clock the test moves: the chain takes time per transaction and transactions
 * arrive on a schedule, so each round sees what arrived while the round before ran.
 */
import test from 'ava';
import { BlockPrebuilder } from '../../src/consensus/block-prebuilder.js';
import type { PrebuildHandover } from '../../src/consensus/block-prebuilder.js';
import type { Scheduler } from '../../src/consensus/runner.js';
import type { PoolTxForBlock, PrebuildRequest } from '../../src/shared/actors/messages.js';

const PARENT = new Uint8Array(32).fill(7);
const SELF = new Uint8Array(20).fill(1);
const MAX_BUILD_MS = 750;

interface Scenario {
  /** When each transaction becomes selectable, in ms on the test's clock: pool order. */
  arrivals: number[];
  /** How long the chain takes per transaction. */
  execMs: number;
  /** A transaction is "being admitted" this long before it becomes selectable. */
  admissionMs: number;
  /** The chain's answer to every prebuild, instead of what it holds (a chain that ignores them). */
  chainAnswers?: number;
}

const tx = (i: number): PoolTxForBlock => ({ raw: Uint8Array.of(0xaa, i >> 8, i & 0xff), hash: Uint8Array.of(i >> 8, i & 0xff), senderPublicKey: new Uint8Array(64) });
const index = (t: PoolTxForBlock) => (t.hash[0]! << 8) | t.hash[1]!;

/** The timer fires at `start`; `executedAhead` transactions ran before it (pool order). */
function setup(scenario: Scenario, start: number, executedAhead: number) {
  let now = start;
  const clock: Scheduler = {
    now: () => now,
    at: (atMs, fn) => {
      const timer = setImmediate(() => {
        now = Math.max(now, atMs);
        fn();
      });
      return () => clearImmediate(timer);
    },
  };
  const prebuilds: (PrebuildRequest & { at: number })[] = [];
  const held: number[] = Array.from({ length: executedAhead }, (_, i) => i);
  const prebuilder = new BlockPrebuilder(
    {
      selectTransactions: async ({ fromSequence = 0 }) => {
        const arrived = scenario.arrivals.filter((at) => at <= now).length;
        const admitting = scenario.arrivals.filter((at) => at > now && at <= now + scenario.admissionMs).length;
        return { transactions: Array.from({ length: Math.max(0, arrived - fromSequence) }, (_, k) => tx(fromSequence + k)), nextSequence: arrived, admitting };
      },
      prebuild: async (req) => {
        prebuilds.push({ ...req, at: now });
        const deadline = req.maxBuildMs === undefined ? Infinity : now + req.maxBuildMs;
        for (const candidate of req.transactions) {
          if (now > deadline) break;
          now += scenario.execMs;
          held.push(index(candidate));
        }
        return scenario.chainAnswers ?? held.length;
      },
    },
    clock,
    SELF,
    () => ({ maxCount: 20_000, gasLimit: 1n << 50n }),
    (err) => {
      throw err;
    },
  );
  const handover: PrebuildHandover = { parentHash: PARENT, timestamp: 1n, executed: executedAhead, fromSequence: executedAhead, queued: [] };
  return { prebuilder, handover, prebuilds, held, now: () => now };
}

/** `count` transactions, one every `everyMs` from `from`. */
const steady = (count: number, everyMs: number, from = 0) => Array.from({ length: count }, (_, i) => from + i * everyMs);

test('what arrives while the block at the timer runs joins it, round after round, until the pool has nothing new', async (t) => {
  // 400 transactions over 400 ms, each admitted over 5 ms; the timer fires at 150 ms with 100 run
  // ahead; the chain runs twice as fast as they come.
  const { prebuilder, handover, prebuilds, held, now } = setup({ arrivals: steady(400, 1), execMs: 0.5, admissionMs: 5 }, 150, 100);
  const result = await prebuilder.catchUp(handover, MAX_BUILD_MS);
  t.deepEqual(result?.executed, 400, 'every transaction, also those that came after the timer');
  t.true(result!.rounds > 2, `${result!.rounds} rounds`);
  t.deepEqual(held, Array.from({ length: 400 }, (_, i) => i), 'each once, in pool order');
  t.true(prebuilds.every((req) => req.maxBuildMs !== undefined && req.maxBuildMs <= MAX_BUILD_MS), 'every round bounded by what is left of the build time');
  t.true(prebuilds.every((req) => req.coinbase === SELF && req.timestamp === 1n && req.parentHash === PARENT));
  t.true(now() < 150 + MAX_BUILD_MS, 'ended when the pool had nothing new, before the build time was spent');
});

test('a pause between arrivals ends the rounds only when the pool is admitting nothing', async (t) => {
  // 100 transactions, a 30 ms pause, 100 more; the timer at 50 ms.
  const arrivals = [...steady(100, 1), ...steady(100, 1, 130)];
  const admitted = setup({ arrivals, execMs: 0.1, admissionMs: 40 }, 50, 20);
  const waited = await admitted.prebuilder.catchUp(admitted.handover, MAX_BUILD_MS);
  t.is(waited?.executed, 200, 'the second hundred were being admitted during the pause: the rounds waited for them');
  const quiet = setup({ arrivals, execMs: 0.1, admissionMs: 5 }, 50, 20);
  const ended = await quiet.prebuilder.catchUp(quiet.handover, MAX_BUILD_MS);
  t.is(ended?.executed, 100, 'nothing was being admitted: the block ended with the first hundred');
  t.true(quiet.now() < 130);
});

test('a burst that outpaces execution joins the block whole when it has run within the build time', async (t) => {
  // Two transactions per ms for 500 ms, the chain takes 0.6 ms each; the timer at 100 ms finds 200 not yet run.
  const { prebuilder, handover, prebuilds, held, now } = setup({ arrivals: steady(1000, 0.5), execMs: 0.6, admissionMs: 5 }, 100, 0);
  const result = await prebuilder.catchUp(handover, MAX_BUILD_MS);
  t.is(result?.executed, 1000, 'every transaction of the burst, also those that came while the chain was behind');
  t.deepEqual(held, Array.from({ length: 1000 }, (_, i) => i), 'each once, in pool order');
  t.true(prebuilds.every((req) => req.transactions.length <= 256), 'at most 256 per request to the chain');
  t.true(prebuilds.some((req) => req.transactions.length === 256), 'a round larger than that was split');
  t.true(result!.rounds > 1 && result!.rounds < prebuilds.length, `${result!.rounds} rounds in ${prebuilds.length} requests: a split round counts once`);
  t.true(now() < 100 + MAX_BUILD_MS, `ended at ${now()}, when the burst had run`);
});

test('arrivals that outpace execution for good fill the block until the build time is spent', async (t) => {
  // Two per ms for 1.5 s and the chain takes 1 ms each: it falls further behind every round.
  const { prebuilder, handover, held, now } = setup({ arrivals: steady(3000, 0.5), execMs: 1, admissionMs: 5 }, 200, 0);
  const result = await prebuilder.catchUp(handover, MAX_BUILD_MS);
  t.true(now() >= 200 + MAX_BUILD_MS && now() <= 200 + MAX_BUILD_MS + 1, `ended at ${now()}`);
  t.true(result!.executed >= 740 && result!.executed <= 752, `${result!.executed} in the block`);
  t.deepEqual(held, Array.from({ length: result!.executed }, (_, i) => i), 'a prefix of pool order');
});

test('the build time bounds the rounds', async (t) => {
  // An endless stream the chain keeps up with.
  const { prebuilder, handover, now } = setup({ arrivals: steady(20_000, 0.5), execMs: 0.25, admissionMs: 5 }, 100, 200);
  const result = await prebuilder.catchUp(handover, MAX_BUILD_MS);
  t.true(now() >= 100 + MAX_BUILD_MS && now() <= 100 + MAX_BUILD_MS + 1, `ended at ${now()}`);
  t.true(result!.executed < 20_000 && result!.executed > 1_500, `${result!.executed} in the block`);
});

test('a round the chain does not take into the block ends the catch-up with no answer', async (t) => {
  const { prebuilder, handover } = setup({ arrivals: steady(300, 1), execMs: 0.5, admissionMs: 5, chainAnswers: 0 }, 150, 100);
  t.is(await prebuilder.catchUp(handover, MAX_BUILD_MS), undefined, 'the build then starts again from the whole pool');
});
