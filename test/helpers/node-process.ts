/**
 * The one way tests and benchmarks start Basalt processes: `startNode` for a node that serves,
 * `runCli` for a command that runs to completion. A node listens on port 0 (JSON-RPC HTTP, WebSocket
 * when enabled, and devp2p when asked for) and the helper reads the bound ports from the node's own
 * log lines, so no two tests race for a port and none takes the default ports.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root, from dist/test/helpers. */
export const REPO_ROOT = new URL('../../..', import.meta.url).pathname;
const BIN = join(REPO_ROOT, 'bin/run.js');

/**
 * Besu's fixtures: `shared/` sits beside the repository (here and in CI); BESU_FIXTURES overrides.
 */
export const BESU_FIXTURES = process.env.BESU_FIXTURES ?? join(REPO_ROOT, '../shared/fixtures/besu');

export function tempDataPath(): string {
  return mkdtempSync(join(tmpdir(), 'basalt-test-'));
}

export function removeDataPath(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/** The log lines the node prints once a service listens, with the port it actually bound. */
const HTTP_LISTENING = /JSON-RPC HTTP service started and listening on (\S+):(\d+)/;
const GRAPHQL_LISTENING = /GraphQL HTTP service started and listening on (\S+):(\d+)/;
const P2P_LISTENING = /P2P network started and listening on (\S+):(\d+)/;
const WS_LISTENING = /Websocket service started and listening on (\S+):(\d+)/;

export interface LogLine {
  text: string;
  match: RegExpExecArray;
  /** Offset in `output()` just past this line: pass it as `since` to wait for a later line. */
  end: number;
}

export interface WaitForLogOptions {
  /** Only lines starting at or after this offset of `output()` count (default: the whole output). */
  since?: number;
  timeoutMs?: number;
}

/** A running Basalt process, its output, and when it ends. */
interface Spawned {
  process: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** The first complete line matching `pattern`; rejects when the process ends or the time is up first. */
  waitForLog(pattern: RegExp, opts?: WaitForLogOptions): Promise<LogLine>;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
}

interface LogWaiter {
  pattern: RegExp;
  /** Where the next unscanned line starts. */
  scanFrom: number;
  resolve(line: LogLine): void;
  reject(err: Error): void;
}

interface SpawnOptions {
  /** Environment variables on top of this process's, whose BASALT_ variables are left out. */
  env?: Record<string, string>;
  /** Node.js flags before the script, e.g. `--cpu-prof` (refused in NODE_OPTIONS). */
  nodeFlags?: string[];
  /** Written to the process's standard input, which is then closed (default: no standard input). */
  stdin?: string;
  /** Another build's entry point (its bin/run.js), for a benchmark comparing builds; default this one's. */
  bin?: string;
}

/**
 * `--Xhttp-engine` for every node the tests start, from this variable of the test run: how CI runs
 * e2e files against the node:http engine on a Node where uWebSockets.js loads (`npm run test:e2e:node-engine`).
 */
const HTTP_ENGINE_OF_TEST_RUN = 'BASALT_XHTTP_ENGINE';

function spawnBasalt(argv: string[], opts: SpawnOptions = {}): Spawned {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('BASALT_') || name === HTTP_ENGINE_OF_TEST_RUN) env[name] = value;
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), opts.bin ?? BIN, ...argv], {
    env: { ...env, ...opts.env },
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (opts.stdin !== undefined) child.stdin!.end(opts.stdin);
  let output = '';
  let stdout = '';
  let stderr = '';
  let ended = false;
  const waiters = new Set<LogWaiter>();

  /** Tests the complete lines after `waiter.scanFrom` (with `flush`, the unterminated last one too). */
  const scan = (waiter: LogWaiter, flush: boolean): boolean => {
    const limit = flush ? output.length : output.lastIndexOf('\n') + 1;
    while (waiter.scanFrom < limit) {
      const newline = output.indexOf('\n', waiter.scanFrom);
      const end = newline === -1 || newline >= limit ? limit : newline + 1;
      const text = output.slice(waiter.scanFrom, newline === -1 || newline >= limit ? limit : newline);
      waiter.scanFrom = end;
      const match = waiter.pattern.exec(text);
      if (match) {
        waiter.resolve({ text, match, end });
        return true;
      }
    }
    return false;
  };
  const onData = (d: Buffer, stream: 'stdout' | 'stderr'): void => {
    const text = d.toString();
    output += text;
    if (stream === 'stdout') stdout += text;
    else stderr += text;
    for (const waiter of waiters) if (scan(waiter, false)) waiters.delete(waiter);
  };
  child.stdout!.on('data', (d: Buffer) => onData(d, 'stdout'));
  child.stderr!.on('data', (d: Buffer) => onData(d, 'stderr'));
  // 'close' comes after the last output; 'exit' may come before it.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      ended = true;
      for (const waiter of waiters) {
        if (!scan(waiter, true)) waiter.reject(new Error(`the node exited with ${code ?? child.signalCode} before logging ${waiter.pattern}:\n${tail(output)}`));
      }
      waiters.clear();
      resolve(code);
    }),
  );

  const waitForLog = (pattern: RegExp, { since = 0, timeoutMs = 30_000 }: WaitForLogOptions = {}): Promise<LogLine> =>
    new Promise<LogLine>((resolve, reject) => {
      // The timer may fire as this process comes back from a long synchronous stretch (loading KZG
      // blocks for seconds): output that came meanwhile is read before the check phase (setImmediate).
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (!waiters.delete(waiter)) return;
            reject(new Error(`no log line matching ${pattern} within ${timeoutMs} ms:\n${tail(output)}`));
          }),
        timeoutMs,
      );
      const waiter: LogWaiter = {
        pattern,
        scanFrom: since,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      if (scan(waiter, ended)) return;
      if (ended) return waiter.reject(new Error(`the node had exited without logging ${pattern}:\n${tail(output)}`));
      waiters.add(waiter);
    });

  return { process: child, output: () => output, stdout: () => stdout, stderr: () => stderr, waitForLog, exited };
}

function tail(output: string, lines = 40): string {
  return output.split('\n').slice(-lines).join('\n');
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they came. */
  output: string;
}

/** Runs `basalt ...args` to completion; SIGKILL and a rejection past the timeout. */
export async function runCli(args: string[], { timeoutMs = 120_000, ...opts }: SpawnOptions & { timeoutMs?: number } = {}): Promise<CliRun> {
  const run = spawnBasalt(args, opts);
  const timer = setTimeout(() => run.process.kill('SIGKILL'), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  if (code === null && run.process.signalCode === 'SIGKILL') {
    throw new Error(`basalt ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${tail(run.output())}`);
  }
  return { code, stdout: run.stdout(), stderr: run.stderr(), output: run.output() };
}

export interface StartOptions extends SpawnOptions {
  /** A genesis file (`--genesis-file`); without it the node runs `--network=dev`. */
  genesis?: string;
  /** Default: a new temporary directory (the caller removes it, see `NodeProcess.dataPath`). */
  dataPath?: string;
  /**
   * More CLI options; `--rpc-http-port`, `--rpc-ws-port`, `--p2p-port` or `--p2p-interface` given here
   * replace the helper's. With `--rpc-ws-enabled` here, the WebSocket port is 0 too and `wsUrl` is set.
   */
  args?: string[];
  /** devp2p on, on 127.0.0.1 and port 0. Off by default: a test node never takes the default port 30303. */
  p2p?: boolean;
  /** GraphQL HTTP on, on port 0 unless `--graphql-http-port` is given in `args`. */
  graphql?: boolean;
  /** JSON-RPC HTTP on (the default); off, the node is ready once GraphQL listens (`graphql` must be on). */
  jsonRpc?: boolean;
  /** How long the node has to start serving (default 30 s). */
  readyTimeoutMs?: number;
}

export interface NodeProcess {
  /** The JSON-RPC HTTP URL; empty when JSON-RPC is off (`jsonRpc: false`). */
  url: string;
  /** The JSON-RPC HTTP port the node bound; 0 when JSON-RPC is off. */
  port: number;
  /** The devp2p port the node bound; undefined with devp2p off. */
  p2pPort: number | undefined;
  /** `http://127.0.0.1:<port>/graphql` when GraphQL HTTP was asked for (`graphql: true`). */
  graphqlUrl: string | undefined;
  /** `ws://127.0.0.1:<port>` of the JSON-RPC WebSocket port; undefined unless `--rpc-ws-enabled` was given. */
  wsUrl: string | undefined;
  dataPath: string;
  process: ChildProcess;
  /** Everything the node printed so far (stdout and stderr). */
  output(): string;
  /** Waits for a log line matching `pattern` (by default anywhere in the output so far or to come). */
  waitForLog(pattern: RegExp, opts?: WaitForLogOptions): Promise<LogLine>;
  /** SIGTERM and wait (SIGKILL after `killAfterMs`); resolves with the exit code. */
  stop(killAfterMs?: number): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** The result of a JSON-RPC call; a JSON-RPC error rejects as an Error carrying `code` (and `data`). */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** The JSON-RPC error a call answers; rejects when the call succeeds. */
  rpcError(method: string, params?: unknown[]): Promise<RpcErrorObject>;
}

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Whether `args` turn on the JSON-RPC WebSocket service. */
function wsEnabled(args: readonly string[]): boolean {
  return args.some((arg) => arg === '--rpc-ws-enabled' || arg === '--rpc-ws-enabled=true');
}

/** The CLI arguments of a test node: its chain, data path, JSON-RPC HTTP (and WS) on port 0, devp2p as asked. */
function nodeArgs(opts: Pick<StartOptions, 'genesis' | 'args' | 'p2p' | 'graphql' | 'jsonRpc'> & { dataPath: string }): string[] {
  const args = opts.args ?? [];
  const given = (name: string) => args.some((arg) => arg === name || arg.startsWith(`${name}=`));
  const unlessGiven = (name: string, value: string) => (given(name) ? [] : [`${name}=${value}`]);
  return [
    opts.genesis === undefined ? '--network=dev' : `--genesis-file=${opts.genesis}`,
    `--data-path=${opts.dataPath}`,
    ...(opts.jsonRpc === false ? [] : ['--rpc-http-enabled', ...unlessGiven('--rpc-http-port', '0')]),
    ...(wsEnabled(args) ? unlessGiven('--rpc-ws-port', '0') : []),
    ...(opts.p2p ? ['--p2p-enabled=true', ...unlessGiven('--p2p-interface', '127.0.0.1'), ...unlessGiven('--p2p-port', '0')] : ['--p2p-enabled=false']),
    ...(opts.graphql ? ['--graphql-http-enabled', ...unlessGiven('--graphql-http-port', '0')] : []),
    ...args,
  ];
}

/** Starts a node and resolves once it serves JSON-RPC (or GraphQL alone, with `jsonRpc: false`), with the ports it bound. */
export function startNode(opts: StartOptions = {}): Promise<NodeProcess> {
  return launchNode(opts).ready;
}

export interface LaunchedNode {
  /** The devp2p port, as soon as the node listens there (before it serves JSON-RPC); rejects with devp2p off. */
  p2pPort: Promise<number>;
  /** The node, once it serves JSON-RPC. */
  ready: Promise<NodeProcess>;
}

/** Starts a node like `startNode`, telling its devp2p port earlier: what nodes started next dial. */
export function launchNode(opts: StartOptions = {}): LaunchedNode {
  const dataPath = opts.dataPath ?? tempDataPath();
  const run = spawnBasalt(nodeArgs({ ...opts, dataPath }), opts);
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  const portFrom = async (line: RegExp) => Number((await run.waitForLog(line, { timeoutMs: Math.max(0, deadline - Date.now()) })).match[2]);
  // devp2p starts before the HTTP workers, so its line comes first.
  const p2pPort = opts.p2p ? portFrom(P2P_LISTENING) : Promise.reject(new Error('devp2p is off'));
  p2pPort.catch(() => undefined);
  const ready = (async () => {
    try {
      // The supervisor logs the JSON-RPC HTTP port, then the WebSocket one, then GraphQL's.
      const port = opts.jsonRpc === false ? 0 : await portFrom(HTTP_LISTENING);
      const wsPort = wsEnabled(opts.args ?? []) ? await portFrom(WS_LISTENING) : undefined;
      const graphqlPort = opts.graphql ? await portFrom(GRAPHQL_LISTENING) : undefined;
      return served(run, dataPath, { p2pPort: opts.p2p ? await p2pPort : undefined, port, wsPort, graphqlPort });
    } catch (err) {
      if (run.process.exitCode === null && run.process.signalCode === null) run.process.kill('SIGKILL');
      await run.exited;
      if (opts.dataPath === undefined) removeDataPath(dataPath);
      throw err;
    }
  })();
  return { p2pPort, ready };
}

function served(
  run: Spawned,
  dataPath: string,
  { p2pPort, port, wsPort, graphqlPort }: { p2pPort: number | undefined; port: number; wsPort: number | undefined; graphqlPort: number | undefined },
): NodeProcess {
  const child = run.process;
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = async (): Promise<void> => {
    if (running()) child.kill('SIGKILL');
    await run.exited;
  };
  const stop = async (killAfterMs = 30_000): Promise<number | null> => {
    if (!running()) return run.exited;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    const code = await run.exited;
    clearTimeout(killer);
    return code;
  };
  const url = port === 0 ? '' : `http://127.0.0.1:${port}`;

  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: RpcErrorObject };
    if (body.error) throw Object.assign(new Error(body.error.message), body.error);
    return body.result as T;
  };
  const rpcError = async (method: string, params: unknown[] = []): Promise<RpcErrorObject> => {
    try {
      await rpc(method, params);
    } catch (err) {
      const { code, message, data } = err as Error & RpcErrorObject;
      if (typeof code === 'number') return data === undefined ? { code, message } : { code, message, data };
      throw err;
    }
    throw new Error(`${method} did not fail`);
  };

  const graphqlUrl = graphqlPort === undefined ? undefined : `http://127.0.0.1:${graphqlPort}/graphql`;
  const wsUrl = wsPort === undefined ? undefined : `ws://127.0.0.1:${wsPort}`;
  return { url, port, p2pPort, graphqlUrl, wsUrl, dataPath, process: child, output: run.output, waitForLog: run.waitForLog, stop, kill, rpc, rpcError };
}

/** Polls `probe` until `done` holds for its value; rejects with the last value past the timeout. */
export async function waitFor<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
