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
 * What an isolate's "short builtin calls" (direct calls from compiled code to V8's embedded builtins)
 * leave in this process's mappings. Where the isolate's code range lies beyond a 32-bit displacement
 * from the node binary's code (the usual case), V8 maps a copy of the builtins next to it: a mapping
 * of the binary at a high address (the binary itself is mapped low, at its link address), or, where it
 * cannot map the file again, anonymous memory of the same size that it copies them into. Where the
 * code range was placed within reach of the binary (V8 asks for such a place first; on some machines
 * and some runs it gets it), no copy is needed. Either way the isolate calls its builtins directly.
 * The test that counts them is serial: the other tests of this file start workers of their own.
 */
const CODE_RANGE_MIN = 256 * 1024 * 1024;
/** An x64 isolate's code range (the reserved part of it shows as one inaccessible mapping, or two adjacent ones merged). */
const CODE_RANGE = 512 * 1024 * 1024;

interface Mapping { start: number; end: number; perms: string; path: string }

function mappings(): Mapping[] {
  return readFileSync('/proc/self/maps', 'latin1')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [range, perms, , , , path] = line.split(/\s+/);
      const [start, end] = range!.split('-').map((hex) => parseInt(hex, 16));
      return { start: start!, end: end!, perms: perms!, path: path ?? '' };
    });
}

/** Copies of the builtins, and code ranges reserved within a 32-bit displacement of the binary's code. */
function shortCallLayouts(): { copies: number; nearCodeRanges: number } {
  const all = mappings();
  const binaryCode = all.filter((m) => m.path === process.execPath && m.perms === 'r-xp');
  const low = binaryCode.filter((m) => m.start < 2 ** 40);
  const reach = { from: Math.min(...low.map((m) => m.start)) - 2 ** 31, to: Math.max(...low.map((m) => m.end)) + 2 ** 31 };
  const copySizes = new Set(binaryCode.filter((m) => m.start >= 2 ** 40).map((m) => m.end - m.start));
  return {
    copies: all.filter((m) => m.perms === 'r-xp' && m.start >= 2 ** 40 && (m.path === process.execPath || (m.path === '' && copySizes.has(m.end - m.start)))).length,
    nearCodeRanges: all
      .filter((m) => m.path === '' && m.perms === '---p' && m.end - m.start >= CODE_RANGE_MIN && m.start >= reach.from && m.end <= reach.to)
      .reduce((ranges, m) => ranges + Math.max(1, Math.round((m.end - m.start) / CODE_RANGE)), 0),
  };
}

/** How many of two new isolates started with these limits got a copy of the builtins, and how many need none. */
async function layoutsAddedBy(resourceLimits: ResourceLimits): Promise<{ copies: number; nearCodeRanges: number }> {
  const before = shortCallLayouts();
  const workers = [0, 1].map(() => new Worker('require("node:worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1e6);', { eval: true, resourceLimits }));
  try {
    await Promise.all(workers.map((worker) => new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject))));
    const after = shortCallLayouts();
    return { copies: after.copies - before.copies, nearCodeRanges: after.nearCodeRanges - before.nearCodeRanges };
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

test.serial("actors that run no EVM get no copy of V8's builtins (~0.75 MB each); the chain and the state readers call them directly", async (t) => {
  t.is((await layoutsAddedBy(actorResourceLimits('txpool'))).copies, 0, 'pool');
  t.is((await layoutsAddedBy(actorResourceLimits('transport'))).copies, 0, 'transport');
  for (const actor of ['chain', 'reader'] as const) {
    const { copies, nearCodeRanges } = await layoutsAddedBy(actorResourceLimits(actor));
    t.log(`${actor}: ${copies} copies, ${nearCodeRanges} code ranges within reach of the binary`);
    t.is(copies + nearCodeRanges, 2, `${actor}: V8 no longer gives large heaps short builtin calls, and the limit saves nothing`);
  }
});
