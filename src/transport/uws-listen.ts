/**
 * Listening with a raw uWebSockets.js app on a port several transport threads share. uWS listens with
 * SO_REUSEPORT when given a port number, and the kernel spreads the connections over the threads.
 *
 * Port 0 needs care: Linux lets a port the kernel picked be shared with SO_REUSEPORT, but uSockets
 * sets SO_REUSEPORT only when given a port number, so a uWS listen on 0 cannot be joined. The kernel
 * picks the port for an exclusive probe instead and uWS listens on that number; the other threads are
 * then started with it. A process that takes the port between the probe and the listen makes the
 * listen fail, and the next probe picks another.
 */
import { createServer } from 'node:net';
import uWS from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';

export interface UwsListening {
  socket: us_listen_socket;
  port: number;
}

/** Listens on `host:port` (0: a free port others can share); `what` names the service in errors. */
export async function listenUws(app: TemplatedApp, host: string, port: number, what: string): Promise<UwsListening> {
  if (port !== 0) return listenOnce(app, host, port, what);
  for (let attempt = 1; ; attempt++) {
    try {
      return await listenOnce(app, host, await kernelPickedPort(host), what);
    } catch (err) {
      if (attempt === 5) throw err;
    }
  }
}

function listenOnce(app: TemplatedApp, host: string, port: number, what: string): Promise<UwsListening> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket === false) reject(new Error(`Failed to bind the ${what} port ${host}:${port}`));
      else resolve({ socket, port: uWS.us_socket_local_port(socket as unknown as Parameters<typeof uWS.us_socket_local_port>[0]) });
    });
  });
}

function kernelPickedPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error(`no port bound on ${host}`))));
    });
  });
}

export function closeListenSocket(socket: us_listen_socket): void {
  uWS.us_listen_socket_close(socket);
}
