/**
 * Starting and reliably stopping a dev node for a benchmark: test/helpers' startNode (port 0, the
 * bound port read from the node's log), plus Node flags such as `--cpu-prof`, a cleanup registered
 * for aborted runs, and a report of how the node ended.
 */
import { removeDataPath, startNode } from '../../test/helpers/node-process.js';
import { onCleanup } from './cleanup.js';

export interface BenchNodeOptions {
  /** Extra CLI flags, e.g. `--rpc-http-workers=2`. */
  args?: string[];
  /** When set, the node runs with `--cpu-prof` and writes one profile per thread into this directory. */
  cpuProfileDir?: string;
}

export interface BenchNode {
  port: number;
  url: string;
  pid: number;
  /** Everything the node printed. */
  output(): string;
  /** SIGTERM (so CPU profiles get written), SIGKILL after 15 s; removes the data path. Idempotent. */
  stop(): Promise<void>;
}

export async function startBenchNode(opts: BenchNodeOptions = {}): Promise<BenchNode> {
  const args = opts.args ?? [];
  const node = await startNode({
    // A run opens its connections while the previous run's are still closing: the limit (default 80)
    // would refuse some of them at 64 connections per run, and a benchmark measures throughput.
    args: args.some((arg) => arg.startsWith('--rpc-http-max-active-connections')) ? args : ['--rpc-http-max-active-connections=1000', ...args],
    nodeFlags: opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [],
    readyTimeoutMs: 60_000,
  });
  const pid = node.process.pid!;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const code = await node.stop(15_000);
      if (code !== 0) {
        const tail = node.output().split('\n').slice(-15).join('\n');
        console.error(`the node (pid ${pid}) ended with ${code ?? node.process.signalCode}; its last output:\n${tail}`);
      }
      removeDataPath(node.dataPath);
      unregister();
    })());
  const unregister = onCleanup(`dev node pid ${pid}`, stop);
  return { port: node.port, url: node.url, pid, output: node.output, stop };
}
