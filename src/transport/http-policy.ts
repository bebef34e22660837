/**
 * The decisions the JSON-RPC HTTP port makes before JSON-RPC starts (spec rpc-auth-cli.md §1.1,
 * §1.9, §1.10, §9), as pure functions so they are tested without sockets.
 */
import { prettyJson } from './jsonrpc.js';

// ---------------------------------------------------------------------------------------------
// Host allow-list (DNS-rebinding protection)
// ---------------------------------------------------------------------------------------------

/**
 * The hostname of a Host header, port stripped; undefined when malformed. `[v6]:port` keeps the
 * brackets; `host:port` needs a 1–5 digit port; more than one colon outside brackets is malformed.
 */
export function hostnameOfHostHeader(header: string): string | undefined {
  if (header.startsWith('[')) {
    const close = header.indexOf(']');
    if (close < 0) return undefined;
    const rest = header.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return header.slice(0, close + 1);
  }
  const pieces = header.split(':');
  if (pieces.length > 2) return undefined;
  if (pieces.length === 2 && !/^\d{1,5}$/.test(pieces[1]!)) return undefined;
  return pieces[0];
}

/**
 * `--host-allowlist` check: `*` (or `all`) accepts anything, otherwise the Host header's hostname must
 * equal an entry case-insensitively (exact match; an IPv6 entry may be written with or without
 * brackets). A missing Host header is rejected.
 */
export function createHostAllowlist(entries: readonly string[]): (hostHeader: string | undefined) => boolean {
  if (entries.some((entry) => entry === '*' || entry.toLowerCase() === 'all')) return () => true;
  const allowed = new Set(entries.filter((entry) => entry.toLowerCase() !== 'none').map((entry) => entry.toLowerCase()));
  return (hostHeader) => {
    if (hostHeader === undefined) return false;
    const hostname = hostnameOfHostHeader(hostHeader)?.toLowerCase();
    if (hostname === undefined) return false;
    if (allowed.has(hostname)) return true;
    return hostname.startsWith('[') && allowed.has(hostname.slice(1, -1));
  };
}

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

export type RouteAction = 'jsonrpc' | 'created' | 'liveness' | 'readiness' | 'login' | 'not-found' | 'method-not-allowed';

const ROUTES: ReadonlyMap<string, ReadonlyMap<string, RouteAction>> = new Map([
  [
    '/',
    new Map<string, RouteAction>([
      ['POST', 'jsonrpc'],
      ['GET', 'created'],
    ]),
  ],
  ['/liveness', new Map<string, RouteAction>([['GET', 'liveness']])],
  ['/readiness', new Map<string, RouteAction>([['GET', 'readiness']])],
  ['/login', new Map<string, RouteAction>([['POST', 'login']])],
]);

/** Route table of §1.1; a trailing slash is ignored as Vert.x does. */
export function resolveRoute(method: string, path: string): RouteAction {
  const normalised = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const byMethod = ROUTES.get(normalised);
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
