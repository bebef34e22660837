/**
 * `POST /`, the JSON-RPC route, served straight on the uWS app underneath hyper-express.
 *
 * Why not through hyper-express like the other routes: it builds a request and a response object,
 * a stream and header maps for every request, which cost several times more than the JSON-RPC work
 * of a call like eth_blockNumber (measured with bench/rpc-throughput.ts). uWS ranks this static route
 * above hyper-express' catch-all, so the other paths keep their hyper-express handling; both ask the
 * same policy (http-policy.ts) before serving anything.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { handleJsonRpcBody, INTERNAL_ERROR_RESPONSE, TIMEOUT_RESPONSE, type HttpReply, type JsonRpcContext } from './jsonrpc.js';
import { Logger } from '../shared/util/log.js';
import { bodyTooLarge, type HttpAnswer, type HttpHeaders, type HttpProceed, type HttpRequestFacts, type HttpVerdict } from './http-policy.js';
import type { AuthenticatedBodyHandler } from './auth/authenticated-json-rpc.js';
import type { JsonText } from '../shared/rpc/json-text.js';

const log = new Logger('JsonRpcHttp');

export interface JsonRpcRouteConfig {
  policy(request: HttpRequestFacts): HttpVerdict;
  /** The limit the policy checks a declared length against, applied here to chunked bodies as they arrive. */
  maxRequestContentLength: number;
  timeoutMs: number;
  rpc: JsonRpcContext;
  /** With `--rpc-http-authentication-enabled`: bodies go through it with the request's Authorization header. */
  authenticated?: AuthenticatedBodyHandler;
}

/** Status lines of the answers JSON-RPC itself gives (handleJsonRpcBody, the timeout). */
const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  408: '408 Request Timeout',
};

/** A request whose answer has not been written yet; the sweeper answers it 408 once it is too old. */
interface Pending {
  res: HttpResponse;
  startedAt: number;
  verdict: HttpProceed;
  done: boolean;
}

export function serveJsonRpc(app: TemplatedApp, cfg: JsonRpcRouteConfig): { close(): void } {
  const pending = new Set<Pending>();
  // One coarse timer for all requests instead of one setTimeout per request.
  const sweeper = setInterval(() => {
    const cutoff = Date.now() - cfg.timeoutMs;
    for (const p of pending) {
      if (p.startedAt > cutoff) continue;
      finish(p, 408, TIMEOUT_RESPONSE);
    }
  }, Math.min(1000, cfg.timeoutMs));
  sweeper.unref();

  const finish = (p: Pending, status: number, body: JsonText): void => {
    if (p.done) return;
    p.done = true;
    pending.delete(p);
    p.res.cork(() => writeJson(p.res, status, body, p.verdict.headers));
  };

  app.post('/', (res: HttpResponse, req: HttpRequest) => {
    // uWS invalidates the request object when this function returns: read every header now. uWS
    // answers '' for a missing header; a present but empty one cannot be told apart.
    const verdict = cfg.policy({
      method: 'POST',
      path: '/',
      host: req.getHeader('host') || undefined,
      origin: req.getHeader('origin') || undefined,
      contentLength: req.getHeader('content-length') || undefined,
      accept: req.getHeader('accept') || undefined,
      accessControlRequestMethod: undefined,
    });
    if (verdict.kind === 'answer') {
      writeAnswer(res, verdict);
      return;
    }
    const authenticated = cfg.authenticated;
    const authorization = authenticated === undefined ? undefined : req.getHeader('authorization') || undefined;

    const p: Pending = { res, startedAt: Date.now(), verdict, done: false };
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
        res.cork(() => writeAnswer(res, bodyTooLarge(verdict)));
        return;
      }
      if (!isLast) {
        // uWS reuses the chunk's memory once this callback returns: keep a copy.
        (chunks ??= []).push(Buffer.from(chunk.slice(0)));
        return;
      }
      const body = chunks === undefined ? Buffer.from(chunk).toString('utf8') : Buffer.concat([...chunks, Buffer.from(chunk)]).toString('utf8');
      pending.add(p);
      const reply = authenticated === undefined ? handleJsonRpcBody(body, cfg.rpc) : authenticated(body, authorization);
      reply.then(
        (reply: HttpReply) => finish(p, reply.status, reply.body),
        // A bug, not bad input: answered, and logged, rather than left to end the thread as an unhandled rejection.
        (err: unknown) => {
          log.error('JSON-RPC request failed', err);
          finish(p, 200, INTERNAL_ERROR_RESPONSE);
        },
      );
    });
  });

  return {
    close() {
      clearInterval(sweeper);
      pending.clear();
    },
  };
}

function writeJson(res: HttpResponse, status: number, body: JsonText, headers: HttpHeaders): void {
  res.writeStatus(STATUS_LINES[status] ?? `${status}`);
  res.writeHeader('content-type', 'application/json');
  writeHeaders(res, headers);
  res.end(body);
}

export function writeAnswer(res: HttpResponse, answer: HttpAnswer): void {
  res.writeStatus(`${answer.status} ${answer.reason}`);
  writeHeaders(res, answer.headers);
  res.end(answer.body, answer.closeConnection);
}

function writeHeaders(res: HttpResponse, headers: HttpHeaders): void {
  for (let i = 0; i < headers.length; i++) res.writeHeader(headers[i]![0], headers[i]![1]);
}
