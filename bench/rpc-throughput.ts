/**
 * JSON-RPC throughput of the node's HTTP transport: eth_blockNumber, eth_getBalance and eth_call,
 * each for a fixed time at a fixed concurrency, against a node with 1 and then 2 HTTP worker threads,
 * next to a bare uWebSockets.js server answering a fixed body (the transport's ceiling). Prints
 * figures; asserts nothing.
 *
 * With `--reader-threads=0,1,2` each node is measured with that many state reader threads
 * (`--Xstate-reader-threads`: eth_call and eth_getBalance leave the chain thread); with
 * `--compare-build=/work/main` another checkout's build is measured beside this one, in the same run;
 * with `--rounds=N` the targets are measured N times in turn and each figure's spread is printed.
 *
 * With `--metrics=off,on` each node is measured without and then with `--metrics-enabled` (scraped
 * every second during the run, more often than a Prometheus server would): the cost of metrics.
 *
 *   npm run build && node dist/bench/rpc-throughput.js [--concurrency=64] [--seconds=5] [--wrk] [--metrics=off,on]
 */
import { fork } from 'node:child_process';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { jsonPostRequest, rpcBody, RpcClient, runClosedLoop } from './lib/http-client.js';
import { CpuMeter, ownCpuMsSince } from './lib/proc.js';
import { deployStoreAndLog, deployToken } from './lib/contracts.js';
import { tokenBalanceOfCallData } from '../test/helpers/contracts.js';
import { LatencyRecorder, summarizeLatencies } from './lib/stats.js';
import { accountFromKey, signingCommon, signTx } from './lib/signing.js';
import { runWrk, wrkPath } from './lib/wrk.js';

const HOST = '127.0.0.1';
const RESULT_MARKER = Buffer.from('"result"');
/** What can be measured: eth_call on storeAndLog (a storage read), or as `eth_call:balanceOf` an ERC-20 `balanceOf`. */
const KNOWN_METHODS = ['eth_blockNumber', 'eth_getBalance', 'eth_call', 'eth_call:balanceOf'];
const BARE_TARGET = 'bare uWS';

const flags = parseFlags('dist/bench/rpc-throughput.js', {
  concurrency: { default: 64, min: 1, description: 'keep-alive connections, one request in flight each' },
  seconds: { default: 5, min: 1, description: 'measured duration of each run' },
  warmup: { default: 1, min: 0, description: 'unmeasured seconds of load before each run' },
  workers: { default: '1,2', description: 'comma-separated --rpc-http-workers values to measure' },
  metrics: { default: 'off', description: 'comma-separated, in order: off, on (--metrics-enabled, scraped every second)' },
  methods: { default: 'eth_blockNumber,eth_getBalance,eth_call', description: 'comma-separated subset of the methods to measure' },
  'skip-baseline': { default: false, description: 'do not measure the bare uWS server (no ratio printed)' },
  wrk: { default: false, description: 'generate load with wrk instead of the in-process generator' },
  'wrk-threads': { default: 1, min: 1, description: 'wrk threads (-t)' },
  'cpu-prof-dir': { default: '', description: 'run the nodes with --cpu-prof, profiles into this directory' },
  'reader-threads': { default: '', description: 'comma-separated --Xstate-reader-threads values to measure (default: the node\'s own)' },
  'compare-build': { default: '', description: 'another checkout (its bin/run.js and dist/) measured beside this build, without reader flags' },
  rounds: { default: 1, min: 1, description: 'how many times each target is measured, in turn' },
  'transfers-per-second': { default: 0, min: 0, description: 'pre-signed transfers sent during each run, so that blocks are built meanwhile' },
  'max-seconds': { default: 300, min: 10, description: 'ceiling on the whole run' },
});

interface Measurement {
  target: string;
  method: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-200 answers, JSON-RPC errors (in-process generator only) and socket errors. */
  errors: number;
  /** CPU the measured server process used, % of one core (the machine has 2 cores). */
  serverCpu: number;
  /** CPU the in-process generator used, % of one core; NaN under wrk. */
  generatorCpu: number;
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const workerCounts = flags.workers.split(',').map((w) => Number(w.trim()));
  if (workerCounts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--workers must list positive integers, got ${flags.workers}`);
  let useWrk = flags.wrk;
  if (useWrk && !wrkPath()) {
    console.log('wrk is not installed (Debian: apt-get install -y wrk); falling back to the in-process load generator');
    useWrk = false;
  }
  const generator = useWrk ? `wrk -t${flags['wrk-threads']} -c${flags.concurrency}` : `in-process generator, ${flags.concurrency} connections`;
  log(`load: ${generator}, ${flags.seconds} s per run after ${flags.warmup} s warm-up`);
  const measure = (port: number, body: string, target: string, method: string, serverPid: number): Promise<Measurement> =>
    useWrk ? measureWithWrk(port, body, target, method, serverPid) : measureInProcess(port, body, target, method, serverPid);

  const results: Measurement[] = [];

  const methods = flags.methods.split(',').map((m) => m.trim());
  const unknown = methods.filter((m) => !KNOWN_METHODS.includes(m));
  if (unknown.length > 0) throw new Error(`--methods: unknown ${unknown.join(', ')}; known: ${KNOWN_METHODS.join(', ')}`);

  if (!flags['skip-baseline']) {
    const bare = await startBareUws();
    try {
      results.push(await measure(bare.port, rpcBody('eth_blockNumber'), BARE_TARGET, 'fixed body', bare.pid));
      report(results[results.length - 1]!);
    } finally {
      await bare.stop();
    }
  }

  const metricsModes = flags.metrics.split(',').map((m) => m.trim());
  if (metricsModes.some((m) => m !== 'on' && m !== 'off')) throw new Error(`--metrics must list off and on, got ${flags.metrics}`);
  const readerCounts: (number | undefined)[] = flags['reader-threads'] === '' ? [undefined] : flags['reader-threads'].split(',').map((r) => Number(r.trim()));
  if (readerCounts.some((n) => n !== undefined && (!Number.isInteger(n) || n < 0))) throw new Error(`--reader-threads must list integers ≥ 0, got ${flags['reader-threads']}`);
  const builds: { name: string; bin?: string }[] = [
    { name: 'node' },
    ...(flags['compare-build'] === '' ? [] : [{ name: `${flags['compare-build']}`, bin: `${flags['compare-build']}/bin/run.js` }]),
  ];
  const targets = workerCounts.flatMap((workers) =>
    metricsModes.flatMap((m) =>
      builds.flatMap((build) => (build.bin === undefined ? readerCounts : [undefined]).map((readers) => ({ workers, metrics: m === 'on', build, readers }))),
    ),
  );
  const rounds = Array.from({ length: flags.rounds }, () => targets).flat();
  for (const { workers, metrics, build, readers } of rounds) {
    const target =
      `${build.name}, ${workers} HTTP worker${workers > 1 ? 's' : ''}` +
      (readers === undefined ? '' : `, ${readers} reader${readers === 1 ? '' : 's'}`) +
      (metricsModes.length > 1 || metrics ? `, metrics ${metrics ? 'on' : 'off'}` : '');
    const args = [
      `--rpc-http-workers=${workers}`,
      ...(readers === undefined ? [] : [`--Xstate-reader-threads=${readers}`]),
      ...(metrics ? ['--metrics-enabled', '--metrics-port=0'] : []),
      // One sender's transfers queue up between 1-second blocks.
      ...(flags['transfers-per-second'] > 0 ? ['--tx-pool-max-future-by-sender=100000'] : []),
    ];
    log(`starting a dev node (${build.name}) with ${args.join(' ')}`);
    const bench = await startBenchNode({ args, cpuProfileDir: flags['cpu-prof-dir'] || undefined, ...(build.bin ? { bin: build.bin } : {}) });
    const scraper = metrics ? scrapeEverySecond(bench.output) : undefined;
    try {
      const contract = methods.includes('eth_call') ? await deployStoreAndLog(bench.port) : undefined;
      const holder = DEV_ACCOUNTS[0].address;
      const token = methods.includes('eth_call:balanceOf') ? await deployToken(bench.port, holder) : undefined;
      // [label, JSON-RPC method, params]
      const calls: Array<[string, string, unknown[]]> = [
        ['eth_blockNumber', 'eth_blockNumber', []],
        ['eth_getBalance', 'eth_getBalance', [holder, 'latest']],
        ['eth_call', 'eth_call', [{ to: contract, data: '0x' }, 'latest']],
        ['eth_call:balanceOf', 'eth_call', [{ to: token, data: tokenBalanceOfCallData(holder) }, 'latest']],
      ];
      const transfers = flags['transfers-per-second'] > 0 ? await transferLoad(bench.port) : undefined;
      for (const [label, method, params] of calls.filter(([m]) => methods.includes(m))) {
        await checkAnswer(bench.port, method, params);
        const sending = transfers?.send((flags.warmup + flags.seconds) * 1000);
        results.push(await measure(bench.port, rpcBody(method, params), target, label, bench.pid));
        const sent = await sending;
        report(results[results.length - 1]!);
        if (sent !== undefined) log(`  beside it ${sent} transfers sent, head now #${BigInt(await new RpcClient(HOST, bench.port).call<string>('eth_blockNumber'))}`);
      }
    } finally {
      scraper?.stop();
      await bench.stop();
    }
    if (scraper) log(`${scraper.scrapes()} scrapes of /metrics during the runs, ${scraper.failures()} failed`);
  }

  console.log(`\n=== summary (${generator}, ${flags.seconds} s each) ===`);
  printTable(
    ['target', 'method', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU', 'generator CPU'],
    results.map((r) => [
      r.target,
      r.method,
      fixed(r.requestsPerSecond, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(r.errors),
      `${fixed(r.serverCpu, 0)}%`,
      Number.isNaN(r.generatorCpu) ? 'n/a' : `${fixed(r.generatorCpu, 0)}%`,
    ]),
  );
  if (flags.rounds > 1) printSpread(results);
  const baseline = results.find((r) => r.target === BARE_TARGET);
  for (const r of results.filter((m) => m.method === 'eth_blockNumber')) {
    if (baseline) console.log(`eth_blockNumber on ${r.target} / bare uWS = ${fixed(r.requestsPerSecond / baseline.requestsPerSecond, 3)}`);
  }
  console.log('(CPU figures are % of one core; the machine has 2 cores shared by the generator and the server)');
}

/**
 * Transfers of 1 wei from a dev account (not the one eth_getBalance reads), signed ahead of each run and
 * sent at `--transfers-per-second` over one connection while the run lasts: blocks are built and
 * imported on the chain thread meanwhile. Resolves with how many were sent.
 */
async function transferLoad(port: number): Promise<{ send(durationMs: number): Promise<number> }> {
  const client = new RpcClient(HOST, port);
  const from = accountFromKey(DEV_ACCOUNTS[2].privateKey);
  const common = signingCommon(1337);
  let nonce = BigInt(await client.call<string>('eth_getTransactionCount', [from.address, 'pending']));
  const to = DEV_ACCOUNTS[1].address;
  return {
    async send(durationMs) {
      const rate = flags['transfers-per-second'];
      const raws = Array.from({ length: Math.ceil((rate * durationMs) / 1000) }, () =>
        signTx(common, from, { nonce: nonce++, to, value: 1n, gasLimit: 21_000n, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }).raw,
      );
      const started = Date.now();
      let sent = 0;
      while (sent < raws.length && Date.now() - started < durationMs) {
        const due = Math.min(raws.length, Math.floor(((Date.now() - started) * rate) / 1000) + 1);
        while (sent < due) await client.call('eth_sendRawTransaction', [raws[sent++]]);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // Nonces not sent are signed again next run from the pool's count.
      nonce = BigInt(await client.call<string>('eth_getTransactionCount', [from.address, 'pending']));
      return sent;
    },
  };
}

/** Each target and method measured more than once: the median, the spread, and the ratio to the first target's median. */
function printSpread(results: Measurement[]): void {
  const groups = new Map<string, number[]>();
  for (const r of results) {
    const key = `${r.target}\u0000${r.method}`;
    groups.set(key, [...(groups.get(key) ?? []), r.requestsPerSecond]);
  }
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const firstOf = new Map<string, number>();
  const rows: string[][] = [];
  for (const [key, values] of groups) {
    const [target, method] = key.split('\u0000') as [string, string];
    const m = median(values);
    if (!firstOf.has(method)) firstOf.set(method, m);
    rows.push([target, method, fixed(m, 0), `${fixed(Math.min(...values), 0)}–${fixed(Math.max(...values), 0)}`, fixed(m / firstOf.get(method)!, 2), values.map((v) => fixed(v, 0)).join(' ')]);
  }
  console.log(`\n=== ${flags.rounds} rounds: median req/s, spread, ratio to the first target ===`);
  printTable(['target', 'method', 'median', 'min–max', 'ratio', 'runs'], rows);
}

/** Scrapes the node's /metrics every second, as a (busy) Prometheus server would; its port is read from the node's log. */
function scrapeEverySecond(nodeOutput: () => string): { stop(): void; scrapes(): number; failures(): number } {
  let scrapes = 0;
  let failures = 0;
  const timer = setInterval(() => {
    // The supervisor logs the metrics port just after the JSON-RPC one, which the node was waited for.
    const port = /Metrics service started and listening on \S+:(\d+)/.exec(nodeOutput())?.[1];
    if (port === undefined) return void failures++;
    fetch(`http://${HOST}:${port}/metrics`).then(
      async (res) => {
        await res.text();
        if (res.status === 200) scrapes++;
        else failures++;
      },
      () => failures++,
    );
  }, 1000);
  return { stop: () => clearInterval(timer), scrapes: () => scrapes, failures: () => failures };
}

function report(m: Measurement): void {
  log(
    `${m.target} ${m.method}: ${fixed(m.requestsPerSecond, 0)} req/s, p50 ${fixed(m.p50Ms, 2)} ms, p99 ${fixed(m.p99Ms, 2)} ms, ` +
      `errors ${m.errors}, server CPU ${fixed(m.serverCpu, 0)}%`,
  );
}

async function measureInProcess(port: number, body: string, target: string, method: string, serverPid: number): Promise<Measurement> {
  const bytes = jsonPostRequest(HOST, port, body);
  if (flags.warmup > 0) {
    await runClosedLoop({ host: HOST, port, connections: flags.concurrency, durationMs: flags.warmup * 1000, maxRunMs: flags.warmup * 1000 + 15_000 }, () => ({ bytes }));
  }
  const latencies = new LatencyRecorder();
  let errors = 0;
  const job = {
    bytes,
    onAnswer(answer: { status: number; body: Buffer }, latencyMs: number): void {
      latencies.add(latencyMs);
      if (answer.status !== 200 || !answer.body.includes(RESULT_MARKER)) errors++;
    },
  };
  const serverCpu = new CpuMeter(serverPid);
  const generatorCpuStart = process.cpuUsage();
  const durationMs = flags.seconds * 1000;
  const run = await runClosedLoop({ host: HOST, port, connections: flags.concurrency, durationMs, maxRunMs: durationMs + 15_000 }, () => job);
  const generatorCpuMs = ownCpuMsSince(generatorCpuStart);
  const summary = summarizeLatencies(latencies);
  return {
    target,
    method,
    requestsPerSecond: (run.answered * 1000) / run.wallMs,
    p50Ms: summary.p50,
    p99Ms: summary.p99,
    errors: errors + run.transportErrors,
    serverCpu: serverCpu.percentOfOneCore(),
    generatorCpu: (generatorCpuMs / run.wallMs) * 100,
  };
}

async function measureWithWrk(port: number, body: string, target: string, method: string, serverPid: number): Promise<Measurement> {
  const url = `http://${HOST}:${port}/`;
  const common = { url, body, connections: flags.concurrency, threads: flags['wrk-threads'] };
  if (flags.warmup > 0) await runWrk({ ...common, seconds: flags.warmup });
  const serverCpu = new CpuMeter(serverPid);
  const report = await runWrk({ ...common, seconds: flags.seconds });
  return {
    target,
    method,
    requestsPerSecond: report.requestsPerSecond,
    p50Ms: report.p50Ms,
    p99Ms: report.p99Ms,
    errors: report.non2xx + report.socketErrors,
    serverCpu: serverCpu.percentOfOneCore(),
    generatorCpu: Number.NaN,
  };
}

/** wrk cannot look into bodies: one call up front shows the method answers with a result. */
async function checkAnswer(port: number, method: string, params: unknown[]): Promise<void> {
  const rpc = new RpcClient(HOST, port);
  try {
    const result = await rpc.call(method, params);
    log(`${method} answers ${JSON.stringify(result)}`);
  } finally {
    rpc.close();
  }
}

interface BareServer {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Starts bare-uws-server.js as a child process on a free port. */
async function startBareUws(): Promise<BareServer> {
  const child = fork(new URL('./bare-uws-server.js', import.meta.url).pathname, ['0'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    unregister();
  };
  const unregister = onCleanup(`bare uWS server pid ${child.pid}`, stop);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the bare uWS server did not start within 10 s')), 10_000);
    child.once('message', (message: { listening?: number; error?: string }) => {
      clearTimeout(timer);
      if (message.listening !== undefined) resolve(message.listening);
      else reject(new Error(message.error ?? `unexpected message from the bare uWS server: ${JSON.stringify(message)}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the bare uWS server exited with ${code}`));
    });
  });
  log(`bare uWS server pid ${child.pid} on port ${port}`);
  return { port, pid: child.pid!, stop };
}
