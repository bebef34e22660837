/**
 * Idle memory of a dev node: RSS (its anonymous part, what the node allocated, and the file-backed
 * part, mostly the node binary's pages) and each thread's V8 heap, some seconds after start and again
 * after one eth_call has started the state reader threads. Rounds alternate the builds given, so that
 * a machine's drift weighs on each alike. Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/node-memory.js [--rounds=3] [--settle=15] [--bins=bin/run.js,/tmp/base/bin/run.js]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseNodeMemory, type NodeMemory } from '../src/main/supervisor/memory.js';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { parseFlags } from './lib/args.js';
import { runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';

const flags = parseFlags('dist/bench/node-memory.js', {
  rounds: { default: 3, min: 1, description: 'nodes started per build' },
  settle: { default: 15, min: 2, description: 'seconds between start (or the first eth_call) and the measure' },
  bins: { default: 'bin/run.js', description: "comma-separated bin/run.js of the builds to compare (e.g. a checkout of main's)" },
  'node-args': { default: '', description: "more node options, space-separated (e.g. '--rpc-http-workers=1')" },
  'no-read': { default: false, description: 'measure after start only, without the eth_call that starts the state readers' },
  'max-seconds': { default: 900, min: 10, description: 'ceiling on the whole run' },
});

const MB = 1024 * 1024;

/** One measure of the process: /proc's figures in MB, and the node's own latest memory line. */
interface Measure {
  rssMb: number;
  anonMb: number;
  fileMb: number;
  threads: NodeMemory['threads'];
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const bins = flags.bins.split(',').filter((bin) => bin !== '').map((bin) => resolve(bin));
  const nodeArgs = flags['node-args'].split(' ').filter((arg) => arg !== '');
  const measures = new Map(bins.map((bin) => [bin, { idle: [] as Measure[], afterRead: [] as Measure[] }]));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const bin of bins) {
      log(`round ${round}: ${bin}`);
      const figures = await measureNode(bin, nodeArgs);
      measures.get(bin)!.idle.push(figures.idle);
      if (figures.afterRead) measures.get(bin)!.afterRead.push(figures.afterRead);
    }
  }
  console.log(`\n=== RSS in MB, median [min–max] of ${flags.rounds} nodes, ${flags.settle} s after start${flags['no-read'] ? '' : ' / after the first eth_call'} ===`);
  console.log(`node options: --network=dev --p2p-enabled=false --rpc-http-enabled ${nodeArgs.join(' ')}`);
  const spread = (values: number[]) => `${fixed(median(values))} [${fixed(Math.min(...values))}–${fixed(Math.max(...values))}]`;
  const rows: string[][] = [];
  for (const [bin, { idle, afterRead }] of measures) {
    for (const [when, list] of [['idle', idle], ['after eth_call', afterRead]] as const) {
      if (list.length === 0) continue;
      rows.push([`${bin} ${when}`, spread(list.map((m) => m.rssMb)), spread(list.map((m) => m.anonMb)), spread(list.map((m) => m.fileMb))]);
    }
  }
  printTable(['build', 'RSS', 'anonymous', 'file-backed'], rows);
  for (const [bin, { idle, afterRead }] of measures) {
    const last = afterRead.at(-1) ?? idle.at(-1)!;
    console.log(`\nheap used/total MB per thread, last node of ${bin}${afterRead.length > 0 ? ' (after eth_call)' : ''}:`);
    printTable(
      ['thread', 'heap used', 'heap total', 'external'],
      last.threads.map(({ thread, memory }) => [thread, fixed(memory.heapUsedBytes / MB), fixed(memory.heapTotalBytes / MB), fixed(memory.externalBytes / MB)]),
    );
    const total = last.threads.reduce((sum, { memory }) => sum + memory.heapTotalBytes, 0);
    console.log(`all threads' heap total: ${fixed(total / MB)} MB of ${fixed(last.rssMb)} MB RSS`);
  }
}

async function measureNode(bin: string, args: string[]): Promise<{ idle: Measure; afterRead?: Measure }> {
  let latest: NodeMemory | undefined;
  const node = await startBenchNode({
    args,
    bin,
    env: { BASALT_MEMORY_LOG_INTERVAL: '2' },
    onLine: (line) => (latest = parseNodeMemory(line) ?? latest),
  });
  try {
    const measure = async (): Promise<Measure> => {
      await sleep(flags.settle * 1000);
      const rollup = readFileSync(`/proc/${node.pid}/smaps_rollup`, 'latin1');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? Number.NaN);
      const rssMb = kb('Rss') / 1024;
      const anonMb = kb('Anonymous') / 1024;
      return { rssMb, anonMb, fileMb: rssMb - anonMb, threads: latest?.threads ?? [] };
    };
    const idle = await measure();
    log(`  idle RSS ${fixed(idle.rssMb)} MB (anonymous ${fixed(idle.anonMb)}); heap totals MB: ${heapTotals(idle)}`);
    if (flags['no-read']) return { idle };
    await rpc(node.url, 'eth_call', [{ to: DEV_ACCOUNTS[0]!.address, data: '0x' }, 'latest']);
    const afterRead = await measure();
    log(`  after eth_call RSS ${fixed(afterRead.rssMb)} MB (anonymous ${fixed(afterRead.anonMb)}); heap totals MB: ${heapTotals(afterRead)}`);
    return { idle, afterRead };
  } finally {
    await node.stop();
  }
}

function heapTotals(measure: Measure): string {
  return measure.threads.map(({ thread, memory }) => `${thread} ${fixed(memory.heapTotalBytes / MB)}`).join(', ');
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
