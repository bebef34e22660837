/**
 * `--rpc-http-max-active-connections` against real nodes, over raw keep-alive connections: as in Besu,
 * a connection opened while the limit is reached is closed without an answer, the open ones keep
 * working, and once one closes a new one is served. With the option the supervisor's connection guard
 * owns the port and relays to the transport threads' unix sockets: the health, login and CORS answers
 * come through it, and the sockets are removed when the node stops. Without it there is no limit and
 * the threads own the port. Serial: one node at a time, up to 100 sockets.
 */
import test from 'ava';
import { mkdtempSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeDataPath, runCli, startNode } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const started: NodeProcess[] = [];
const sockets: Socket[] = [];

const removeAfter: string[] = [];

test.after.always(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(started.map((node) => node.kill()));
  for (const node of started) removeDataPath(node.dataPath);
  for (const path of removeAfter) removeDataPath(path);
});

async function node(args: string[], env?: Record<string, string>): Promise<NodeProcess> {
  const started_ = await startNode({ args, ...(env ? { env } : {}) });
  started.push(started_);
  return started_;
}

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });

/** A raw keep-alive HTTP/1.1 connection: what it received, and whether it was closed. */
class Connection {
  readonly socket: Socket;
  readonly closed: Promise<string>;
  readonly connected: Promise<void>;
  private received = '';
  private waiter: (() => void) | undefined;

  constructor(port: number) {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.toString('latin1');
      this.waiter?.();
    });
    // A refused connection may see a reset rather than a FIN: either way it ends unanswered.
    socket.on('error', () => undefined);
    // events.once would reject on the reset.
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.waiter?.();
        resolve(this.received);
      }),
    );
    this.connected = new Promise((resolve) => socket.once('connect', () => resolve()));
  }

  /** The local port, as the node's log names the client. */
  get localPort(): number {
    return this.socket.localPort!;
  }

  /** Sends eth_blockNumber and resolves with the status line and body of the answer. */
  async blockNumber(): Promise<{ status: string; body: string }> {
    this.received = '';
    this.socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`);
    for (;;) {
      const headEnd = this.received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(this.received);
      if (headEnd >= 0 && length && this.received.length >= headEnd + 4 + Number(length[1])) {
        return { status: this.received.slice(0, this.received.indexOf('\r\n')), body: this.received.slice(headEnd + 4, headEnd + 4 + Number(length[1])) };
      }
      if (this.socket.destroyed) throw new Error(`connection closed after ${JSON.stringify(this.received)}`);
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}

/** `count` connections that each made a request and got its answer (all at once: uWS closes a connection idle for 10 s). */
async function answeredConnections(port: number, count: number): Promise<Connection[]> {
  const connections = Array.from({ length: count }, () => new Connection(port));
  await Promise.all(
    connections.map(async (connection) => {
      await connection.connected;
      const answer = await connection.blockNumber();
      if (answer.status !== 'HTTP/1.1 200 OK' || !answer.body.includes('"result":"0x')) throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    }),
  );
  return connections;
}

/** Opens one connection too many: the node closes it without an answer and logs the refusal. */
async function refusedConnection(served: NodeProcess, limit: number): Promise<void> {
  const since = served.output().length;
  const extra = new Connection(served.port);
  await extra.connected;
  const localPort = extra.localPort;
  // Closed without a byte, whatever it sends.
  extra.socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`);
  if ((await extra.closed) !== '') throw new Error('the connection past the limit was answered');
  await served.waitForLog(new RegExp(`WARN .*Rejecting new connection from 127\\.0\\.0\\.1:${localPort}\\. Max ${limit} active connections limit reached\\.`), { since, timeoutMs: 10_000 });
}

/** The transport threads' unix sockets under the node's temporary directory, by directory. */
function httpSockets(tmp: string): string[] {
  return readdirSync(tmp)
    .filter((name) => name.startsWith('basalt-http-'))
    .flatMap((dir) => readdirSync(join(tmp, dir)).map((socket) => `${dir}/${socket}`));
}

test.serial('--rpc-http-max-active-connections=5: the 6th connection is closed unanswered, the 5 keep working, a freed place is taken', async (t) => {
  // The node's own temporary directory, to see its sockets come and go.
  const tmp = mkdtempSync(join(tmpdir(), 'basalt-guard-tmp-'));
  removeAfter.push(tmp);
  const served = await node(['--rpc-http-max-active-connections=5', '--rpc-http-workers=2'], { TMPDIR: tmp });
  t.deepEqual(httpSockets(tmp).map((path) => path.split('/')[1]).sort(), ['worker-0.sock', 'worker-1.sock']);
  const five = await answeredConnections(served.port, 5);

  await t.notThrowsAsync(refusedConnection(served, 5));
  const again = await Promise.all(five.map((connection) => connection.blockNumber()));
  t.deepEqual(again.map((answer) => answer.status), Array(5).fill('HTTP/1.1 200 OK'));

  // The node answers the FIN with its own once it has freed the place.
  five[0]!.socket.end();
  await five[0]!.closed;
  const next = await answeredConnections(served.port, 1);
  t.is(next.length, 1);
  await t.notThrowsAsync(refusedConnection(served, 5));

  // SIGTERM with keep-alive connections open: the node closes them, stops cleanly and removes its sockets.
  t.is(await served.stop(), 0);
  for (const connection of [...five.slice(1), ...next]) await connection.closed;
  t.deepEqual(httpSockets(tmp), []);
});

test.serial('without the option there is no limit (unlike Besu\'s 80) and no relay: 100 connections are served', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'basalt-guard-tmp-'));
  removeAfter.push(tmp);
  const served = await node(['--rpc-http-workers=2'], { TMPDIR: tmp });
  t.regex(served.output(), /JSON-RPC HTTP service started and listening on 127\.0\.0\.1:\d+ \(2 workers\)\n/);
  // On uWS the transport threads listen on the port themselves: no unix sockets, no guard. The
  // node:http engine cannot share a port between threads, so it is relayed, without a limit.
  const relayed = /HTTP engine: node:http/.test(served.output());
  t.is(httpSockets(tmp).length, relayed ? 2 : 0);
  const hundred = await answeredConnections(served.port, 100);
  const again = await Promise.all(hundred.map((connection) => connection.blockNumber()));
  t.deepEqual(again.map((answer) => answer.status), Array(100).fill('HTTP/1.1 200 OK'));
  t.notRegex(served.output(), /Rejecting new connection/);
  t.is(await served.stop(), 0);
});

test.serial('--rpc-http-max-active-connections=80 (Besu\'s default) refuses the 81st', async (t) => {
  const served = await node(['--rpc-http-max-active-connections=80']);
  t.regex(served.output(), /JSON-RPC HTTP service started and listening on 127\.0\.0\.1:\d+ \(.*at most 80 connections\)/);
  const eighty = await answeredConnections(served.port, 80);
  await t.notThrowsAsync(refusedConnection(served, 80));
  const again = await Promise.all(eighty.map((connection) => connection.blockNumber()));
  t.deepEqual(again.map((answer) => answer.status), Array(80).fill('HTTP/1.1 200 OK'));
  t.is(await served.stop(), 0);
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own, with exactly the headers given. */
function request(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test.serial('health, login and CORS answers come through the guard as from Besu', async (t) => {
  const served = await node(['--rpc-http-workers=2', '--rpc-http-max-active-connections=10', '--rpc-http-cors-origins=http://foo.io']);
  const host = { Host: `127.0.0.1:${served.port}` };
  const up = '{\n  "status" : "UP"\n}';

  const liveness = await request(served.port, 'GET', '/liveness', host);
  t.deepEqual([liveness.status, liveness.body], [200, up]);
  // P2P is off in test nodes: ready without peers.
  const readiness = await request(served.port, 'GET', '/readiness', host);
  t.deepEqual([readiness.status, readiness.body], [200, up]);
  const login = await request(served.port, 'POST', '/login', { ...host, 'Content-Type': 'application/json' }, '{"username":"u","password":"p"}');
  t.deepEqual([login.status, login.body], [400, '']);

  const preflight = await request(served.port, 'OPTIONS', '/', { ...host, Origin: 'http://foo.io', 'Access-Control-Request-Method': 'POST' });
  t.is(preflight.status, 204);
  t.is(preflight.headers['access-control-allow-origin'], 'http://foo.io');
  const call = await request(served.port, 'POST', '/', { ...host, Origin: 'http://foo.io', 'Content-Type': 'application/json' }, BODY);
  t.is(call.status, 200);
  t.is(call.headers['access-control-allow-origin'], 'http://foo.io');
  t.regex(call.body, /"result":"0x[0-9a-f]+"/);
  const denied = await request(served.port, 'POST', '/', { ...host, Origin: 'http://bar.io', 'Content-Type': 'application/json' }, BODY);
  t.is(denied.status, 403);
  t.is(await served.stop(), 0);
});

test.serial('--help describes the option with Besu\'s text and default', async (t) => {
  const help = await runCli(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout.replace(/\s+/g, ' '), /--rpc-http-max-active-connections=<INTEGER> Maximum number of HTTP connections allowed for JSON-RPC; further connections are closed \(default: unlimited\)/);
});
