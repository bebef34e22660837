/**
 * Starting and reliably stopping a dev node for a benchmark. Like test/helpers' startDevNode, but
 * able to pass Node flags (`--cpu-prof` is refused in NODE_OPTIONS).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, REPO_ROOT, removeDataPath, tempDataPath } from '../../test/helpers/node-process.js';
import { onCleanup } from './cleanup.js';
import { RpcClient } from './http-client.js';

export interface BenchNodeOptions {
  /** Extra CLI flags, e.g. `--rpc-http-workers=2`. */
  args?: string[];
  /** When set, the node runs with `--cpu-prof` and writes one profile per thread into this directory. */
  cpuProfileDir?: string;
  /** devp2p on a free loopback port (off by default: no peer takes part in a benchmark). */
  p2p?: boolean;
  /** Added to the node's environment. */
  env?: Record<string, string>;
  /** Called with every complete line the node prints (stdout and stderr). */
  onLine?: (line: string) => void;
}

export interface BenchNode {
  port: number;
  url: string;
  pid: number;
  /** The last 64 kB the node printed. */
  output(): string;
  /** SIGTERM (so CPU profiles get written), SIGKILL after 15 s; removes the data path. Idempotent. */
  stop(): Promise<void>;
}

const OUTPUT_KEPT = 64 * 1024;

export async function startBenchNode(opts: BenchNodeOptions = {}): Promise<BenchNode> {
  const port = await freePort();
  const dataPath = tempDataPath();
  const nodeFlags = opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [];
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      join(REPO_ROOT, 'bin/run.js'),
      '--network=dev',
      '--rpc-http-enabled',
      `--rpc-http-port=${port}`,
      `--data-path=${dataPath}`,
      ...(opts.p2p ? ['--p2p-enabled=true', `--p2p-port=${await freePort()}`, '--p2p-interface=127.0.0.1'] : ['--p2p-enabled=false']),
      ...(opts.args ?? []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } },
  );
  let output = '';
  const keep = (d: Buffer): void => {
    output = (output + d.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (opts.onLine) {
    const onLine = opts.onLine;
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) onLine(line);
      });
    }
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (running()) child.kill('SIGTERM');
      const killTimer = setTimeout(() => {
        if (!running()) return;
        console.error(`the node (pid ${child.pid}) did not stop within 15 s of SIGTERM; killing it`);
        child.kill('SIGKILL');
      }, 15_000);
      await exited;
      clearTimeout(killTimer);
      if (child.exitCode !== 0) {
        const tail = output.split('\n').slice(-15).join('\n');
        console.error(`the node (pid ${child.pid}) ended with ${child.exitCode ?? child.signalCode}; its last output:\n${tail}`);
      }
      removeDataPath(dataPath);
      unregister();
    })());
  const unregister = onCleanup(`dev node pid ${child.pid}`, stop);

  const url = `http://127.0.0.1:${port}`;
  const rpc = new RpcClient('127.0.0.1', port);
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (!running()) throw new Error(`the node exited with ${child.exitCode ?? child.signalCode} before serving:\n${output}`);
      try {
        await rpc.call('eth_blockNumber');
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`the node did not serve JSON-RPC within 60 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    rpc.close();
  }
  return { port, url, pid: child.pid!, output: () => output, stop };
}
