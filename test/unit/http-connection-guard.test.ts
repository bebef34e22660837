/**
 * The connection guard in front of the HTTP workers (src/main/supervisor/http-connection-guard.ts),
 * with plain unix-socket servers standing in for the workers so that each test decides exactly what
 * the worker does: answer, half-close, close, stall. test/unit/http-transport.test.ts runs the real
 * uWS servers behind it.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startConnectionGuard, type ConnectionGuard, type ConnectionGuardConfig } from '../../src/main/supervisor/http-connection-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'basalt-guard-test-'));
let nextSocket = 0;
const cleanups: (() => Promise<unknown> | void)[] = [];
test.after.always(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A stand-in worker on a fresh unix socket; `onConnection` decides what it does with each connection. */
async function worker(onConnection: (socket: Socket) => void): Promise<{ path: string; server: Server; connections: Socket[] }> {
  const path = join(dir, `w${nextSocket++}.sock`);
  const connections: Socket[] = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    connections.push(socket);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => {
    for (const socket of connections) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return { path, server, connections };
}

/** Answers each chunk with `name:` and the chunk, and closes like uWS on the client's FIN. */
const echoAs = (name: string) => (socket: Socket) => {
  socket.on('data', (chunk: Buffer) => socket.write(`${name}:${chunk.toString()}`));
  socket.on('end', () => socket.end());
};

async function guard(cfg: Partial<ConnectionGuardConfig> & Pick<ConnectionGuardConfig, 'upstreams'>, opened = true): Promise<ConnectionGuard> {
  const started = await startConnectionGuard({ host: '127.0.0.1', port: 0, maxActiveConnections: 80, ...cfg });
  cleanups.push(() => started.close());
  if (opened) started.open();
  return started;
}

interface Client {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves once `text` has been received. */
  receive(text: string): Promise<void>;
  /** Resolves when the connection closed, with what was received. */
  closed: Promise<string>;
}

/**
 * A connection to the guard. With `allowHalfOpen` it does not answer the guard's FIN with its own, so
 * that only the guard can close it.
 */
async function client(port: number, allowHalfOpen = false): Promise<Client> {
  const socket = connect({ host: '127.0.0.1', port, allowHalfOpen });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = closeOf(socket).then(() => received);
  await once(socket, 'connect');
  cleanups.push(() => void socket.destroy());
  const receive = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!received.includes(text)) return;
        socket.off('data', check);
        resolve();
      };
      socket.on('data', check);
      void closed.then(() => reject(new Error(`closed after receiving ${JSON.stringify(received)}, waiting for ${JSON.stringify(text)}`)));
      check();
    });
  return { socket, received: () => received, receive, closed };
}

/** Resolves when `socket` closes (events.once would reject on a reset). */
function closeOf(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/** Resolves once `condition` holds; rejects after 5 s. */
async function until(description: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function exchange(c: Client, text: string, reply: string): Promise<void> {
  c.socket.write(text);
  await c.receive(reply);
}

test('connections beyond the limit are closed unanswered; the open ones keep working; a freed place is taken again', async (t) => {
  const w = await worker(echoAs('w'));
  const g = await guard({ maxActiveConnections: 2, upstreams: [w.path] });
  const a = await client(g.port);
  const b = await client(g.port);
  await exchange(a, 'a1', 'w:a1');
  await exchange(b, 'b1', 'w:b1');
  t.is(g.activeConnections(), 2);

  const refused = await client(g.port);
  refused.socket.write('c1');
  t.is(await refused.closed, '');
  await exchange(a, 'a2', 'w:a2');
  await exchange(b, 'b2', 'w:b2');

  // Once the guard has passed a's FIN on and the worker has closed, a sees the end: its place is free.
  a.socket.end();
  await a.closed;
  t.is(g.activeConnections(), 1);
  const c = await client(g.port);
  await exchange(c, 'c2', 'w:c2');
  t.is(g.activeConnections(), 2);
});

test('connections accepted before open() wait, and are joined with what they sent once the workers listen', async (t) => {
  const w = await worker(echoAs('w'));
  const g = await guard({ upstreams: [w.path] }, false);
  const early = await client(g.port);
  early.socket.write('early');
  await until('the guard to accept the connection', () => g.activeConnections() === 1);
  g.open();
  await early.receive('w:early');
  t.is(w.connections.length, 1);
});

test('a client\'s FIN reaches the worker after its data, and the worker\'s answer still comes back', async (t) => {
  const w = await worker((socket) => {
    let got = '';
    socket.on('data', (chunk: Buffer) => (got += chunk.toString()));
    socket.on('end', () => socket.end(`answer to ${got}`));
  });
  const g = await guard({ upstreams: [w.path] });
  const c = await client(g.port);
  c.socket.end('question');
  t.is(await c.closed, 'answer to question');
});

test('when the worker closes, what it wrote is delivered and the place is freed without waiting for the client\'s FIN', async (t) => {
  const w = await worker((socket) => socket.end('bye'));
  const g = await guard({ upstreams: [w.path] });
  const c = await client(g.port, true);
  const ended = once(c.socket, 'end');
  await c.receive('bye');
  await ended;
  // The client never sends its FIN: the worker's close frees the place (the guard closes the
  // connection after reading it away for a while).
  await until('the guard to free the place', () => g.activeConnections() === 0);
  t.false(c.socket.writableEnded);
});

test('a worker that answers and closes while the client is still sending: the answer arrives, the connection ends without a reset', async (t) => {
  // As uWS does with a 413 for a body still coming: answer at the first bytes, then close.
  const w = await worker((socket) => socket.once('data', () => socket.end('HTTP/1.1 413 Payload Too Large\r\n\r\n')));
  const g = await guard({ upstreams: [w.path] });
  const socket = connect({ host: '127.0.0.1', port: g.port });
  let received = '';
  let error: Error | undefined;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', (err) => (error = err));
  await once(socket, 'connect');
  cleanups.push(() => void socket.destroy());
  // 8 MiB in 64 KiB pieces, each written once the last was taken: far more than the socket buffers hold.
  const piece = Buffer.alloc(64 * 1024, 0x78);
  let sent = 0;
  while (sent < 128 && !socket.destroyed && !socket.readableEnded) {
    if (!socket.write(piece)) await Promise.race([once(socket, 'drain'), once(socket, 'end'), once(socket, 'close')]);
    sent++;
  }
  socket.end();
  await closeOf(socket);
  t.is(received, 'HTTP/1.1 413 Payload Too Large\r\n\r\n');
  t.is(error, undefined);
});

test('a worker that cannot be reached drops the client', async (t) => {
  const g = await guard({ upstreams: [join(dir, 'nobody-listens.sock')] });
  const c = await client(g.port);
  t.is(await c.closed, '');
  await until('the guard to release the place', () => g.activeConnections() === 0);
  t.pass();
});

test('a client that resets drops the worker connection', async (t) => {
  const w = await worker(echoAs('w'));
  const g = await guard({ upstreams: [w.path] });
  const c = await client(g.port);
  await exchange(c, 'x', 'w:x');
  c.socket.resetAndDestroy();
  await closeOf(w.connections[0]!);
  await until('the guard to release the place', () => g.activeConnections() === 0);
  t.pass();
});

test('large transfers both ways arrive intact through a slow reader (backpressure)', async (t) => {
  const size = 16 * 1024 * 1024;
  const payload = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) payload.writeUInt32LE((i * 2654435761) >>> 0, i);
  const digest = createHash('sha256').update(payload).digest('hex');
  // The worker hashes what it reads, slowly, then sends the payload back.
  const w = await worker((socket) => {
    const hash = createHash('sha256');
    socket.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      socket.pause();
      setTimeout(() => socket.resume(), 1);
    });
    socket.on('end', () => {
      socket.write(`${hash.digest('hex')}\n`);
      socket.end(payload);
    });
  });
  const g = await guard({ upstreams: [w.path] });
  const socket = connect({ host: '127.0.0.1', port: g.port, allowHalfOpen: true });
  cleanups.push(() => void socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.end(payload);
  await closeOf(socket);
  const received = Buffer.concat(chunks);
  const newline = received.indexOf('\n');
  t.is(received.subarray(0, newline).toString(), digest, 'the worker read the whole payload');
  t.is(createHash('sha256').update(received.subarray(newline + 1)).digest('hex'), digest, 'the client read the whole answer');
});

test('connections go to the worker with the fewest open connections, round-robin among equals', async (t) => {
  const workers = await Promise.all(['w0', 'w1', 'w2'].map((name) => worker(echoAs(name))));
  const g = await guard({ upstreams: workers.map((w) => w.path) });
  const nameOf = async (c: Client): Promise<string> => {
    c.socket.write('?');
    await c.receive(':?');
    return c.received().split(':')[0]!;
  };
  const clients: Client[] = [];
  for (let i = 0; i < 6; i++) clients.push(await client(g.port));
  const names: string[] = [];
  for (const c of clients) names.push(await nameOf(c));
  t.deepEqual(names, ['w0', 'w1', 'w2', 'w0', 'w1', 'w2']);

  // Both connections of w1 close: the next two go there.
  for (const c of clients.filter((_, i) => names[i] === 'w1')) {
    c.socket.end();
    await c.closed;
  }
  const again = [await client(g.port), await client(g.port)];
  t.deepEqual([await nameOf(again[0]!), await nameOf(again[1]!)], ['w1', 'w1']);
});

test('close() drops the open connections and releases the port', async (t) => {
  const w = await worker(echoAs('w'));
  const g = await startConnectionGuard({ host: '127.0.0.1', port: 0, maxActiveConnections: 5, upstreams: [w.path] });
  g.open();
  const c = await client(g.port);
  await exchange(c, 'x', 'w:x');
  g.stopAccepting();
  await exchange(c, 'still', 'w:still');
  await g.close();
  await c.closed;
  const rebound = createServer();
  await new Promise<void>((resolve, reject) => rebound.once('error', reject).listen({ host: '127.0.0.1', port: g.port, exclusive: true }, resolve));
  await new Promise((resolve) => rebound.close(resolve));
  t.pass();
});

test('a busy port is a start-up error naming it', async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    await t.throwsAsync(startConnectionGuard({ host: '127.0.0.1', port, maxActiveConnections: 5, upstreams: [] }), {
      message: new RegExp(`^Failed to bind the JSON-RPC HTTP port 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
    });
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
