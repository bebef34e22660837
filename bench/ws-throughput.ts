/**
 * JSON-RPC throughput of the node's WebSocket transport: eth_blockNumber messages per second at
 * `--connections` (4) connections × `--inflight` (16) requests in flight, against a node with 1 and
 * then 2 transport worker threads, next to a bare uWebSockets.js WebSocket server answering a fixed
 * body (the transport's ceiling on this machine). Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/ws-throughput.js [--seconds=5] [--workers=1,2]
 */
import { fork } from 'node:child_process';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { CpuMeter, MachineMeter, ownCpuMsSince } from './lib/proc.js';
import { summarizeLatencies } from './lib/stats.js';
import { runWsLoad } from './lib/ws-load.js';

const BARE_TARGET = 'bare uWS WebSocket';

const flags = parseFlags('dist/bench/ws-throughput.js', {
  connections: { default: 4, min: 1, description: 'WebSocket connections' },
  inflight: { default: 16, min: 1, description: 'requests in flight on each connection' },
  seconds: { default: 5, min: 1, description: 'measured duration of each run' },
  warmup: { default: 1, min: 0, description: 'unmeasured seconds of load before each run' },
  workers: { default: '1,2', description: 'comma-separated --rpc-http-workers values (transport threads) to measure' },
  'skip-baseline': { default: false, description: 'do not measure the bare uWS server' },
  'cpu-prof-dir': { default: '', description: 'run the nodes with --cpu-prof, profiles into this directory' },
  'max-seconds': { default: 300, min: 10, description: 'ceiling on the whole run' },
});

interface Measurement {
  target: string;
  messagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  serverCpu: number;
  generatorCpu: number;
  /** CPU others used on the machine meanwhile, % of one core: a run with much of it is disturbed. */
  othersCpu: number;
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const workerCounts = flags.workers.split(',').map((w) => Number(w.trim()));
  if (workerCounts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--workers must list positive integers, got ${flags.workers}`);
  log(`load: ${flags.connections} connections × ${flags.inflight} in flight, eth_blockNumber, ${flags.seconds} s per run after ${flags.warmup} s warm-up`);
  const results: Measurement[] = [];

  if (!flags['skip-baseline']) {
    const bare = await startBareServer();
    try {
      results.push(await measure(`ws://127.0.0.1:${bare.port}`, BARE_TARGET, bare.pid));
    } finally {
      await bare.stop();
    }
  }
  for (const workers of workerCounts) {
    const target = `node, ${workers} transport thread${workers > 1 ? 's' : ''}`;
    log(`starting a dev node with --rpc-ws-enabled --rpc-http-workers=${workers}`);
    const node = await startBenchNode({
      args: ['--rpc-ws-enabled', `--rpc-http-workers=${workers}`],
      cpuProfileDir: flags['cpu-prof-dir'] || undefined,
    });
    try {
      results.push(await measure(node.wsUrl!, target, node.pid));
    } finally {
      await node.stop();
    }
  }

  console.log(`\n=== summary (${flags.connections} connections × ${flags.inflight} in flight, ${flags.seconds} s each) ===`);
  printTable(
    ['target', 'msg/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU', 'generator CPU', 'others CPU'],
    results.map((r) => [
      r.target,
      fixed(r.messagesPerSecond, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(r.errors),
      `${fixed(r.serverCpu, 0)}%`,
      `${fixed(r.generatorCpu, 0)}%`,
      `${fixed(r.othersCpu, 0)}%`,
    ]),
  );
  const baseline = results.find((r) => r.target === BARE_TARGET);
  for (const r of results.filter((m) => m.target !== BARE_TARGET)) {
    if (baseline) console.log(`${r.target} / bare uWS WebSocket = ${fixed(r.messagesPerSecond / baseline.messagesPerSecond, 3)}`);
  }
  console.log('(CPU figures are % of one core; the machine has 2 cores shared by the generator, the server and, "others", anything else that ran)');
}

async function measure(url: string, target: string, serverPid: number): Promise<Measurement> {
  const request = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`;
  const load = { url, connections: flags.connections, inflight: flags.inflight, request };
  if (flags.warmup > 0) await runWsLoad({ ...load, durationMs: flags.warmup * 1000 });
  const serverCpu = new CpuMeter(serverPid);
  const machine = new MachineMeter();
  const generatorStart = process.cpuUsage();
  const run = await runWsLoad({ ...load, durationMs: flags.seconds * 1000 });
  const generatorCpuMs = ownCpuMsSince(generatorStart);
  const latency = summarizeLatencies(run.latencies);
  const m: Measurement = {
    target,
    messagesPerSecond: (run.answered * 1000) / run.wallMs,
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    errors: run.errors,
    serverCpu: serverCpu.percentOfOneCore(),
    generatorCpu: (generatorCpuMs / run.wallMs) * 100,
    othersCpu: 0,
  };
  m.othersCpu = Math.max(0, machine.busyCores() * 100 - m.serverCpu - m.generatorCpu);
  log(`${target}: ${fixed(m.messagesPerSecond, 0)} msg/s, p50 ${fixed(m.p50Ms, 2)} ms, p99 ${fixed(m.p99Ms, 2)} ms, errors ${m.errors}, server CPU ${fixed(m.serverCpu, 0)}%, generator CPU ${fixed(m.generatorCpu, 0)}%, others ${fixed(m.othersCpu, 0)}%`);
  return m;
}

/** Starts bare-uws-ws-server.js as a child process on a free port. */
async function startBareServer(): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const child = fork(new URL('./bare-uws-ws-server.js', import.meta.url).pathname, ['0'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    unregister();
  };
  const unregister = onCleanup(`bare uWS WebSocket server pid ${child.pid}`, stop);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the bare uWS WebSocket server did not start within 10 s')), 10_000);
    child.once('message', (message: { listening?: number; error?: string }) => {
      clearTimeout(timer);
      if (message.listening !== undefined) resolve(message.listening);
      else reject(new Error(message.error ?? `unexpected message: ${JSON.stringify(message)}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the bare uWS WebSocket server exited with ${code}`));
    });
  });
  log(`bare uWS WebSocket server pid ${child.pid} on port ${port}`);
  return { port, pid: child.pid!, stop };
}
