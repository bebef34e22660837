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
  /** GraphQL HTTP on as well (port 0, read back as `graphqlPort`). */
  graphql?: boolean;
}

export interface BenchNode {
  port: number;
  url: string;
  /** The GraphQL HTTP port when asked for. */
  graphqlPort: number | undefined;
  pid: number;
  /** Everything the node printed. */
  output(): string;
  /** SIGTERM (so CPU profiles get written), SIGKILL after 15 s; removes the data path. Idempotent. */
  stop(): Promise<void>;
}

export async function startBenchNode(opts: BenchNodeOptions = {}): Promise<BenchNode> {
  const node = await startNode({
    args: opts.args,
    graphql: opts.graphql ?? false,
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
  const graphqlPort = node.graphqlUrl === undefined ? undefined : Number(new URL(node.graphqlUrl).port);
  return { port: node.port, url: node.url, graphqlPort, pid, output: node.output, stop };
}
