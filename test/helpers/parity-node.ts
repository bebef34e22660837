/**
 * Besu's test chain served by a real Basalt node: the chain is imported with the real
 * `blocks import` CLI into a temporary data path, then a node is started on it with the options
 * Besu's JSON-RPC spec tests assume (fixtures README, "Node state").
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BESU_FIXTURES, REPO_ROOT, freePort, tempDataPath } from './node-process.js';

export const TEST_GENESIS = join(BESU_FIXTURES, 'chain', 'testGenesis.json');
export const TEST_BLOCKS = join(BESU_FIXTURES, 'chain', 'testBlockchain.blocks');
const BIN = join(REPO_ROOT, 'bin/run.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/run.js ...args` to completion. */
export function runCli(args: string[], timeoutMs = 120_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`basalt ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `blocks import` of `file` into `dataPath` on the chain of `genesis`. */
export function importBlocks(dataPath: string, file: string, extra: string[] = [], genesis = TEST_GENESIS): Promise<CliRun> {
  return runCli([`--data-path=${dataPath}`, `--genesis-file=${genesis}`, 'blocks', 'import', `--from=${file}`, ...extra]);
}

export interface ServedNode {
  url: string;
  dataPath: string;
  output(): string;
  stop(): Promise<number | null>;
}

/** Starts a node with `--genesis-file` on `dataPath` and waits until JSON-RPC answers. */
export async function startGenesisNode(dataPath: string, args: string[], genesis = TEST_GENESIS): Promise<ServedNode> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [BIN, `--genesis-file=${genesis}`, `--data-path=${dataPath}`, '--rpc-http-enabled', `--rpc-http-port=${port}`, '--p2p-enabled=false', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const node: ServedNode = {
    url,
    dataPath,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited with ${child.exitCode} before serving:\n${output}`);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      });
      if (res.ok) return node;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`node did not serve JSON-RPC within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The node state of Besu's JSON-RPC spec tests, on a fresh import of the test chain. */
export async function startBesuTestChainNode(): Promise<ServedNode> {
  const dataPath = tempDataPath();
  const imported = await importBlocks(dataPath, TEST_BLOCKS, ['--skip-pow-validation-enabled']);
  if (imported.code !== 0) throw new Error(`blocks import failed (${imported.code}):\n${imported.stdout}\n${imported.stderr}`);
  return startGenesisNode(dataPath, [
    '--network-id=123',
    '--rpc-http-api=ETH,NET,WEB3,DEBUG,TRACE,TXPOOL',
    '--min-gas-price=1',
    '--rpc-gas-cap=0',
    '--rpc-http-max-batch-size=10',
  ]);
}
