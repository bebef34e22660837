/**
 * Worker threads start with a small young generation (src/shared/util/memory-limits.ts): V8 keeps it at
 * that size under allocation churn, where a thread with V8's default grows it several times larger, and
 * the piscina pools' threads get it too.
 */
import test from 'ava';
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { actorResourceLimits, WORKER_RESOURCE_LIMITS, WORKER_YOUNG_GENERATION_MB } from '../../src/shared/util/memory-limits.js';
import { TaskPool } from '../../src/shared/util/task-pool.js';
import type threadLimits from '../helpers/tasks/thread-limits.task.js';

const MB = 1024 * 1024;

/**
 * Allocates short-lived objects with a third surviving a while (as decoded transactions and RPC answers
 * do), then answers with the size of its new space.
 */
const CHURN = `
const { getHeapSpaceStatistics } = require('node:v8');
const { parentPort } = require('node:worker_threads');
let kept = [];
for (let i = 0; i < 3e6; i++) {
  const o = { n: i, pair: [i, i + 1], text: 'x' + i };
  if (i % 3 === 0) kept.push(o);
  if (kept.length > 200000) kept = [];
}
parentPort.postMessage(getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
`;

async function newSpaceAfterChurn(resourceLimits?: ResourceLimits): Promise<number> {
  const worker = new Worker(CHURN, { eval: true, ...(resourceLimits ? { resourceLimits } : {}) });
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  } finally {
    await worker.terminate();
  }
}

test('a worker started with the node limits keeps its young generation within them under churn; V8 default lets it grow larger', async (t) => {
  t.timeout(60_000);
  const limited = await newSpaceAfterChurn(WORKER_RESOURCE_LIMITS);
  const unlimited = await newSpaceAfterChurn();
  t.true(limited <= WORKER_YOUNG_GENERATION_MB * MB, `new space ${limited / MB} MB`);
  t.true(unlimited > WORKER_YOUNG_GENERATION_MB * MB, `with V8's default the new space stayed at ${unlimited / MB} MB: the churn no longer tells the limit apart`);
});

test("piscina threads run with the node's worker limits unless the pool asks for others", async (t) => {
  const entry = new URL('../helpers/tasks/thread-limits.task.js', import.meta.url);
  const pool = new TaskPool<typeof threadLimits>(entry, { maxThreads: 1 });
  const own = new TaskPool<typeof threadLimits>(entry, { maxThreads: 1, resourceLimits: { maxYoungGenerationSizeMb: 24 } });
  t.teardown(() => Promise.all([pool.destroy(), own.destroy()]));
  t.is((await pool.run(null)).maxYoungGenerationSizeMb, WORKER_YOUNG_GENERATION_MB);
  t.is((await own.run(null)).maxYoungGenerationSizeMb, 24);
});

/**
 * Mappings of the node binary at high addresses: the copies of V8's embedded builtins that isolates with
 * "short builtin calls" map next to their code (the binary itself is mapped low, at its link address).
 * The test that counts them is serial: the other tests of this file start workers of their own.
 */
function builtinCopies(): number {
  return readFileSync('/proc/self/maps', 'latin1')
    .split('\n')
    .filter((line) => line.endsWith(process.execPath) && line.includes(' r-xp ') && parseInt(line.split('-')[0]!, 16) > 2 ** 40).length;
}

async function copiesAddedBy(resourceLimits: ResourceLimits): Promise<number> {
  const before = builtinCopies();
  const workers = [0, 1].map(() => new Worker('require("node:worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1e6);', { eval: true, resourceLimits }));
  try {
    await Promise.all(workers.map((worker) => new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject))));
    return builtinCopies() - before;
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

test.serial("actors that run no EVM get no copy of V8's builtins (~0.75 MB each); the chain and the state readers do", async (t) => {
  t.is(await copiesAddedBy(actorResourceLimits('txpool')), 0, 'pool');
  t.is(await copiesAddedBy(actorResourceLimits('transport')), 0, 'transport');
  t.is(await copiesAddedBy(actorResourceLimits('chain')), 2, 'chain: V8 no longer copies its builtins for large heaps, and the limit saves nothing');
  t.is(await copiesAddedBy(actorResourceLimits('reader')), 2, 'state reader');
});
