/**
 * Memory soak: a dev node under steady load for an hour (default), its RSS and each thread's heap
 * printed every minute. Passes when RSS grew less than `--max-growth` % over the last `--window`
 * minutes (at most half the run), i.e. when memory levelled off after warm-up; exits 1 otherwise.
 *
 *   npm run build && node dist/bench/soak.js [--minutes=60] [--rate=300] [--senders=30] [--read-rate=50]
 */
import { createWriteStream } from 'node:fs';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { readRssKb } from './lib/proc.js';
import { SoakLoad } from './lib/soak-load.js';
import type { SoakCounters } from './lib/soak-load.js';
import { parseNodeMemory } from '../src/main/supervisor/memory.js';

const flags = parseFlags('dist/bench/soak.js', {
  minutes: { default: 60, min: 2, description: 'length of the load' },
  rate: { default: 300, min: 1, description: 'transfers per second' },
  senders: { default: 30, min: 1, description: 'funded accounts sending them, in turn' },
  'read-rate': { default: 50, min: 0, description: 'eth_getBalance + eth_getBlockByNumber requests per second beside them' },
  connections: { default: 8, min: 1, description: 'connections carrying the transfers' },
  window: { default: 30, min: 1, description: 'minutes at the end over which growth is judged (at most half the run)' },
  'max-growth': { default: 5, min: 0, description: 'pass when RSS grew less than this many % over the window' },
  'p2p-disabled': { default: false, description: 'run the node with --p2p-enabled=false (default: devp2p on, as a node runs by default, on a free loopback port and without peers)' },
  'node-log': { default: '', description: "write everything the node prints into this file (for a run that fails)" },
  'memory-lines': { default: false, description: "also print the node's own memory lines (heap totals included)" },
  'rpc-http-workers': { default: 0, min: 0, description: 'node HTTP worker threads (0: the node default)' },
  'max-seconds': { default: 0, min: 0, description: 'ceiling on the whole run (0: the load time plus 10 minutes)' },
});

const MB = 1024 * 1024;
/** RSS is sampled this often; a minute's figure is the mean of its samples, which smooths GC saw-teeth. */
const SAMPLE_MS = 5_000;

/** MB. */
interface ThreadFigures {
  heapUsed: number;
  external: number;
}

interface MinuteFigures {
  minute: number;
  meanRssKb: number;
  counters: SoakCounters;
  /** Per thread, from the node's latest memory line. */
  heapsMb: Map<string, ThreadFigures>;
}

runBenchmark(main, flags['max-seconds'] || flags.minutes * 60 + 600);

async function main(): Promise<void> {
  let latestHeaps = new Map<string, ThreadFigures>();
  const workers = flags['rpc-http-workers'];
  log(`starting a dev node that logs its memory every minute`);
  const nodeLog = flags['node-log'] ? createWriteStream(flags['node-log']) : undefined;
  if (nodeLog) onCleanup('node log', () => new Promise<void>((resolve) => nodeLog.end(resolve)));
  const node = await startBenchNode({
    args: workers > 0 ? [`--rpc-http-workers=${workers}`] : [],
    p2p: !flags['p2p-disabled'],
    // With gc exposed, each memory report collects garbage first: heap used is what a thread holds.
    env: { BASALT_MEMORY_LOG_INTERVAL: '60', NODE_OPTIONS: [process.env.NODE_OPTIONS, '--expose-gc'].filter(Boolean).join(' ') },
    onLine: (line) => {
      nodeLog?.write(`${line}\n`);
      const memory = parseNodeMemory(line);
      if (!memory) return;
      latestHeaps = new Map(memory.threads.map(({ thread, memory: m }) => [thread, { heapUsed: m.heapUsedBytes / MB, external: m.externalBytes / MB }]));
      if (flags['memory-lines']) console.log(`  node: ${line.slice(line.indexOf('Memory: '))}`);
    },
  });
  log(`node pid ${node.pid} on ${node.url}; funding ${flags.senders} senders`);
  const load = await SoakLoad.prepare({
    port: node.port,
    rate: flags.rate,
    senders: flags.senders,
    readRate: flags['read-rate'],
    connections: flags.connections,
    seconds: flags.minutes * 60,
  });
  onCleanup('soak load', () => load.stop());
  log(`funded; ${flags.rate} transfers/s and ${flags['read-rate']} reads/s for ${flags.minutes} minutes`);
  load.start();

  const minutes: MinuteFigures[] = [];
  let previous = load.snapshot();
  printMinuteHeader();
  for (let minute = 1; minute <= flags.minutes; minute++) {
    const samples: number[] = [];
    const minuteEnds = performance.now() + 60_000;
    while (performance.now() < minuteEnds) {
      await sleep(Math.min(SAMPLE_MS, minuteEnds - performance.now()));
      const kb = readRssKb(node.pid);
      if (kb === undefined) throw new Error(`the node (pid ${node.pid}) is gone:\n${node.output().split('\n').slice(-20).join('\n')}`);
      samples.push(kb);
    }
    const counters = load.snapshot();
    const figures: MinuteFigures = {
      minute,
      meanRssKb: samples.reduce((a, b) => a + b, 0) / samples.length,
      counters,
      heapsMb: latestHeaps,
    };
    printMinute(figures, minutes[minutes.length - 1], previous);
    minutes.push(figures);
    previous = counters;
  }
  await load.stop();

  const total = load.snapshot();
  console.log('\n=== summary ===');
  log(
    `${total.accepted} transfers accepted, ${total.included} included, ${total.rejected} rejected, ${total.missed} not sent in time, ` +
      `${total.transportErrors} unanswered; ${total.reads} reads, ${total.readErrors} failed`,
  );
  for (const [message, count] of load.rejections().slice(0, 5)) log(`  rejected ${count}× "${message}"`);
  for (const [message, count] of load.readFailures().slice(0, 5)) log(`  read failed ${count}× "${message}"`);

  const window = Math.min(flags.window, Math.floor(flags.minutes / 2));
  const from = minutes[minutes.length - 1 - window]!;
  const to = minutes[minutes.length - 1]!;
  const growth = ((to.meanRssKb - from.meanRssKb) / from.meanRssKb) * 100;
  const threadGrowth = [...to.heapsMb].map(([thread, now]) => {
    const before = from.heapsMb.get(thread);
    return `${thread} ${before === undefined ? '?' : threadCell(before)} → ${threadCell(now)}`;
  });
  log(`live heap + external (MB) from minute ${from.minute} to ${to.minute}: ${threadGrowth.join(', ')}`);
  const verdict = growth < flags['max-growth'] ? 'PASS' : 'FAIL';
  log(
    `${verdict}: RSS (minute mean) ${fixed(from.meanRssKb / 1024)} MB at minute ${from.minute} → ${fixed(to.meanRssKb / 1024)} MB at minute ${to.minute}: ` +
      `${growth >= 0 ? '+' : ''}${fixed(growth, 2)} % over the last ${window} minutes (limit ${flags['max-growth']} %)`,
  );
  await node.stop();
  if (verdict === 'FAIL') throw new Error(`RSS grew ${fixed(growth, 2)} % over the last ${window} minutes`);
}

const COLUMNS = ['min', 'RSS MB', 'Δ MB', 'sent/s', 'included/s', 'missed', 'rejected', 'reads/s', 'heaps MB', 'per thread: live heap + external MB'];

function printMinuteHeader(): void {
  printTable(COLUMNS, []);
}

function printMinute(figures: MinuteFigures, before: MinuteFigures | undefined, previous: SoakCounters): void {
  const c = figures.counters;
  const heaps = [...figures.heapsMb].map(([thread, f]) => `${thread} ${threadCell(f)}`).join(', ');
  const cells = [
    String(figures.minute),
    fixed(figures.meanRssKb / 1024),
    before === undefined ? '' : `${figures.meanRssKb >= before.meanRssKb ? '+' : ''}${fixed((figures.meanRssKb - before.meanRssKb) / 1024)}`,
    fixed((c.accepted - previous.accepted) / 60),
    fixed((c.included - previous.included) / 60),
    String(c.missed - previous.missed),
    String(c.rejected - previous.rejected),
    fixed((c.reads - previous.reads) / 60),
    fixed([...figures.heapsMb.values()].reduce((sum, f) => sum + f.heapUsed, 0)),
    heaps,
  ];
  const widths = COLUMNS.map((h) => h.length);
  console.log(cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padStart(widths[i]!))).join('  '));
}

function threadCell(f: ThreadFigures): string {
  return `${fixed(f.heapUsed)}+${fixed(f.external)}`;
}


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
