/**
 * What JSON-RPC authentication costs, on dev nodes started here:
 *
 * 1. eth_blockNumber req/s at `--concurrency` keep-alive connections on a node without authentication and
 *    on a node with it (credentials mode, every request carrying the same bearer token), alternating
 *    `--rounds` times; the last line is the authenticated / unauthenticated ratio.
 * 2. A login storm: on the authenticated node, eth_blockNumber alone, then eth_blockNumber while
 *    `--login-clients` connections post `/login` back to back (bcrypt cost 10 in the login pool): logins/s,
 *    how the logins were answered, and eth_blockNumber's req/s and p99 beside its figures alone.
 *
 * Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/auth-throughput.js [--concurrency=64] [--seconds=5] [--rounds=2]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDataPath, tempDataPath } from '../test/helpers/node-process.js';
import { PEGASYS_HASH } from '../test/helpers/jwt.js';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode, type BenchNode } from './lib/dev-node.js';
import { fixed, log, printTable } from './lib/format.js';
import { jsonPostRequest, rpcBody, runClosedLoop, type HttpAnswer } from './lib/http-client.js';
import { CpuMeter } from './lib/proc.js';
import { LatencyRecorder, summarizeLatencies } from './lib/stats.js';

const HOST = '127.0.0.1';
const RESULT_MARKER = Buffer.from('"result"');

const flags = parseFlags('dist/bench/auth-throughput.js', {
  concurrency: { default: 64, min: 1, description: 'keep-alive connections for eth_blockNumber, one request in flight each' },
  seconds: { default: 5, min: 1, description: 'measured duration of each run' },
  warmup: { default: 1, min: 0, description: 'unmeasured seconds of load before each run' },
  rounds: { default: 2, min: 1, description: 'unauthenticated/authenticated pairs of runs' },
  'login-clients': { default: 16, min: 1, description: 'connections posting /login back to back during the storm' },
  workers: { default: 0, min: 0, description: '--rpc-http-workers of the nodes (0: the node default, one per CPU)' },
  'max-seconds': { default: 600, min: 30, description: 'ceiling on the whole run' },
});

interface RpcFigures {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  serverCpu: number;
  /** Node CPU time per answered request: steadier than req/s on a machine others also load. */
  cpuMicrosPerRequest: number;
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const dir = tempDataPath();
  const unregister = onCleanup('credentials directory', async () => removeDataPath(dir));
  const credentialsFile = join(dir, 'credentials.toml');
  writeFileSync(credentialsFile, `[Users.bench]\npassword = "${PEGASYS_HASH}"\npermissions = ["*:*"]\n`);
  const workerArgs = flags.workers > 0 ? [`--rpc-http-workers=${flags.workers}`] : [];
  const authArgs = ['--rpc-http-authentication-enabled', `--rpc-http-authentication-credentials-file=${credentialsFile}`];
  log(`eth_blockNumber at ${flags.concurrency} connections, ${flags.seconds} s per run after ${flags.warmup} s warm-up, ${flags.rounds} rounds`);

  const runs: RpcFigures[] = [];
  for (let round = 1; round <= flags.rounds; round++) {
    runs.push(await withNode(workerArgs, (node) => measureBlockNumber(node, 'unauthenticated', {})));
    runs.push(
      await withNode([...workerArgs, ...authArgs], async (node) => {
        const token = await login(node.port);
        return measureBlockNumber(node, 'authenticated (bearer token)', { authorization: `Bearer ${token}` });
      }),
    );
  }

  log(`login storm: ${flags['login-clients']} connections posting /login while eth_blockNumber runs at ${flags.concurrency}`);
  const storm = await withNode([...workerArgs, ...authArgs], async (node) => {
    const token = await login(node.port);
    const headers = { authorization: `Bearer ${token}` };
    const alone = await measureBlockNumber(node, 'authenticated, alone', headers);
    const [during, logins] = await Promise.all([measureBlockNumber(node, 'authenticated, during the login storm', headers), loginStorm(node.port)]);
    return { alone, during, logins };
  });

  console.log(`\n=== eth_blockNumber, ${flags.concurrency} keep-alive connections, ${flags.seconds} s per run ===`);
  printFigures(runs);
  const mean = (label: string, figure: (r: RpcFigures) => number) => {
    const selected = runs.filter((r) => r.label === label);
    return selected.reduce((sum, r) => sum + figure(r), 0) / selected.length;
  };
  const AUTH = 'authenticated (bearer token)';
  const ratio = mean(AUTH, (r) => r.requestsPerSecond) / mean('unauthenticated', (r) => r.requestsPerSecond);
  console.log(`authenticated / unauthenticated req/s (means of ${flags.rounds} runs) = ${fixed(ratio, 3)}`);
  const cpuRatio = mean('unauthenticated', (r) => r.cpuMicrosPerRequest) / mean(AUTH, (r) => r.cpuMicrosPerRequest);
  console.log(`unauthenticated / authenticated node CPU per request (the req/s ratio a CPU-bound node would reach) = ${fixed(cpuRatio, 3)}`);

  console.log(`\n=== login storm: ${flags['login-clients']} /login connections (bcrypt cost 10 in the login pool) ===`);
  printFigures([storm.alone, storm.during]);
  const { answered, byStatus, wallMs } = storm.logins;
  console.log(`logins: ${fixed((byStatus.get(200) ?? 0) * 1000 / wallMs, 1)}/s accepted; answers ${[...byStatus].map(([status, count]) => `${status}×${count}`).join(', ')} (${answered} in ${fixed(wallMs / 1000, 1)} s)`);
  console.log(`eth_blockNumber p99 during the storm / alone = ${fixed(storm.during.p99Ms / storm.alone.p99Ms, 2)}`);
  console.log('(CPU figures are % of one core; the machine has 2 cores shared by the generator and the node)');
  removeDataPath(dir);
  unregister();
}

async function withNode<T>(args: string[], body: (node: BenchNode) => Promise<T>): Promise<T> {
  const node = await startBenchNode({ args });
  try {
    return await body(node);
  } finally {
    await node.stop();
  }
}

async function login(port: number): Promise<string> {
  const response = await fetch(`http://${HOST}:${port}/login`, { method: 'POST', body: JSON.stringify({ username: 'bench', password: 'pegasys' }) });
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

async function measureBlockNumber(node: BenchNode, label: string, headers: Record<string, string>): Promise<RpcFigures> {
  const bytes = jsonPostRequest(HOST, node.port, rpcBody('eth_blockNumber'), '/', headers);
  const loop = (durationMs: number, job: { bytes: Buffer; onAnswer?: (answer: HttpAnswer, latencyMs: number) => void }) =>
    runClosedLoop({ host: HOST, port: node.port, connections: flags.concurrency, durationMs, maxRunMs: durationMs + 15_000 }, () => job);
  if (flags.warmup > 0) await loop(flags.warmup * 1000, { bytes });
  const latencies = new LatencyRecorder();
  let errors = 0;
  const cpu = new CpuMeter(node.pid);
  const run = await loop(flags.seconds * 1000, {
    bytes,
    onAnswer(answer, latencyMs) {
      latencies.add(latencyMs);
      if (answer.status !== 200 || !answer.body.includes(RESULT_MARKER)) errors++;
    },
  });
  const summary = summarizeLatencies(latencies);
  const serverCpu = cpu.percentOfOneCore();
  const figures = {
    label,
    requestsPerSecond: (run.answered * 1000) / run.wallMs,
    p50Ms: summary.p50,
    p99Ms: summary.p99,
    errors: errors + run.transportErrors,
    serverCpu,
    cpuMicrosPerRequest: ((serverCpu / 100) * run.wallMs * 1000) / run.answered,
  };
  log(
    `${label}: ${fixed(figures.requestsPerSecond, 0)} req/s, p50 ${fixed(figures.p50Ms, 2)} ms, p99 ${fixed(figures.p99Ms, 2)} ms, ` +
      `errors ${figures.errors}, node CPU ${fixed(figures.cpuMicrosPerRequest, 1)} µs/request`,
  );
  return figures;
}

/** Logins back to back on `--login-clients` connections for the warm-up and the measured run. */
async function loginStorm(port: number): Promise<{ answered: number; byStatus: Map<number, number>; wallMs: number }> {
  const bytes = jsonPostRequest(HOST, port, JSON.stringify({ username: 'bench', password: 'pegasys' }), '/login');
  const byStatus = new Map<number, number>();
  const durationMs = (flags.warmup + flags.seconds) * 1000;
  const run = await runClosedLoop({ host: HOST, port, connections: flags['login-clients'], durationMs, maxRunMs: durationMs + 30_000 }, () => ({
    bytes,
    onAnswer: (answer) => void byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1),
  }));
  return { answered: run.answered, byStatus, wallMs: run.wallMs };
}

function printFigures(runs: RpcFigures[]): void {
  printTable(
    ['run', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'node CPU', 'CPU µs/req'],
    runs.map((r) => [
      r.label,
      fixed(r.requestsPerSecond, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(r.errors),
      `${fixed(r.serverCpu, 0)}%`,
      fixed(r.cpuMicrosPerRequest, 1),
    ]),
  );
}
