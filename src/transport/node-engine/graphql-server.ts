/**
 * The GraphQL HTTP port on `node:http` (the `node` engine, engine.ts), as graphql/server.ts serves it
 * on uWS: the one HTTP policy with the GraphQL routes, `/` redirected to `/graphql`, a query from the
 * query string (GET) or the body (POST) run here. Listens on a private unix socket behind the
 * supervisor's relay, which owns the public port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphqlListenConfig } from '../../shared/actors/worker-data.js';
import type { GraphqlServerHandle } from '../engine.js';
import type { GraphqlService } from '../graphql/execute.js';
import { answerGraphql, GRAPHQL_JSON_CONTENT_TYPE } from '../graphql/http-exchange.js';
import { requestFromBody, requestFromQueryString } from '../graphql/http-request.js';
import { bodyTooLarge, createHttpPolicy, GRAPHQL_ROUTES, type HttpHeaders } from '../http-policy.js';
import { listenHttpOnUnixSocket, readBody, relayedSocketPath, requestFacts, splitTarget, writeAnswer, writeResponse } from './http-io.js';

export async function startGraphqlServer(cfg: GraphqlListenConfig, service: GraphqlService): Promise<GraphqlServerHandle> {
  const policy = createHttpPolicy({ ...cfg, routes: GRAPHQL_ROUTES });
  const timeoutMs = cfg.timeoutSeconds * 1000;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const { path, query } = splitTarget(req.url);
    const facts = requestFacts(req, path);
    const verdict = policy(facts);
    if (verdict.kind === 'answer') {
      writeAnswer(res, verdict);
      return;
    }
    const reply = (status: number, body: string | undefined, headers: HttpHeaders = verdict.headers): void =>
      writeResponse(res, status, undefined, body === undefined ? headers : [...headers, ['content-type', GRAPHQL_JSON_CONTENT_TYPE]], body);
    if (verdict.route === 'graphql-redirect') {
      reply(308, undefined, [...verdict.headers, ['location', '/graphql']]);
      return;
    }
    if (facts.method === 'GET') {
      answerGraphql(service, timeoutMs, () => requestFromQueryString(query), reply);
      return;
    }
    const contentType = req.headers['content-type'] || undefined;
    readBody(
      req,
      cfg.maxRequestContentLength,
      (body) => answerGraphql(service, timeoutMs, () => requestFromBody(contentType, body), reply),
      () => writeAnswer(res, bodyTooLarge(verdict)),
    );
  };

  const listening = await listenHttpOnUnixSocket(relayedSocketPath('GraphQL HTTP', cfg.socketPath), handle);
  return { port: cfg.port, close: () => void listening.close() };
}
