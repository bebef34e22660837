import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root, from dist/test/helpers. */
export const REPO_ROOT = new URL('../../..', import.meta.url).pathname;
const BIN = join(REPO_ROOT, 'bin/run.js');

export interface NodeProcess {
  url: string;
  port: number;
  dataPath: string;
  process: ChildProcess;
  /** Everything the node printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
}

/** A free loopback TCP port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function tempDataPath(): string {
  return mkdtempSync(join(tmpdir(), 'basalt-test-'));
}

export function removeDataPath(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

export interface StartOptions {
  dataPath?: string;
  args?: string[];
  env?: Record<string, string>;
  /** How long to wait for the JSON-RPC port to answer. */
  readyTimeoutMs?: number;
}

/**
 * Starts `node bin/run.js --network=dev` on free ports and waits until JSON-RPC answers. devp2p is
 * off unless the test passes `--p2p-enabled`; when it is on, it listens on a free loopback port unless
 * the test passes `--p2p-port` (two nodes on the default 30303 would collide).
 */
export async function startDevNode(opts: StartOptions = {}): Promise<NodeProcess> {
  const port = await freePort();
  const dataPath = opts.dataPath ?? tempDataPath();
  const given = (name: string) => (opts.args ?? []).some((arg) => arg === name || arg.startsWith(`${name}=`));
  const p2pArgs = !given('--p2p-enabled')
    ? ['--p2p-enabled=false']
    : [...(given('--p2p-port') ? [] : [`--p2p-port=${await freePort()}`]), ...(given('--p2p-interface') ? [] : ['--p2p-interface=127.0.0.1'])];
  const args = [
    BIN,
    '--network=dev',
    '--rpc-http-enabled',
    `--rpc-http-port=${port}`,
    `--data-path=${dataPath}`,
    ...p2pArgs,
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;

  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
    if (body.error) throw Object.assign(new Error(body.error.message), { code: body.error.code });
    return body.result as T;
  };

  const node: NodeProcess = {
    url,
    port,
    dataPath,
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
    rpc,
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited with ${child.exitCode} before serving:\n${output}`);
    try {
      await rpc('eth_blockNumber');
      return node;
    } catch {
      if (Date.now() > deadline) {
        await node.kill();
        throw new Error(`node did not serve JSON-RPC within the timeout:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Besu's fixtures: `shared/` sits beside the repository (here and in CI); BESU_FIXTURES overrides.
 */
export const BESU_FIXTURES = process.env.BESU_FIXTURES ?? join(REPO_ROOT, '../shared/fixtures/besu');
