/**
 * JSON-RPC over IPC against a node process (rpc-auth-cli.md §7, with Basalt's framing): an owner-only
 * socket at <data-path>/node.ipc; a request split across writes and several requests in one write;
 * newline-separated answers; subscriptions; a client that never reads cut off; a node refused on a
 * path in use; a socket left by a killed node replaced at the next start; the socket removed on stop.
 */
import test from 'ava';
import { existsSync, statSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { removeDataPath, startNode, tempDataPath } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const started: NodeProcess[] = [];
const dataPath = tempDataPath();
const socketPath = join(dataPath, 'node.ipc');

test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  removeDataPath(dataPath);
});

async function ipcNode(path = dataPath, args: string[] = []): Promise<NodeProcess> {
  const node = await startNode({ dataPath: path, args: ['--Xrpc-ipc-enabled', '--Xrpc-ipc-api=ETH,NET,WEB3,TXPOOL', ...args] });
  started.push(node);
  await node.waitForLog(/JSON-RPC IPC service started and listening on \S+/);
  return node;
}

/** An IPC connection whose answers are read line by line. */
class IpcClient {
  private buffer = '';
  readonly lines: string[] = [];
  private wake: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        this.lines.push(this.buffer.slice(0, newline));
        this.buffer = this.buffer.slice(newline + 1);
      }
      this.wake?.();
    });
  }

  static open(path: string): Promise<IpcClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(path);
      socket.once('connect', () => resolve(new IpcClient(socket)));
      socket.once('error', reject);
    });
  }

  write(text: string): Promise<void> {
    return new Promise((resolve) => this.socket.write(text, () => resolve()));
  }

  /** Waits until `count` lines have come in; answers them parsed. */
  async lineCount(count: number, timeoutMs = 20_000): Promise<unknown[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} lines, got ${JSON.stringify(this.lines)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.lines.slice(0, count).map((line) => JSON.parse(line) as unknown);
  }

  close(): void {
    this.socket.end();
  }

  /** Stops reading: what the node sends piles up in the socket and then in the node. */
  stopReading(): void {
    this.socket.pause();
  }

  /** Reads again and resolves once the node has closed the connection (a paused socket never sees the end). */
  closed(): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.on('error', () => undefined);
      this.socket.resume();
    });
  }
}

const byId = (answers: unknown[]) => new Map((answers as { id: unknown }[]).map((answer) => [JSON.stringify(answer.id), answer]));

test.serial('the socket is owner-only; requests split across writes and several in one write are answered line by line', async (t) => {
  await ipcNode();
  const stat = statSync(socketPath);
  t.true(stat.isSocket());
  t.is(stat.mode & 0o777, 0o600);

  const client = await IpcClient.open(socketPath);
  // One request in three writes, the socket flushed each time before the next piece goes.
  const request = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
  for (const piece of [request.slice(0, 7), request.slice(7, 30), request.slice(30)]) {
    await client.write(piece);
    await new Promise((r) => setTimeout(r, 30));
  }
  t.deepEqual(await client.lineCount(1), [{ jsonrpc: '2.0', id: 1, result: '0x539' }]);
  // Several values in one write, with and without whitespace between them.
  await client.write('{"jsonrpc":"2.0","id":2,"method":"net_version"}{"jsonrpc":"2.0","id":3,"method":"rpc_modules"}\n  [{"jsonrpc":"2.0","id":4,"method":"web3_clientVersion"},{"jsonrpc":"2.0","method":"eth_chainId"}]');
  const answers = byId(await client.lineCount(4));
  t.deepEqual(answers.get('2'), { jsonrpc: '2.0', id: 2, result: '1337' });
  t.deepEqual(answers.get('3'), { jsonrpc: '2.0', id: 3, result: { eth: '1.0', net: '1.0', web3: '1.0', txpool: '1.0' } });
  const batch = (await client.lineCount(4)).find(Array.isArray) as { id: number; result: string }[];
  t.is(batch.length, 1);
  t.regex(batch[0]!.result, /^basalt\//);
  // Not JSON, and an empty batch (§7).
  await client.write('}{"jsonrpc":"2.0","id":5,"method":"eth_chainId"}[]');
  const errors = (await client.lineCount(7)).slice(4);
  t.deepEqual(errors.filter((answer) => (answer as { id: unknown }).id === null), [
    { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
  ]);
  client.close();
});

test.serial('subscriptions over IPC: notifications as lines; eth_subscribe is "Method not found" over HTTP', async (t) => {
  const node = started[0]!;
  const client = await IpcClient.open(socketPath);
  await client.write('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
  const [answer] = (await client.lineCount(1)) as { result: string }[];
  t.regex(answer!.result, /^0x[0-9a-f]+$/);
  const notifications = (await client.lineCount(3)).slice(1) as { method: string; params: { subscription: string; result: { number: string } } }[];
  t.true(notifications.every((n) => n.method === 'eth_subscription' && n.params.subscription === answer!.result));
  t.is(BigInt(notifications[1]!.params.result.number), BigInt(notifications[0]!.params.result.number) + 1n);
  const overHttp = await fetch(node.url, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}' });
  t.deepEqual(await overHttp.json(), { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
  client.close();
});

test.serial('a client that never reads is cut off once, while the node keeps serving others', async (t) => {
  const node = started[0]!;
  const reader = await IpcClient.open(socketPath);
  const stalled = await IpcClient.open(socketPath);
  stalled.stopReading();
  const since = node.output().length;
  let cut = false;
  const line = node.waitForLog(/Closed an IPC connection: more than \d+ bytes waited/, { since, timeoutMs: 60_000 }).then(({ text }) => {
    cut = true;
    return text;
  });
  // Each batch asks for 700 blocks (~1.2 kB each, ~0.8 MB per answer): far more than the send buffer
  // limit plus what the socket holds, unless the node cuts the connection first.
  const batch = JSON.stringify(Array.from({ length: 700 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['0x1', false] })));
  for (let i = 0; i < 60 && !cut; i++) {
    await stalled.write(batch);
    // Meanwhile the node answers another connection.
    await reader.write(`{"jsonrpc":"2.0","id":${i},"method":"eth_chainId"}`);
    t.deepEqual((await reader.lineCount(i + 1)).at(-1), { jsonrpc: '2.0', id: i, result: '0x539' });
  }
  t.regex(await line, /more than 8388608 bytes/);
  await stalled.closed();
  t.is(node.output().slice(since).match(/Closed an IPC connection/g)?.length, 1, 'said once');
  reader.close();
});

test.serial('a second node on the same IPC path is refused while the first serves it', async (t) => {
  const otherPath = tempDataPath();
  try {
    const error = await t.throwsAsync(ipcNode(otherPath, [`--Xrpc-ipc-path=${socketPath}`]));
    t.regex(error!.message, /another process is serving .*node\.ipc/);
    const client = await IpcClient.open(socketPath);
    await client.write('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    t.deepEqual(await client.lineCount(1), [{ jsonrpc: '2.0', id: 1, result: '0x539' }]);
    client.close();
  } finally {
    removeDataPath(otherPath);
  }
});

test.serial('a socket left by a killed node is replaced at the next start; a stopped node removes it', async (t) => {
  await started.shift()!.kill();
  t.true(existsSync(socketPath), 'SIGKILL leaves the socket file behind');
  const node = await ipcNode();
  t.regex(node.output(), /Removing the stale IPC socket/);
  const client = await IpcClient.open(socketPath);
  await client.write('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
  t.deepEqual(await client.lineCount(1), [{ jsonrpc: '2.0', id: 1, result: '0x539' }]);
  client.close();
  t.is(await node.stop(), 0);
  t.false(existsSync(socketPath));
});
