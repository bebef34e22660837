/**
 * The public JSON-RPC HTTP port when `--rpc-http-max-active-connections` is given, enforcing it as
 * Besu does: while that many connections are open, a new one is closed at once without an answer; the
 * open ones keep working, and once one closes a new one is accepted. Without the option the transport
 * threads listen on the port themselves (see the option's row in src/main/cli/options.ts for why).
 *
 * Why a TCP front in the supervisor rather than the limit in the HTTP workers: the uWebSockets.js
 * build the workers run (20.30) tells JavaScript nothing about HTTP connections opening or closing
 * (no `App.filter`, no socket hooks, no remote port), so an idle keep-alive connection is invisible
 * to them, and Node 20 cannot share a listening port between threads (no `reusePort`). So this
 * thread owns the port, counts connections, and joins each admitted one to one of the workers, which
 * listen on private unix sockets, in both directions.
 *
 * The relay costs CPU on every request: two more socket reads and writes and two more thread
 * wake-ups, nearly all of it in the kernel (about 11–13 µs per eth_blockNumber measured with
 * bench/rpc-throughput.ts, which doubles the node's CPU per request; README "Running a node"). It runs
 * on the main thread, which has little else to do: on a thread of its own, with `pipe()` or reading
 * into one reused buffer it measured the same within the noise. Relaying inside each transport
 * thread, next to its uWS server, saves about a quarter of that, but needs every thread to accept on
 * the port, which Node 20 cannot share between threads (no `reusePort`).
 *
 * With the `node` HTTP engine (src/transport/engine.ts) the same relay, without a limit, owns the
 * WebSocket and GraphQL ports too: node:http cannot share a port between threads on Node 20, where
 * uWS' listeners do (SO_REUSEPORT). The WebSocket limit stays the workers' (counted in shared memory).
 *
 * The client's address does not reach uWS (it sees a unix socket); nothing there reads it. Should
 * something need it, this uWS build accepts a PROXY protocol v2 header (`getProxiedRemoteAddress`).
 */
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Logger } from '../../shared/util/log.js';

const log = new Logger('JsonRpcHttp');

export interface ConnectionGuardConfig {
  host: string;
  /** 0 lets the kernel pick. */
  port: number;
  /** Infinity for a plain relay (the WebSocket and GraphQL ports of the `node` HTTP engine). */
  maxActiveConnections: number;
  /** The service in error messages; default `JSON-RPC HTTP`. */
  service?: string;
  /** The unix socket each HTTP worker listens on. */
  upstreams: readonly string[];
}

export interface ConnectionGuard {
  /** The port bound. */
  readonly port: number;
  /** Admitted connections that count against the limit: open, and the client has not sent its FIN. */
  activeConnections(): number;
  /**
   * Joins the connections accepted so far, and every later one, to the workers: call it once they
   * listen. Until then admitted connections wait, so that the port can be bound (and known) before
   * the workers start.
   */
  open(): void;
  /** Stops accepting connections; open ones go on until their worker closes them. */
  stopAccepting(): void;
  /** Drops whatever is still open and resolves once the port is released. */
  close(): Promise<void>;
}

interface Upstream {
  path: string;
  /** Connections joined to this worker and still open. */
  connections: number;
}

export async function startConnectionGuard(cfg: ConnectionGuardConfig): Promise<ConnectionGuard> {
  const upstreams: Upstream[] = cfg.upstreams.map((path) => ({ path, connections: 0 }));
  /** Every admitted connection until it closes. */
  const live = new Set<Socket>();
  /** Those that count against the limit: until the client's FIN or the close. */
  let active = 0;
  let waiting: Socket[] | undefined = [];
  let next = 0;

  const join = (client: Socket): void => {
    if (client.destroyed) return;
    const upstream = leastLoaded(upstreams, next);
    next = (upstreams.indexOf(upstream) + 1) % upstreams.length;
    upstream.connections++;
    const worker = createConnection({ path: upstream.path, allowHalfOpen: true });
    worker.on('error', ignore);
    worker.once('close', () => {
      upstream.connections--;
      // The worker is done with it: what the client still sends is only read away (splice).
      release(client);
    });
    splice(client, worker);
  };
  /** Frees a connection's place: at the client's FIN, when its worker closes, or at its close. */
  const counted = new WeakSet<Socket>();
  const release = (client: Socket): void => {
    if (counted.delete(client)) active--;
  };

  // allowHalfOpen: a client's FIN is passed on rather than answered with ours, so that the answer to
  // what it sent still comes back (uWS closes on FIN; its FIN then comes back through here).
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    if (active >= cfg.maxActiveConnections) {
      log.warn(`Rejecting new connection from ${client.remoteAddress}:${client.remotePort}. Max ${cfg.maxActiveConnections} active connections limit reached.`);
      client.destroy();
      return;
    }
    active++;
    counted.add(client);
    live.add(client);
    // A reset is the client's business; 'close' follows every error and does the cleaning up.
    client.on('error', ignore);
    // The client's FIN frees its place at once, as in Besu (Netty closes a connection on FIN); the
    // connection itself lasts until the worker has answered what came before the FIN.
    client.once('end', () => release(client));
    client.once('close', () => {
      release(client);
      live.delete(client);
    });
    if (waiting === undefined) join(client);
    else waiting.push(client);
  });
  const service = cfg.service ?? 'JSON-RPC HTTP';
  const port = await listen(server, cfg.host, cfg.port, service);
  const closed = once(server, 'close');

  return {
    port,
    activeConnections: () => active,
    open() {
      const accepted = waiting ?? [];
      waiting = undefined;
      for (const client of accepted) join(client);
    },
    stopAccepting() {
      if (server.listening) server.close();
    },
    async close() {
      if (server.listening) server.close();
      for (const client of live) client.destroy();
      await closed;
    },
  };
}

/** The worker with the fewest open connections, the first of equals from `from` on (round-robin). */
function leastLoaded(upstreams: Upstream[], from: number): Upstream {
  let best = upstreams[from]!;
  for (let i = 1; i < upstreams.length; i++) {
    const candidate = upstreams[(from + i) % upstreams.length]!;
    if (candidate.connections < best.connections) best = candidate;
  }
  return best;
}

/**
 * Joins a client connection to its worker connection: each side's bytes are written to the other,
 * and a side is paused while the other cannot take more. A FIN is passed on after what came before
 * it. When the worker closes (uWS closes on a client's FIN, after a `Connection: close` answer such
 * as a 413 for a body that is still coming, on its idle timeout, at shutdown), what it wrote is
 * delivered and followed by a FIN; what the client still sends is read and dropped until its own FIN
 * or LINGER_MS, and only then is the connection closed: closing with unread bytes would send a reset,
 * and a reset can make the client's kernel drop the answer before the client has read it. An error
 * on either side drops the other at once.
 */
function splice(client: Socket, worker: Socket): void {
  pump(client, worker);
  pump(worker, client);
  client.once('end', () => {
    if (!worker.destroyed) worker.end();
  });
  worker.once('end', () => client.end());
  client.once('finish', () => {
    if (client.readableEnded) {
      client.destroy();
      return;
    }
    const linger = setTimeout(() => client.destroy(), LINGER_MS).unref();
    client.once('end', () => {
      clearTimeout(linger);
      client.destroy();
    });
  });
  client.once('close', () => worker.destroy());
  worker.once('close', (hadError) => {
    if (hadError) {
      client.destroy();
      return;
    }
    client.resume();
    if (!client.writableEnded) client.end();
  });
}

/** How long a connection its worker closed is read away before it is closed regardless. */
const LINGER_MS = 2_000;

/** `from`'s bytes written to `to`, `from` paused while `to` cannot take more; dropped once `to` is closed. */
function pump(from: Socket, to: Socket): void {
  from.on('data', (chunk: Buffer) => {
    if (to.destroyed || to.writableEnded) return;
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => from.resume());
}

function listen(server: Server, host: string, port: number, service: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error): void => reject(new Error(`Failed to bind the ${service} port ${host}:${port}: ${err.message}`));
    server.once('error', failed);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', failed);
      // Out of file descriptors, say: the connection is lost, the port goes on.
      server.on('error', (err) => log.warn(`${service} port: ${err.message}`));
      const address = server.address();
      if (typeof address === 'object' && address !== null) resolve(address.port);
      else reject(new Error(`no port bound on ${host}`));
    });
  });
}

function ignore(): void {}
