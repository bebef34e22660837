/**
 * The decisions the JSON-RPC HTTP port makes before JSON-RPC starts (spec rpc-auth-cli.md §1.1,
 * §1.9, §1.10, §9), as pure functions so they are tested without sockets. `createHttpPolicy` puts
 * them in Besu's router order for every route of every transport.
 */
import { STATUS_CODES } from 'node:http';
import { createHostAllowlist } from '../shared/util/host-allowlist.js';
import { prettyJson } from './jsonrpc.js';

// ---------------------------------------------------------------------------------------------
// Host allow-list (DNS-rebinding protection)
// ---------------------------------------------------------------------------------------------

// The check itself is shared with the supervisor's metrics port.
export { createHostAllowlist, hostnameOfHostHeader } from '../shared/util/host-allowlist.js';

export const HOST_REJECTED_BODY = '{"message":"Host not authorized."}';

// ---------------------------------------------------------------------------------------------
// CORS
// ---------------------------------------------------------------------------------------------

/**
 * `--rpc-http-cors-origins`: entries are regular expressions joined with `|` and matched against
 * the whole Origin; `*`/`all` become `.*://.*|.*`; no entries (or `none`) allow no origin. An
 * invalid pattern is a start-up error with Besu's message.
 */
export function createCorsPolicy(origins: readonly string[]): (origin: string) => boolean {
  const entries = origins.filter((origin) => origin.toLowerCase() !== 'none');
  if (entries.length === 0) return () => false;
  const wildcard = entries.some((origin) => origin === '*' || origin.toLowerCase() === 'all');
  const source = wildcard ? '.*://.*|.*' : entries.join('|');
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${source})$`);
  } catch {
    throw new Error('Domain values result in invalid regex pattern');
  }
  return (origin) => pattern.test(origin);
}

/** Body of a CORS rejection (Besu's failure handler text). */
export const CORS_REJECTED_BODY = 'Exception thrown handling RPC';

/** Request headers a preflight answer allows. */
export const CORS_ALLOWED_HEADERS = '*,content-type';

// ---------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------

/** What readiness is decided from; provided by the node (p2p and sync state). */
export interface HealthSnapshot {
  p2pEnabled: boolean;
  peerCount: number;
  /** Present only while a sync is in progress. */
  sync?: { currentBlock: bigint; highestBlock: bigint };
}

/** Java `Integer.parseInt`: optional sign, decimal digits, 32-bit range; undefined otherwise. */
function javaParseInt(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= -2147483648 && value <= 2147483647 ? value : undefined;
}

/**
 * `/readiness` (§9): with P2P on, DOWN below `minPeers` peers (default 1); while syncing, DOWN when
 * more than `maxBlocksBehind` (default 2) blocks behind. A non-integer parameter means DOWN.
 */
export function isReady(health: HealthSnapshot, query: URLSearchParams): boolean {
  if (health.p2pEnabled) {
    const raw = query.get('minPeers');
    const minPeers = raw === null ? 1 : javaParseInt(raw);
    if (minPeers === undefined || health.peerCount < minPeers) return false;
  }
  if (health.sync !== undefined) {
    const raw = query.get('maxBlocksBehind');
    const maxBehind = raw === null ? 2 : javaParseInt(raw);
    if (maxBehind === undefined) return false;
    return health.sync.highestBlock - health.sync.currentBlock <= BigInt(maxBehind);
  }
  return true;
}

/** The health body, pretty-printed exactly as Besu writes it: `{\n  "status" : "UP"\n}`. */
export function healthBody(up: boolean): string {
  return prettyJson({ status: up ? 'UP' : 'DOWN' });
}

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

export type RouteAction = ServedRoute | 'not-found' | 'method-not-allowed';

/** The routes a transport serves once the policy lets a request through. */
export type ServedRoute = 'jsonrpc' | 'created' | 'liveness' | 'readiness' | 'login' | 'graphql' | 'graphql-redirect';

/** A port's routes: path → method → route. */
export type RouteTable = ReadonlyMap<string, ReadonlyMap<string, ServedRoute>>;

/** The JSON-RPC HTTP port (§1.1). */
export const JSON_RPC_ROUTES: RouteTable = new Map([
  [
    '/',
    new Map<string, ServedRoute>([
      ['POST', 'jsonrpc'],
      ['GET', 'created'],
    ]),
  ],
  ['/liveness', new Map<string, ServedRoute>([['GET', 'liveness']])],
  ['/readiness', new Map<string, ServedRoute>([['GET', 'readiness']])],
  ['/login', new Map<string, ServedRoute>([['POST', 'login']])],
]);

/** The GraphQL HTTP port (§10.1): `/graphql`, and `/` redirecting there. */
export const GRAPHQL_ROUTES: RouteTable = new Map([
  [
    '/',
    new Map<string, ServedRoute>([
      ['GET', 'graphql-redirect'],
      ['POST', 'graphql-redirect'],
    ]),
  ],
  [
    '/graphql',
    new Map<string, ServedRoute>([
      ['GET', 'graphql'],
      ['POST', 'graphql'],
    ]),
  ],
]);

/** The route of a request in a port's table; a trailing slash is ignored as Vert.x does. */
export function resolveRoute(method: string, path: string, routes: RouteTable = JSON_RPC_ROUTES): RouteAction {
  const normalised = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const byMethod = routes.get(normalised);
  if (byMethod === undefined) return 'not-found';
  return byMethod.get(method) ?? 'method-not-allowed';
}

export const NOT_FOUND_BODY = '<html><body><h1>Resource not found</h1></body></html>';

/**
 * Whether an Accept header admits `application/json` (routes declared as producing JSON answer
 * 406 otherwise). No header, `*\/*`, `application/*` and `application/json` with q > 0 admit it.
 */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== '*/*' && type !== 'application/*' && type !== 'application/json') return false;
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

/** Routes declared as producing JSON: an Accept header that excludes it is answered 406. */
const PRODUCES_JSON: ReadonlySet<ServedRoute> = new Set<ServedRoute>(['jsonrpc', 'login', 'graphql']);

// ---------------------------------------------------------------------------------------------
// The policy: host allow-list → CORS → body size → route → Accept
// ---------------------------------------------------------------------------------------------

/**
 * What the policy reads of a request. Headers are as the transport received them, `undefined` when
 * absent (a transport that cannot tell an empty header from a missing one passes `undefined`).
 */
export interface HttpRequestFacts {
  /** Upper case, as on the request line. */
  method: string;
  /** Without the query string. */
  path: string;
  host: string | undefined;
  origin: string | undefined;
  contentLength: string | undefined;
  accept: string | undefined;
  accessControlRequestMethod: string | undefined;
}

export type HttpHeaders = readonly (readonly [name: string, value: string])[];

/** The policy answers the request itself: write this and serve nothing. */
export interface HttpAnswer {
  readonly kind: 'answer';
  readonly status: number;
  /** The reason phrase of the status line. */
  readonly reason: string;
  /** Written in this order, before any header of the transport's own. */
  readonly headers: HttpHeaders;
  /** Empty for no body. */
  readonly body: string;
  /** Close the connection after the answer (the rest of the body is not read). */
  readonly closeConnection: boolean;
}

/** The request passed: serve `route` and write `headers` (CORS) with whatever it answers. */
export interface HttpProceed {
  readonly kind: 'proceed';
  readonly route: ServedRoute;
  readonly headers: HttpHeaders;
}

export type HttpVerdict = HttpAnswer | HttpProceed;

export interface HttpPolicyConfig {
  /** `--host-allowlist` entries (`*` accepts any Host). */
  hostAllowlist: readonly string[];
  /** `--rpc-http-cors-origins` entries (regular expressions; `*`/`all` any origin). */
  corsOrigins: readonly string[];
  /** `--rpc-http-max-request-content-length`, bytes. */
  maxRequestContentLength: number;
  /** The port's routes; the JSON-RPC port's by default. */
  routes?: RouteTable;
}

const NO_HEADERS: HttpHeaders = [];

function answer(status: number, options: { reason?: string; headers?: HttpHeaders; body?: string; closeConnection?: boolean } = {}): HttpAnswer {
  return {
    kind: 'answer',
    status,
    reason: options.reason ?? STATUS_CODES[status]!,
    headers: options.headers ?? NO_HEADERS,
    body: options.body ?? '',
    closeConnection: options.closeConnection ?? false,
  };
}

const HOST_REJECTED = answer(403, { headers: [['content-type', 'application/json; charset=utf-8']], body: HOST_REJECTED_BODY });
const CORS_REJECTED = answer(403, { body: CORS_REJECTED_BODY });
const TOO_LARGE_BODY = 'Request Entity Too Large';
const TOO_LARGE = answer(413, { reason: TOO_LARGE_BODY, body: TOO_LARGE_BODY, closeConnection: true });
const NOT_FOUND = answer(404, { headers: [['content-type', 'text/html; charset=utf-8']], body: NOT_FOUND_BODY });
const METHOD_NOT_ALLOWED = answer(405);
const NOT_ACCEPTABLE = answer(406);
const PREFLIGHT = answer(204, { headers: [['access-control-allow-headers', CORS_ALLOWED_HEADERS]] });

/** `answer` with the CORS headers of an allowed Origin first (the CORS step has already added them). */
function withCors(cors: HttpHeaders, base: HttpAnswer): HttpAnswer {
  return cors === NO_HEADERS ? base : { ...base, headers: [...cors, ...base.headers] };
}

/** The verdicts of requests without an Origin, made once: the common case allocates nothing. */
const PROCEED_WITHOUT_CORS: ReadonlyMap<ServedRoute, HttpProceed> = new Map(
  (['jsonrpc', 'created', 'liveness', 'readiness', 'login', 'graphql', 'graphql-redirect'] as const).map((route) => [route, { kind: 'proceed', route, headers: NO_HEADERS }]),
);

/**
 * Besu's router order for every request (§1.1): host allow-list (403), CORS (403 for an Origin not
 * allowed, 204 for a preflight), declared body size (413), route (404/405), Accept on the routes
 * producing JSON (406). A verdict that lets the request through carries the CORS headers every
 * answer to it must have; so does every later answer of the policy.
 */
export function createHttpPolicy(cfg: HttpPolicyConfig): (request: HttpRequestFacts) => HttpVerdict {
  const hostAllowed = createHostAllowlist(cfg.hostAllowlist);
  const originAllowed = createCorsPolicy(cfg.corsOrigins);
  return (request) => {
    if (!hostAllowed(request.host)) return HOST_REJECTED;

    let cors = NO_HEADERS;
    const origin = request.origin;
    if (origin !== undefined) {
      if (!originAllowed(origin)) return CORS_REJECTED;
      cors = [['access-control-allow-origin', origin], ['vary', 'origin']];
      if (request.method === 'OPTIONS' && request.accessControlRequestMethod !== undefined) return withCors(cors, PREFLIGHT);
    }

    if (Number(request.contentLength || 0) > cfg.maxRequestContentLength) return withCors(cors, TOO_LARGE);

    const route = resolveRoute(request.method, request.path, cfg.routes);
    if (route === 'not-found') return withCors(cors, NOT_FOUND);
    if (route === 'method-not-allowed') return withCors(cors, METHOD_NOT_ALLOWED);
    if (PRODUCES_JSON.has(route) && !acceptsJson(request.accept)) return withCors(cors, NOT_ACCEPTABLE);
    return cors === NO_HEADERS ? PROCEED_WITHOUT_CORS.get(route)! : { kind: 'proceed', route, headers: cors };
  };
}

const CREATED = answer(201);
const AUTHENTICATION_NOT_ENABLED = answer(400, { reason: 'Authentication not enabled' });
const INTERNAL_SERVER_ERROR = answer(500);

/**
 * The answer of a route that needs no body and nothing of the node but its health (`GET /`, the
 * health checks, `POST /login` without authentication), with the verdict's CORS headers. The routes
 * that serve a body (JSON-RPC, GraphQL) are the transport's: asked for one, this answers 500.
 */
export function plainRouteAnswer(verdict: HttpProceed, health: () => HealthSnapshot, queryString: string): HttpAnswer {
  switch (verdict.route) {
    case 'created':
      return withCors(verdict.headers, CREATED);
    case 'liveness':
      return withCors(verdict.headers, answer(200, { body: healthBody(true) }));
    case 'readiness': {
      const ready = isReady(health(), new URLSearchParams(queryString));
      return withCors(verdict.headers, answer(ready ? 200 : 503, { body: healthBody(ready) }));
    }
    case 'login':
      return withCors(verdict.headers, AUTHENTICATION_NOT_ENABLED);
    default:
      return withCors(verdict.headers, INTERNAL_SERVER_ERROR);
  }
}

/** The answer to a request let through whose body, read in chunks, outgrew the limit after all. */
export function bodyTooLarge(verdict: HttpProceed): HttpAnswer {
  return withCors(verdict.headers, TOO_LARGE);
}

// ---------------------------------------------------------------------------------------------
// The WebSocket port (§6.1): host allow-list, then upgrade; plain HTTP requests are refused
// ---------------------------------------------------------------------------------------------

/** Body of the answer to a plain HTTP request on the WebSocket port. */
export const WS_PORT_HTTP_BODY = "Websocket endpoint can't handle HTTP requests";

/** What the WebSocket port reads of a plain HTTP request. */
export interface WsPortRequestFacts {
  method: string;
  path: string;
  host: string | undefined;
  contentLength: string | undefined;
}

export interface WsPortPolicy {
  /** The answer refusing a WebSocket handshake, or undefined to upgrade it (on any path). */
  upgrade(host: string | undefined): HttpAnswer | undefined;
  /**
   * The answer to a plain HTTP request: the WebSocket port serves none but `POST /login`, which it
   * passes on (to be answered by the service's login) when `loginServed`.
   */
  request(request: WsPortRequestFacts): HttpAnswer | HttpProceed;
}

const UPGRADE_HOST_REJECTED = answer(403);
const NOT_A_WEBSOCKET = answer(400, { body: WS_PORT_HTTP_BODY });

/**
 * Besu's WebSocket service: a handshake from a host not allowed is rejected 403 (no body), a plain
 * request 403 with the JSON body of the HTTP port; `POST /login` answers as on the HTTP port (400
 * "Authentication not enabled" without authentication), any other plain request 400. A login body
 * declared longer than `maxLoginBodyLength` is refused 413 (Besu sets no limit there).
 */
export function createWsPortPolicy(
  cfg: Pick<HttpPolicyConfig, 'hostAllowlist'> & { loginServed: boolean; maxLoginBodyLength: number },
): WsPortPolicy {
  const hostAllowed = createHostAllowlist(cfg.hostAllowlist);
  return {
    upgrade: (host) => (hostAllowed(host) ? undefined : UPGRADE_HOST_REJECTED),
    request: (request) => {
      if (!hostAllowed(request.host)) return HOST_REJECTED;
      if (resolveRoute(request.method, request.path) !== 'login') return NOT_A_WEBSOCKET;
      if (!cfg.loginServed) return AUTHENTICATION_NOT_ENABLED;
      if (Number(request.contentLength || 0) > cfg.maxLoginBodyLength) return TOO_LARGE;
      return PROCEED_WITHOUT_CORS.get('login')!;
    },
  };
}
