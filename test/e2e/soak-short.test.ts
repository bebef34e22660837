/**
 * The two-minute version of the memory soak (bench/soak.ts): a dev node under steady transfers with
 * readers beside them must stop growing once warmed up. The first minute is warm-up (caches fill);
 * over the second, what the threads hold (their heaps right after a collection: the node runs with
 * gc exposed, so each memory report collects first) may grow by a few MB only, and RSS by a generous
 * bound. RSS alone would not do for two minutes: V8's heaps take several minutes to settle at their
 * size, while the live data of a leaking node grows from the start.
 */
import test from 'ava';
import { parseNodeMemory } from '../../src/main/supervisor/memory.js';
import type { NodeMemory } from '../../src/main/supervisor/memory.js';
import { SoakLoad } from '../../bench/lib/soak-load.js';
import { removeDataPath, startNode, tempDataPath } from '../helpers/node-process.js';

/** Modest, so that the test shares CI's two cores with the others; still ~18,000 transfers. */
const RATE = 150;
const READ_RATE = 30;
const MINUTE_MS = 60_000;
const REPORT_SECONDS = 10;
/** Reports from this long before the end of each minute are averaged. */
const AVERAGED_MS = 25_000;
const MB = 1024 * 1024;
/** Live heaps (all threads) may grow this much over the measured minute; a leak of ~1 kB per transfer exceeds it. */
const MAX_LIVE_GROWTH_MB = 10;
/** RSS may grow this much over the measured minute: V8 and malloc still settle, but not by leaps. */
const MAX_RSS_GROWTH_MB = 150;

interface Report {
  atMs: number;
  memory: NodeMemory;
}

test('the memory a node holds levels off under steady load after a minute of warm-up', async (t) => {
  t.timeout(2 * MINUTE_MS + 90_000);
  const dataPath = tempDataPath();
  const node = await startNode({
    dataPath,
    args: ['--rpc-http-workers=1'],
    env: { BASALT_MEMORY_LOG_INTERVAL: String(REPORT_SECONDS), NODE_OPTIONS: [process.env.NODE_OPTIONS, '--expose-gc'].filter(Boolean).join(' ') },
  });
  t.teardown(async () => {
    await node.kill();
    removeDataPath(dataPath);
  });
  const load = await SoakLoad.prepare({ port: node.port, rate: RATE, senders: 10, readRate: READ_RATE, connections: 4, seconds: (2 * MINUTE_MS) / 1000 });
  t.teardown(() => load.stop());

  const started = Date.now();
  load.start();
  await new Promise((resolve) => setTimeout(resolve, MINUTE_MS));
  const warm = load.snapshot();
  await new Promise((resolve) => setTimeout(resolve, MINUTE_MS));
  const end = load.snapshot();
  await load.stop();

  // The load must really have run for the figures to mean anything.
  const sent = end.accepted - warm.accepted;
  const included = end.included - warm.included;
  t.true(sent >= RATE * 60 * 0.5, `only ${sent} transfers were accepted in the measured minute; rejected: ${JSON.stringify(load.rejections())}`);
  t.true(included >= RATE * 60 * 0.5, `only ${included} transfers were included in the measured minute`);
  t.true(end.reads - warm.reads >= READ_RATE * 60 * 0.5, `too few reads were answered: ${JSON.stringify(load.readFailures())}`);

  const reports = memoryReports(node.output(), started);
  const warmReports = reports.filter((r) => r.atMs > MINUTE_MS - AVERAGED_MS && r.atMs <= MINUTE_MS);
  const endReports = reports.filter((r) => r.atMs > 2 * MINUTE_MS - AVERAGED_MS && r.atMs <= 2 * MINUTE_MS);
  t.true(warmReports.length >= 2 && endReports.length >= 2, `too few memory reports: ${reports.map((r) => r.atMs).join(', ')}`);
  const live = (r: Report) => r.memory.threads.reduce((sum, { memory }) => sum + memory.heapUsedBytes, 0) / MB;
  const rss = (r: Report) => r.memory.rssBytes / MB;
  const liveGrowth = mean(endReports.map(live)) - mean(warmReports.map(live));
  const rssGrowth = mean(endReports.map(rss)) - mean(warmReports.map(rss));
  const byThread = (r: Report) => r.memory.threads.map(({ thread, memory }) => `${thread} ${(memory.heapUsedBytes / MB).toFixed(1)}`).join(', ');
  const figures =
    `over the measured minute (${sent} transfers accepted, ${included} included): live heaps ${liveGrowth >= 0 ? '+' : ''}${liveGrowth.toFixed(1)} MB ` +
    `(from ${byThread(warmReports.at(-1)!)} to ${byThread(endReports.at(-1)!)}), RSS ${rssGrowth >= 0 ? '+' : ''}${rssGrowth.toFixed(1)} MB ` +
    `(${mean(warmReports.map(rss)).toFixed(1)} → ${mean(endReports.map(rss)).toFixed(1)})`;
  t.log(figures);
  t.true(liveGrowth < MAX_LIVE_GROWTH_MB, `the threads' live heaps grew past ${MAX_LIVE_GROWTH_MB} MB ${figures}`);
  t.true(rssGrowth < MAX_RSS_GROWTH_MB, `RSS grew past ${MAX_RSS_GROWTH_MB} MB ${figures}`);
});

/** The node's memory lines, timed from `startedAt` by their log timestamps. */
function memoryReports(output: string, startedAt: number): Report[] {
  return output.split('\n').flatMap((line) => {
    const memory = parseNodeMemory(line);
    const atMs = Date.parse(line.slice(0, line.indexOf(' '))) - startedAt;
    return memory === undefined || Number.isNaN(atMs) ? [] : [{ atMs, memory }];
  });
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
