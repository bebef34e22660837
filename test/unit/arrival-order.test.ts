/**
 * ArrivalOrder: jobs from several MessagePorts run one at a time in the order they arrived, and a port
 * whose sender keeps it busy (each answer brings its next request, as a transport's connections do)
 * does not hold back another port's message for more than a turn.
 */
import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { ArrivalOrder } from '../../src/shared/util/arrival-order.js';

const busy = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/**
 * Port A carries a run of `chain` requests, each sent when the previous one is answered; port B one
 * request sent with A's first. Answers which of A's requests B's came after, and whether jobs overlapped.
 */
async function race(serve: (job: () => Promise<void>) => Promise<void>): Promise<{ bAfter: number; overlapped: boolean; order: string[] }> {
  const a = new MessageChannel();
  const b = new MessageChannel();
  const order: string[] = [];
  let running = 0;
  let overlapped = false;
  const chain = 300;
  const done = new Promise<void>((resolve) => {
    let remaining = chain + 1;
    const handle = (name: string, reply: () => void) => (value: number) => {
      void serve(async () => {
        running += 1;
        if (running > 1) overlapped = true;
        busy(0.2);
        await Promise.resolve();
        order.push(`${name}${value}`);
        running -= 1;
      }).then(() => {
        reply();
        if (--remaining === 0) resolve();
      });
    };
    let next = 1;
    a.port2.on('message', handle('a', () => next < chain && a.port1.postMessage(next++)));
    b.port2.on('message', handle('b', () => undefined));
  });
  a.port1.postMessage(0);
  b.port1.postMessage(0);
  await done;
  a.port1.close();
  b.port1.close();
  return { bAfter: order.indexOf('b0'), overlapped, order };
}

test('a busy port does not hold back another port: jobs run in arrival order, one at a time', async (t) => {
  const arrivals = new ArrivalOrder();
  const { bAfter, overlapped, order } = await race((job) => arrivals.run(job));
  t.false(overlapped);
  t.true(bAfter >= 0 && bAfter < 20, `B's request ran after ${bAfter} of A's (a turn is 2 ms, A's jobs 0.2 ms each)`);
  const aOrder = order.filter((name) => name.startsWith('a')).map((name) => Number(name.slice(1)));
  t.deepEqual(aOrder, [...aOrder].sort((x, y) => x - y), "A's requests in the order they were sent");
});

test('a failing job rejects its own promise only', async (t) => {
  const arrivals = new ArrivalOrder();
  const failing = arrivals.run(async () => {
    throw new Error('no such block');
  });
  const next = arrivals.run(async () => 42);
  await t.throwsAsync(failing, { message: 'no such block' });
  t.is(await next, 42);
});
