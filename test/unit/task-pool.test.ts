/**
 * OnDemandTaskPool (the transaction decoders' pool): no thread before the first task, then all its
 * threads started together, retired together once idle, and started again by the next task. And how
 * many threads the pools beside the chain run.
 */
import test from 'ava';
import { OnDemandTaskPool, threadsBesideChain } from '../../src/shared/util/task-pool.js';
import type threadIdAfter from '../helpers/tasks/thread-id.task.js';

const ENTRY = new URL('../helpers/tasks/thread-id.task.js', import.meta.url);

async function until(what: string, done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('the first task starts every thread; they retire together when idle and start again on the next task', async (t) => {
  const pool = new OnDemandTaskPool<typeof threadIdAfter>(ENTRY, { threads: 2, idleMs: 300, name: 'task pool' });
  t.teardown(() => pool.destroy());
  t.is(pool.threadCount, 0, 'no thread before the first task');

  const first = await pool.run(0);
  t.is(pool.threadCount, 2, 'the first task started both threads, not one');

  // Two tasks at once run side by side in the two threads; one outlasting the idle time is not cut short.
  const [a, b] = await Promise.all([pool.run(600), pool.run(50)]);
  t.not(a, b);
  t.true([a, b].includes(first));

  await until('the idle threads to retire', () => pool.threadCount === 0);
  const again = await pool.run(0);
  t.false([a, b].includes(again), 'a new thread after retirement');
  t.is(pool.threadCount, 2);

  await pool.destroy();
  await t.throwsAsync(() => pool.run(0), { message: 'the task pool is closed' });
  t.is(pool.threadCount, 0, 'a task after destroy starts no thread');
});

test("pools beside the chain run one thread per core but the chain's, and one at least", (t) => {
  t.deepEqual([1, 2, 3, 4, 8, 16].map(threadsBesideChain), [1, 1, 2, 3, 7, 15]);
});
