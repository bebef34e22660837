/**
 * The JSON-RPC HTTP server of one transport worker, on hyper-express (uWebSockets.js). It listens on
 * the public port itself, shared with the other transport threads (SO_REUSEPORT, uws-listen.ts), or,
 * with `--rpc-http-max-active-connections` given, on a private unix socket behind the supervisor's
 * connection guard (src/main/supervisor/http-connection-guard.ts), which owns the public port and
 * enforces the limit: this uWS build cannot count connections itself.
 *
 * Every request goes through the one HTTP policy (http-policy.ts: host allow-list → CORS → body size
 * limit → route → Accept) before anything is served. Routing is done by the policy rather than by
 * hyper-express so that the 404/405 answers, and the order of the checks before them, are exactly
 * Besu's.
 */
import type { us_listen_socket } from 'uWebSockets.js';
import { Server, type Request, type Response } from 'hyper-express';
import type { JsonRpcContext } from './jsonrpc.js';
import type { HttpServerConfig, HttpServerHandle } from './engine.js';
import { Logger } from '../shared/util/log.js';
import { createHttpPolicy, plainRouteAnswer, type HttpAnswer, type HttpHeaders } from './http-policy.js';
import { serveJsonRpc } from './jsonrpc-route.js';
import { authenticatedJsonRpc } from './auth/authenticated-json-rpc.js';
import { LOGIN_NOT_ENABLED } from './auth/login.js';
import { listenUws, type UwsListening } from './uws-listen.js';

const log = new Logger('JsonRpcHttp');

/**
 * hyper-express enforces its body limit before any handler runs, which would put the size check
 * ahead of the host and CORS checks. It is disabled, and the policy applies the limit.
 */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

export async function startHttpServer(cfg: HttpServerConfig): Promise<HttpServerHandle> {
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
    if (verdict.route === 'login') {
      writeHeaders(response, verdict.headers);
      await serveLogin(request, response, cfg);
      return;
    }
    // POST / is served by the route on the uWS app itself (jsonrpc-route.ts), which uWS ranks above
    // this catch-all: every other request that gets here has a plain answer.
    sendAnswer(response, plainRouteAnswer(verdict, cfg.health, request.path_query));
  };

  const server = new Server({ max_body_length: UNLIMITED, auto_close: false });
  server.set_error_handler((_request, response, error) => {
    log.error('HTTP request failed', error);
    response.atomic(() => response.status(500).send());
  });
  server.any('/*', handle);
  const authenticated = cfg.authentication === undefined ? undefined : authenticatedJsonRpc(rpc, cfg.authentication.authenticator);
  const jsonRpcRoute = serveJsonRpc(server.uws_instance, {
    policy,
    maxRequestContentLength: cfg.maxRequestContentLength,
    timeoutMs,
    rpc,
    ...(authenticated === undefined ? {} : { authenticated }),
  });
  const listening = await listen(server, cfg);
  const listenSocket = listening.socket;
  return {
    port: listening.port,
    close: async () => {
      jsonRpcRoute.close();
      server.close(listenSocket);
      // Closing the listen socket leaves keep-alive connections polling; a worker thread that ends
      // with them open aborts the whole process. uWS' App.close() closes every socket it owns.
      (server.uws_instance as unknown as { close(): void }).close();
    },
  };
}

/**
 * On the public port shared with the other threads, or on the guard's unix socket; hyper-express's
 * own listen() does neither, so its routes are compiled as that would.
 */
async function listen(server: Server, cfg: HttpServerConfig): Promise<UwsListening> {
  (server as unknown as { _compile(): void })._compile();
  if (cfg.socketPath === undefined) return listenUws(server.uws_instance, cfg.host, cfg.port, 'JSON-RPC HTTP');
  return { socket: await listenUnix(server, cfg.socketPath), port: cfg.port };
}

function listenUnix(server: Server, path: string): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    server.uws_instance.listen_unix((listenSocket) => {
      if (listenSocket) resolve(listenSocket);
      else reject(new Error(`Failed to listen on ${path}`));
    }, path);
  });
}

/**
 * `POST /login` (§8.4), answered by the service's login. The policy has refused a declared length over the
 * limit; hyper-express reads bodies of a declared length only, so a chunked login body reads as empty
 * (answered 400, username and password required).
 */
async function serveLogin(request: Request, response: Response, cfg: HttpServerConfig): Promise<void> {
  const answer = cfg.authentication === undefined ? LOGIN_NOT_ENABLED : await cfg.authentication.login(await request.text());
  if (response.completed) return;
  // Corked: written from a later turn of the event loop (after the login pool answered), an uncorked
  // status line sometimes lost its reason phrase.
  response.atomic(() => {
    if (answer.contentType !== undefined) response.header('content-type', answer.contentType);
    response.status(answer.status, answer.reason).send(answer.body === '' ? undefined : answer.body);
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
