/**
 * The GraphQL HTTP port (rpc-auth-cli.md §10.1) on a uWS app of its own, in the transport threads
 * (those of JSON-RPC, or its own with `--graphql-http-workers`): several threads listen on the port
 * (SO_REUSEPORT) and the kernel spreads the connections. Every request goes through the one HTTP policy (host allow-list → CORS → size →
 * route → Accept) with the GraphQL routes, then runs in this thread; only data reads go to the
 * actors.
 */
import uWS, { type HttpRequest, type HttpResponse, type us_listen_socket } from 'uWebSockets.js';
import type { GraphqlListenConfig } from '../../shared/actors/worker-data.js';
import { Logger } from '../../shared/util/log.js';
import { listenUws } from '../uws-listen.js';
import { bodyTooLarge, createHttpPolicy, GRAPHQL_ROUTES, type HttpAnswer, type HttpHeaders, type HttpVerdict } from '../http-policy.js';
import type { GraphqlReply, GraphqlRequest, GraphqlService } from './execute.js';
import { RequestDecodeError, requestFromBody, requestFromQueryString } from './http-request.js';

const log = new Logger('GraphQLHttp');

export interface GraphqlServerHandle {
  readonly port: number;
  close(): void;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

function writeHeaders(res: HttpResponse, headers: HttpHeaders): void {
  for (const [name, value] of headers) res.writeHeader(name, value);
}

function writeAnswer(res: HttpResponse, answer: HttpAnswer): void {
  res.writeStatus(`${answer.status} ${answer.reason}`);
  writeHeaders(res, answer.headers);
  res.end(answer.body, answer.closeConnection);
}

const STATUS_LINES: Record<number, string> = {
  200: '200 OK',
  308: '308 Permanent Redirect',
  400: '400 Bad Request',
  500: '500 Internal Server Error',
  504: '504 Gateway Timeout',
};

/** A request being answered: once written (or aborted), nothing more is written to it. */
interface Exchange {
  res: HttpResponse;
  headers: HttpHeaders;
  done: boolean;
}

function reply(exchange: Exchange, status: number, body: string | undefined): void {
  if (exchange.done) return;
  exchange.done = true;
  exchange.res.cork(() => {
    exchange.res.writeStatus(STATUS_LINES[status] ?? `${status}`);
    writeHeaders(exchange.res, exchange.headers);
    if (body === undefined) {
      exchange.res.end();
      return;
    }
    exchange.res.writeHeader('content-type', JSON_CONTENT_TYPE);
    exchange.res.end(body);
  });
}

/** `3 actor requests (chain.blocks 1, chain.accounts 1, chain.receipts 1)`. */
function describeRequests(requests: ReadonlyMap<string, number>): string {
  let total = 0;
  for (const count of requests.values()) total += count;
  const kinds = [...requests].map(([kind, count]) => `${kind} ${count}`).join(', ');
  return `${total} actor request${total === 1 ? '' : 's'}${kinds === '' ? '' : ` (${kinds})`}`;
}

export async function startGraphqlServer(cfg: GraphqlListenConfig, service: GraphqlService): Promise<GraphqlServerHandle> {
  const policy = createHttpPolicy({ ...cfg, routes: GRAPHQL_ROUTES });
  const timeoutMs = cfg.timeoutSeconds * 1000;
  const app = uWS.App();

  const run = (exchange: Exchange, read: () => GraphqlRequest): void => {
    let request: GraphqlRequest;
    try {
      request = read();
    } catch (err) {
      if (!(err instanceof RequestDecodeError)) throw err;
      reply(exchange, 400, JSON.stringify({ result: err.message }));
      return;
    }
    const deadline = Date.now() + timeoutMs;
    const timer = setTimeout(() => reply(exchange, 504, undefined), timeoutMs);
    service.run(request, deadline).then(
      (answer: GraphqlReply) => {
        reply(exchange, answer.status, answer.body);
        log.debug(`GraphQL query answered ${answer.status} after ${describeRequests(answer.actorRequests)}`);
      },
      (err: unknown) => {
        log.error('GraphQL request failed', err);
        reply(exchange, 500, JSON.stringify({ errors: [{ message: err instanceof Error ? err.message : String(err) }] }));
      },
    ).finally(() => clearTimeout(timer));
  };

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    // uWS invalidates `req` when this function returns: read all of it now.
    const method = req.getMethod().toUpperCase();
    const query = req.getQuery() ?? '';
    const contentType = req.getHeader('content-type') || undefined;
    const verdict: HttpVerdict = policy({
      method,
      path: req.getUrl(),
      host: req.getHeader('host') || undefined,
      origin: req.getHeader('origin') || undefined,
      contentLength: req.getHeader('content-length') || undefined,
      accept: req.getHeader('accept') || undefined,
      accessControlRequestMethod: req.getHeader('access-control-request-method') || undefined,
    });
    if (verdict.kind === 'answer') {
      writeAnswer(res, verdict);
      return;
    }
    const exchange: Exchange = { res, headers: verdict.headers, done: false };
    if (verdict.route === 'graphql-redirect') {
      exchange.headers = [...verdict.headers, ['location', '/graphql']];
      reply(exchange, 308, undefined);
      return;
    }
    res.onAborted(() => {
      exchange.done = true;
    });
    if (method === 'GET') {
      run(exchange, () => requestFromQueryString(query));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (exchange.done) return;
      size += chunk.byteLength;
      if (size > cfg.maxRequestContentLength) {
        // A chunked body that outgrew the limit: answer now and close the connection.
        exchange.done = true;
        res.cork(() => writeAnswer(res, bodyTooLarge(verdict)));
        return;
      }
      // uWS reuses the chunk's memory once this callback returns: keep a copy.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) run(exchange, () => requestFromBody(contentType, Buffer.concat(chunks).toString('utf8')));
    });
  });

  const { socket: listenSocket, port } = await listenUws(app, cfg.host, cfg.port, 'GraphQL HTTP');
  return {
    port,
    close() {
      uWS.us_listen_socket_close(listenSocket);
      // Keep-alive connections would outlive the listen socket; App.close() closes every socket it owns.
      (app as unknown as { close(): void }).close();
    },
  };
}
