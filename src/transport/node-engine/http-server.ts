/**
 * The JSON-RPC HTTP port on `node:http` (the `node` engine, engine.ts): as http-server.ts and
 * jsonrpc-route.ts do on uWS, every request goes through the one HTTP policy, then `POST /` runs
 * JSON-RPC and the other routes get their plain answers. It listens on the private unix socket the
 * supervisor's connection guard joins the public port to, as the uWS server does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger } from '../../shared/util/log.js';
import type { HttpServerConfig, HttpServerHandle } from '../engine.js';
import { bodyTooLarge, createHttpPolicy, plainRouteAnswer, type HttpHeaders } from '../http-policy.js';
import { handleJsonRpcBody, INTERNAL_ERROR_RESPONSE, TIMEOUT_RESPONSE, type JsonRpcContext } from '../jsonrpc.js';
import type { JsonText } from '../../shared/rpc/json-text.js';
import { authenticatedJsonRpc } from '../auth/authenticated-json-rpc.js';
import { loginHttpAnswer } from '../auth/login.js';
import { listenHttpOnUnixSocket, readBody, relayedSocketPath, requestFacts, requestHeader, splitTarget, writeAnswer, writeResponse } from './http-io.js';

const log = new Logger('JsonRpcHttp');

const JSON_HEADER: HttpHeaders = [['content-type', 'application/json']];

export async function startHttpServer(cfg: HttpServerConfig): Promise<HttpServerHandle> {
  const policy = createHttpPolicy(cfg);
  const timeoutMs = (cfg.timeoutSeconds ?? 30) * 1000;
  const rpc: JsonRpcContext = { maxBatchSize: cfg.maxBatchSize, prettyPrint: cfg.prettyPrint, call: cfg.call };
  const authenticated = cfg.authentication === undefined ? undefined : authenticatedJsonRpc(rpc, cfg.authentication.authenticator);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const { path, query } = splitTarget(req.url);
    const verdict = policy(requestFacts(req, path));
    if (verdict.kind === 'answer') {
      writeAnswer(res, verdict);
      return;
    }
    if (verdict.route === 'login') {
      // The policy has refused a declared length over the limit; a chunked body is held to it too.
      readBody(
        req,
        cfg.maxRequestContentLength,
        (body) => void loginHttpAnswer(cfg.authentication?.login, body, log, verdict.headers).then((answer) => writeAnswer(res, answer)),
        () => writeAnswer(res, bodyTooLarge(verdict)),
      );
      return;
    }
    if (verdict.route !== 'jsonrpc') {
      writeAnswer(res, plainRouteAnswer(verdict, cfg.health, query));
      return;
    }
    const authorization = authenticated === undefined ? undefined : requestHeader(req, 'authorization');
    const headers: HttpHeaders = verdict.headers.length === 0 ? JSON_HEADER : [...JSON_HEADER, ...verdict.headers];
    let timer: NodeJS.Timeout | undefined;
    const finish = (status: number, body: JsonText): void => {
      clearTimeout(timer);
      writeResponse(res, status, undefined, headers, body);
    };
    res.once('close', () => clearTimeout(timer));
    readBody(
      req,
      cfg.maxRequestContentLength,
      (body) => {
        timer = setTimeout(() => finish(408, TIMEOUT_RESPONSE), timeoutMs);
        (authenticated === undefined ? handleJsonRpcBody(body, rpc) : authenticated(body, authorization)).then(
          (reply) => finish(reply.status, reply.body),
          // A bug, not bad input: answered, and logged, rather than left to end the thread.
          (err: unknown) => {
            log.error('JSON-RPC request failed', err);
            finish(200, INTERNAL_ERROR_RESPONSE);
          },
        );
      },
      () => writeAnswer(res, bodyTooLarge(verdict)),
    );
  };

  const listening = await listenHttpOnUnixSocket(relayedSocketPath('JSON-RPC HTTP', cfg.socketPath), handle);
  return { port: cfg.port, close: listening.close };
}
