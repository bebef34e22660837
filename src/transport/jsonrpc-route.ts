/**
 * `POST /`, the JSON-RPC route, served straight on the uWS app underneath hyper-express.
 *
 * Why not through hyper-express like the other routes: it builds a request and a response object,
 * a stream and header maps for every request, which cost several times more than the JSON-RPC work
 * of a call like eth_blockNumber (measured with bench/rpc-throughput.ts). uWS ranks this static route
 * above hyper-express' catch-all, so the other paths keep their hyper-express handling, and the checks
 * run in the same order (host allow-list → CORS → body size → Accept → JSON-RPC).
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { handleJsonRpcBody, type HttpReply, type JsonRpcContext } from './jsonrpc.js';
import { RpcErrors } from '../shared/rpc/errors.js';
import { acceptsJson, CORS_REJECTED_BODY, HOST_REJECTED_BODY } from './http-policy.js';

export interface JsonRpcRouteConfig {
  hostAllowed(host: string | undefined): boolean;
  originAllowed(origin: string): boolean;
  maxRequestContentLength: number;
  timeoutMs: number;
  rpc: JsonRpcContext;
}

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  406: '406 Not Acceptable',
  408: '408 Request Timeout',
  413: '413 Request Entity Too Large',
};
const TIMEOUT_BODY = `{"jsonrpc":"2.0","id":null,"error":{"code":${RpcErrors.TIMEOUT_EXPIRED.code},"message":"${RpcErrors.TIMEOUT_EXPIRED.message}"}}`;
const TOO_LARGE_BODY = 'Request Entity Too Large';

/** A request whose answer has not been written yet; the sweeper answers it 408 once it is too old. */
interface Pending {
  res: HttpResponse;
  startedAt: number;
  allowOrigin: string | undefined;
  done: boolean;
}

export function serveJsonRpc(app: TemplatedApp, cfg: JsonRpcRouteConfig): { close(): void } {
  const pending = new Set<Pending>();
  // One coarse timer for all requests instead of one setTimeout per request.
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - cfg.timeoutMs;
    for (const p of pending) {
      if (p.startedAt > cutoff) continue;
      finish(p, 408, TIMEOUT_BODY);
    }
  }, Math.min(1000, cfg.timeoutMs));
  sweeper.unref();

  const finish = (p: Pending, status: number, body: string): void => {
    if (p.done) return;
    p.done = true;
    pending.delete(p);
    p.res.cork(() => writeJson(p.res, status, body, p.allowOrigin));
  };

  app.post('/', (res: HttpResponse, req: HttpRequest) => {
    // uWS invalidates the request object when this function returns: read every header now.
    const host = req.getHeader('host');
    const origin = req.getHeader('origin');
    const accept = req.getHeader('accept');
    const contentLength = req.getHeader('content-length');

    if (!cfg.hostAllowed(host === '' ? undefined : host)) {
      res.writeStatus(STATUS_LINES[403]!).writeHeader('content-type', 'application/json; charset=utf-8').end(HOST_REJECTED_BODY);
      return;
    }
    let allowOrigin: string | undefined;
    if (origin !== '') {
      if (!cfg.originAllowed(origin)) {
        res.writeStatus(STATUS_LINES[403]!).end(CORS_REJECTED_BODY);
        return;
      }
      allowOrigin = origin;
    }
    if (Number(contentLength || 0) > cfg.maxRequestContentLength) {
      res.writeStatus(STATUS_LINES[413]!).end(TOO_LARGE_BODY, true);
      return;
    }
    if (!acceptsJson(accept === '' ? undefined : accept)) {
      res.writeStatus(STATUS_LINES[406]!).end();
      return;
    }

    const p: Pending = { res, startedAt: Date.now(), allowOrigin, done: false };
    res.onAborted(() => {
      p.done = true;
      pending.delete(p);
    });
    let chunks: Buffer[] | undefined;
    let size = 0;
    res.onData((chunk, isLast) => {
      if (p.done) return;
      size += chunk.byteLength;
      if (size > cfg.maxRequestContentLength) {
        // A chunked body that outgrew the limit: answer now and close the connection.
        p.done = true;
        res.cork(() => res.writeStatus(STATUS_LINES[413]!).end(TOO_LARGE_BODY, true));
        return;
      }
      if (!isLast) {
        // uWS reuses the chunk's memory once this callback returns: keep a copy.
        (chunks ??= []).push(Buffer.from(chunk.slice(0)));
        return;
      }
      const body = chunks === undefined ? Buffer.from(chunk).toString('utf8') : Buffer.concat([...chunks, Buffer.from(chunk)]).toString('utf8');
      pending.add(p);
      void handleJsonRpcBody(body, cfg.rpc).then((reply: HttpReply) => finish(p, reply.status, reply.body));
    });
  });

  return {
    close() {
      clearInterval(sweeper);
      pending.clear();
    },
  };
}

function writeJson(res: HttpResponse, status: number, body: string, allowOrigin: string | undefined): void {
  res.writeStatus(STATUS_LINES[status] ?? `${status}`);
  res.writeHeader('content-type', 'application/json');
  if (allowOrigin !== undefined) res.writeHeader('access-control-allow-origin', allowOrigin).writeHeader('vary', 'origin');
  res.end(body);
}
