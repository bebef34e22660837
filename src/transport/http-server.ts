/**
 * The JSON-RPC HTTP server of one transport worker, on hyper-express (uWebSockets.js). It listens on
 * a private unix socket: the supervisor's connection guard (src/main/supervisor/http-connection-guard.ts)
 * owns the public port, enforces the connection limit and joins each connection to one worker.
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
  const listenSocket = await listenUnix(server, cfg.socketPath);
  return {
    close: async () => {
      jsonRpcRoute.close();
      server.close(listenSocket);
      // Closing the listen socket leaves keep-alive connections polling; a worker thread that ends
      // with them open aborts the whole process. uWS' App.close() closes every socket it owns.
      (server.uws_instance as unknown as { close(): void }).close();
    },
  };
}

/** hyper-express listens on TCP only; its routes are compiled as its own listen() would. */
function listenUnix(server: Server, path: string): Promise<us_listen_socket> {
  (server as unknown as { _compile(): void })._compile();
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
