/**
 * `--host-allowlist` (DNS-rebinding protection, spec rpc-auth-cli.md §1.9): every HTTP port of the
 * node (JSON-RPC, WebSocket, GraphQL, metrics) accepts a request only from the hosts it names.
 */

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
