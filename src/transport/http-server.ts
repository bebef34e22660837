/**
 * The JSON-RPC HTTP port on hyper-express (uWebSockets.js). Several worker threads may each start
 * one on the same port: uWS listens with SO_REUSEPORT and the kernel spreads connections.
 *
 * Every request goes through the one HTTP policy (http-policy.ts: host allow-list → CORS → body size
 * limit → route → Accept) before anything is served. Routing is done by the policy rather than by
 * hyper-express so that the 404/405 answers, and the order of the checks before them, are exactly
 * Besu's.
 */
import { createServer } from 'node:net';
import { Server, type Request, type Response } from 'hyper-express';
import type { HttpListenConfig } from '../shared/actors/worker-data.js';
import type { JsonRpcContext, RpcCaller } from './jsonrpc.js';
import { Logger } from '../shared/util/log.js';
import { createHttpPolicy, healthBody, isReady, type HealthSnapshot, type HttpAnswer, type HttpHeaders } from './http-policy.js';
import { serveJsonRpc } from './jsonrpc-route.js';
import { assertNativeUws } from '../shared/uws-native.js';

const log = new Logger('JsonRpcHttp');

export interface HttpServerConfig extends HttpListenConfig {
  /** Executes one method call (see `createMethodCaller`). */
  call: RpcCaller;
  /** Node state `/readiness` is decided from; read on each health request. */
  health(): HealthSnapshot;
}

export interface HttpServerHandle {
  /** The port actually bound. */
  readonly port: number;
  /** Stops accepting connections. */
  close(): Promise<void>;
}

/**
 * hyper-express enforces its body limit before any handler runs, which would put the size check
 * ahead of the host and CORS checks. It is disabled, and the policy applies the limit.
 */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export async function startHttpServer(cfg: HttpServerConfig): Promise<HttpServerHandle> {
  assertNativeUws();
  const policy = createHttpPolicy(cfg);
  const timeoutMs = (cfg.timeoutSeconds ?? 30) * 1000;
  const rpc: JsonRpcContext = { maxBatchSize: cfg.maxBatchSize, prettyPrint: cfg.prettyPrint, call: cfg.call };

  const handle = async (request: Request, response: Response): Promise<void> => {
    const headers = request.headers;
    const verdict = policy({
      method: request.method,
      path: request.path,
      host: headers.host,
      origin: headers.origin,
      contentLength: headers['content-length'],
      accept: headers.accept,
      accessControlRequestMethod: headers['access-control-request-method'],
    });
    if (verdict.kind === 'answer') {
      sendAnswer(response, verdict);
      return;
    }
    writeHeaders(response, verdict.headers);
    switch (verdict.route) {
      case 'created':
        response.status(201).send();
        return;
      case 'liveness':
        response.status(200).send(healthBody(true));
        return;
      case 'readiness': {
        const ready = isReady(cfg.health(), new URLSearchParams(request.path_query));
        response.status(ready ? 200 : 503).send(healthBody(ready));
        return;
      }
      case 'login':
        response.status(400, 'Authentication not enabled').send();
        return;
      case 'jsonrpc':
        // POST / is served by the route on the uWS app itself (jsonrpc-route.ts), which uWS ranks above
        // this catch-all; no request gets here.
        response.status(500).send();
        return;
    }
  };

  const server = new Server({ max_body_length: UNLIMITED, auto_close: false });
  server.set_error_handler((_request, response, error) => {
    log.error('HTTP request failed', error);
    response.atomic(() => response.status(500).send());
  });
  server.any('/*', handle);
  const jsonRpcRoute = serveJsonRpc(server.uws_instance, { policy, maxRequestContentLength: cfg.maxRequestContentLength, timeoutMs, rpc });
  const port = await bindPort(cfg.host, cfg.port, (candidate) => listenOn(server, cfg.host, candidate));
  return {
    port,
    close: async () => {
      jsonRpcRoute.close();
      server.close();
      // Closing the listen socket leaves keep-alive connections polling; a worker thread that ends
      // with them open aborts the whole process. uWS' App.close() closes every socket it owns.
      (server.uws_instance as unknown as { close(): void }).close();
    },
  };
}

async function listenOn(server: Server, host: string, port: number): Promise<number> {
  try {
    await server.listen(port, host);
  } catch (err) {
    // hyper-express rejects with a bare string
    throw new Error(`Failed to bind the JSON-RPC HTTP port ${host}:${port}: ${String(err)}`);
  }
  return server.port;
}

/**
 * Listens with `listen` on `port`, or for port 0 on a port shareable by the other HTTP workers. Linux lets a port the kernel picked be shared with
 * SO_REUSEPORT, but uSockets sets SO_REUSEPORT only when given a port number, so a uWS listen on 0
 * cannot be joined. The kernel picks the port for an exclusive probe instead, and uWS listens on
 * that number. A process that takes the port between the probe and the listen makes the listen
 * fail, and the next probe picks another; only a socket of the same user that also sets
 * SO_REUSEPORT could join unnoticed, and a Basalt node given that port probes it exclusively first
 * (supervisor/ports.ts).
 */
export async function bindPort(host: string, port: number, listen: (port: number) => Promise<number>): Promise<number> {
  if (port !== 0) return listen(port);
  for (let attempt = 1; ; attempt++) {
    const picked = await kernelPickedPort(host);
    try {
      return await listen(picked);
    } catch (err) {
      if (attempt === 5) throw err;
    }
  }
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

function writeHeaders(response: Response, headers: HttpHeaders): void {
  for (const [name, value] of headers) response.header(name, value);
}

function sendAnswer(response: Response, answer: HttpAnswer): void {
  // A body over the limit may still be streaming in; hyper-express may have answered on its own.
  if (response.completed) return;
  writeHeaders(response, answer.headers);
  response.status(answer.status, answer.reason).send(answer.body === '' ? undefined : answer.body, answer.closeConnection);
}
