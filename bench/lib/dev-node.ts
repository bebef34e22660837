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
  /** devp2p on a free loopback port (off by default: no peer takes part in a benchmark). */
  p2p?: boolean;
  /** Added to the node's environment. */
  env?: Record<string, string>;
  /** Another build's bin/run.js (e.g. main's checkout), to compare builds in one run. */
  bin?: string;
  /** Called with every complete line the node prints (stdout and stderr). */
  onLine?: (line: string) => void;
}

export interface BenchNode {
  port: number;
  url: string;
  /** The GraphQL HTTP port when asked for. */
  graphqlPort: number | undefined;
  /** The JSON-RPC WebSocket URL, when started with `--rpc-ws-enabled`. */
  wsUrl?: string;
  pid: number;
  /** The devp2p port, when started with `p2p`. */
  p2pPort?: number;
  /** False once the process has exited. */
  running(): boolean;
  /** Everything the node printed. */
  output(): string;
  /** SIGTERM (so CPU profiles get written), SIGKILL after 15 s; removes the data path. Idempotent. */
  stop(): Promise<void>;
}

export async function startBenchNode(opts: BenchNodeOptions = {}): Promise<BenchNode> {
  const args = opts.args ?? [];
  const node = await startNode({
    args,
    graphql: opts.graphql ?? false,
    p2p: opts.p2p ?? false,
    nodeFlags: opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [],
    readyTimeoutMs: 60_000,
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.bin ? { bin: opts.bin } : {}),
  });
  if (opts.onLine) {
    const onLine = opts.onLine;
    for (const stream of [node.process.stdout, node.process.stderr]) {
      let partial = '';
      stream?.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) onLine(line);
      });
    }
  }
  const pid = node.process.pid!;
  const running = (): boolean => node.process.exitCode === null && node.process.signalCode === null;
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
  return {
    port: node.port,
    url: node.url,
    graphqlPort,
    ...(node.wsUrl === undefined ? {} : { wsUrl: node.wsUrl }),
    pid,
    ...(node.p2pPort === undefined ? {} : { p2pPort: node.p2pPort }),
    running,
    output: node.output,
    stop,
  };
}
