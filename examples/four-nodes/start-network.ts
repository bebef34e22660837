/**
 * Starts the nodes of a network that `basalt operator generate-blockchain-config` wrote, on this machine's
 * loopback interface (README, "A network of four"):
 *
 *   node bin/run.js operator generate-blockchain-config --config-file=examples/four-nodes/qbftConfigFile.json \
 *     --to=network --private-key-file-name=key
 *   node dist/examples/four-nodes/start-network.js network
 *
 * Each folder `network/keys/<address>` holds a node's `key` and `key.pub`: it is that node's data path as it
 * is, and its database goes beside them. Node i listens for JSON-RPC on 127.0.0.1:<rpc port + i> and for
 * peers on 127.0.0.1:<p2p port + i> (8555 and 30311 unless given; 0 lets every node take a free port), and
 * is given every node started before it as a bootnode, so the four are fully connected from the start.
 * Logs go to network/logs/node-<i>.log. Ctrl-C stops the four nodes.
 *
 * The end-to-end tests start their network with `startNetwork` from this file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from dist/examples/four-nodes. */
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const BASALT = join(REPO_ROOT, 'bin/run.js');
const HOST = '127.0.0.1';

export const DEFAULT_RPC_PORT = 8555;
export const DEFAULT_P2P_PORT = 30311;

export interface StartNetworkOptions {
  /** The `--to` folder of `operator generate-blockchain-config`. */
  networkDir: string;
  /** JSON-RPC port of the first node, the next ones count up; 0: each node takes a free port. */
  rpcPort?: number;
  /** devp2p port of the first node, likewise. */
  p2pPort?: number;
  /** More options for every node. */
  nodeArgs?: string[];
  /** Options for Node.js itself, before the script (e.g. `--cpu-prof`). */
  nodeFlags?: string[];
  /** How long a node has to start serving (default 60 s). */
  readyTimeoutMs?: number;
}

export interface NetworkNode {
  /** The validator address: the name of the node's folder. */
  address: string;
  dataPath: string;
  enode: string;
  rpcUrl: string;
  process: ChildProcess;
  /** Everything the node printed so far. */
  output(): string;
}

export interface Network {
  nodes: NetworkNode[];
  /** Stops every node (SIGTERM, SIGKILL after `killAfterMs`); resolves with their exit codes. */
  stop(killAfterMs?: number): Promise<(number | null)[]>;
}

interface NodeFolder {
  address: string;
  dataPath: string;
  /** The private key file when it is not the data path's `key` (Besu's default name `key.priv`). */
  keyFile: string | undefined;
  nodeId: string;
}

/** The node folders of a generated network, in address order. */
function nodeFolders(networkDir: string): NodeFolder[] {
  const keysDir = join(networkDir, 'keys');
  if (!existsSync(join(networkDir, 'genesis.json')) || !existsSync(keysDir)) {
    throw new Error(`${networkDir} holds no genesis.json and keys folder: write them with \`basalt operator generate-blockchain-config --to=${networkDir}\``);
  }
  return readdirSync(keysDir)
    .sort()
    .map((address) => {
      const dataPath = join(keysDir, address);
      const keyFile = existsSync(join(dataPath, 'key')) ? undefined : join(dataPath, 'key.priv');
      if (keyFile !== undefined && !existsSync(keyFile)) throw new Error(`${dataPath} holds no private key (key or key.priv): only generated keys can run a node here`);
      return { address, dataPath, keyFile, nodeId: readFileSync(join(dataPath, 'key.pub'), 'utf8').trim().replace(/^0x/, '') };
    });
}

/** Starts one node: `p2pPort` resolves as soon as it listens for peers, `rpcPort` once it serves JSON-RPC. */
function startNode(
  folder: NodeFolder,
  args: string[],
  nodeFlags: string[],
  log: WriteStream,
  timeoutMs: number,
): { process: ChildProcess; output: () => string; p2pPort: Promise<number>; rpcPort: Promise<number> } {
  const child = spawn(process.execPath, [...nodeFlags, BASALT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const portFrom = (line: RegExp): Promise<number> =>
    new Promise<number>((resolvePort, reject) => {
      const timer = setTimeout(() => reject(new Error(`node ${folder.address} did not start within ${timeoutMs} ms:\n${tail(output)}`)), timeoutMs);
      const check = (): void => {
        const port = portIn(output, line);
        if (port === undefined) return;
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
        resolvePort(port);
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`node ${folder.address} exited (${code ?? signal}) before it served:\n${tail(output)}`));
      });
    });
  const onData = (data: Buffer): void => {
    output += data.toString();
    if (!log.writableEnded) log.write(data);
  };
  // Registered before the port listeners, so they see the output this chunk added.
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const p2pPort = portFrom(/P2P network started and listening on \S+:(\d+)/);
  const rpcPort = portFrom(/JSON-RPC HTTP service started and listening on \S+:(\d+)/);
  // Whoever awaits them reports a failure; these only keep it from being unhandled meanwhile.
  p2pPort.catch(() => undefined);
  rpcPort.catch(() => undefined);
  return { process: child, output: () => output, p2pPort, rpcPort };
}

function portIn(output: string, line: RegExp): number | undefined {
  const match = line.exec(output);
  return match === null ? undefined : Number(match[1]);
}

function tail(output: string): string {
  return output.split('\n').slice(-30).join('\n');
}

async function stopProcess(child: ChildProcess, killAfterMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  // 'close': after the last output too.
  const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await exited;
  clearTimeout(killer);
  return code;
}

/** Starts every node of the network one after the other, each with the earlier ones as bootnodes. */
export async function startNetwork(options: StartNetworkOptions): Promise<Network> {
  const networkDir = resolve(options.networkDir);
  const folders = nodeFolders(networkDir);
  const rpcBase = options.rpcPort ?? DEFAULT_RPC_PORT;
  const p2pBase = options.p2pPort ?? DEFAULT_P2P_PORT;
  const logsDir = join(networkDir, 'logs');
  mkdirSync(logsDir, { recursive: true });

  const nodes: NetworkNode[] = [];
  const logs: WriteStream[] = [];
  const stop = async (killAfterMs = 30_000): Promise<(number | null)[]> => {
    const codes = await Promise.all(nodes.map((node) => stopProcess(node.process, killAfterMs)));
    await Promise.all(logs.map((log) => new Promise((done) => log.end(done))));
    return codes;
  };
  try {
    const serving: Promise<void>[] = [];
    for (const [i, folder] of folders.entries()) {
      const args = [
        `--genesis-file=${join(networkDir, 'genesis.json')}`,
        `--data-path=${folder.dataPath}`,
        ...(folder.keyFile === undefined ? [] : [`--node-private-key-file=${folder.keyFile}`]),
        '--rpc-http-enabled',
        `--rpc-http-host=${HOST}`,
        `--rpc-http-port=${rpcBase === 0 ? 0 : rpcBase + i}`,
        '--rpc-http-api=ETH,NET,WEB3,QBFT,ADMIN,TXPOOL',
        `--p2p-interface=${HOST}`,
        `--p2p-host=${HOST}`,
        `--p2p-port=${p2pBase === 0 ? 0 : p2pBase + i}`,
        ...(nodes.length > 0 ? [`--bootnodes=${nodes.map((node) => node.enode).join(',')}`] : []),
        ...(options.nodeArgs ?? []),
      ];
      const log = createWriteStream(join(logsDir, `node-${i + 1}.log`), { flags: 'a' });
      logs.push(log);
      const started = startNode(folder, args, options.nodeFlags ?? [], log, options.readyTimeoutMs ?? 60_000);
      const node: NetworkNode = { address: folder.address, dataPath: folder.dataPath, enode: '', rpcUrl: '', process: started.process, output: started.output };
      nodes.push(node);
      serving.push(started.rpcPort.then((port) => void (node.rpcUrl = `http://${HOST}:${port}`)));
      // The next node starts as soon as this one listens for peers: it is that node's bootnode.
      node.enode = `enode://${folder.nodeId}@${HOST}:${await started.p2pPort}`;
    }
    await Promise.all(serving);
  } catch (error) {
    await stop(5_000);
    throw error;
  }
  return { nodes, stop };
}

// ---------------------------------------------------------------------------------------------
// As a command: start the network, show its blocks as they come, stop it on Ctrl-C
// ---------------------------------------------------------------------------------------------

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result as T;
}

function usage(): never {
  process.stderr.write('Usage: node dist/examples/four-nodes/start-network.js <network folder> [--rpc-http-port=<first port>] [--p2p-port=<first port>]\n');
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  const ports: Record<string, number> = {};
  const positional: string[] = [];
  for (const word of argv) {
    const match = /^--(rpc-http-port|p2p-port)=(\d+)$/.exec(word);
    if (match) ports[match[1]!] = Number(match[2]);
    else if (word.startsWith('-')) usage();
    else positional.push(word);
  }
  if (positional.length !== 1) usage();
  const networkDir = positional[0]!;
  const network = await startNetwork({ networkDir, rpcPort: ports['rpc-http-port'], p2pPort: ports['p2p-port'] });
  for (const [i, node] of network.nodes.entries()) {
    process.stdout.write(`node ${i + 1}  validator ${node.address}  JSON-RPC ${node.rpcUrl}  ${node.enode}\n`);
  }
  process.stdout.write(`Logs in ${join(resolve(networkDir), 'logs')}. Ctrl-C stops the network.\n`);

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('Stopping the nodes...\n');
    const codes = await network.stop();
    process.stdout.write(`Stopped (exit codes ${codes.join(', ')}).\n`);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  for (const node of network.nodes) node.process.once('exit', (code) => !stopping && process.stdout.write(`node ${node.address} exited with ${code}; see its log\n`));

  let shown = 0;
  for (;;) {
    await new Promise((done) => setTimeout(done, 1000));
    if (stopping) return;
    const heights = await Promise.all(network.nodes.map((node) => rpc<string>(node.rpcUrl, 'eth_blockNumber').then(Number, () => NaN)));
    const head = heights[0]!;
    if (!(head > shown)) continue;
    shown = head;
    const block = await rpc<{ hash: string; miner: string } | null>(network.nodes[0]!.rpcUrl, 'eth_getBlockByNumber', [`0x${head.toString(16)}`, false]).catch(() => null);
    process.stdout.write(`block ${head} ${block?.hash ?? ''} proposed by ${block?.miner ?? '?'}; heights ${heights.join(' ')}\n`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
