/**
 * Enode URLs (`enode://<128 hex node id>@<ip>:<tcp port>[?discport=<udp port>]`), parsed with
 * Besu's error behaviour for admin_addPeer / admin_removePeer (rpc-auth-cli.md §2.5):
 *  - anything that is not an enode URL → -32700 "Parse error";
 *  - a node id that is not exactly 128 hex characters → -32000 "Invalid node ID: ...";
 *  - a host name instead of an IP address → -32100 "Enode DNS support is disabled" (Besu's default).
 * Besu checks the scheme first, then the node id, then the host, then the ports.
 */
import { isIP } from 'node:net';
import { RpcError, RpcErrors } from '../rpc/errors.js';

export type Enode = {
  /** The 64-byte uncompressed public key without its 0x04 prefix. */
  id: Uint8Array;
  /** Lower-case hex of `id`, no 0x: the key peers are known by. */
  idHex: string;
  host: string;
  tcpPort: number;
  /** The discovery (UDP) port when it differs from the TCP port; 0 = discovery off. */
  udpPort?: number;
};

const NODE_ID = /^[0-9a-fA-F]{128}$/;

export function parseEnode(text: string): Enode {
  if (!text.startsWith('enode://')) throw new RpcError(RpcErrors.PARSE_ERROR);
  const rest = text.slice('enode://'.length);
  const at = rest.indexOf('@');
  if (at < 0) throw new RpcError(RpcErrors.PARSE_ERROR);
  const idText = rest.slice(0, at);
  if (!NODE_ID.test(idText)) throw new RpcError(RpcErrors.ENODE_ID_INVALID);

  const [authority = '', query, ...extra] = rest.slice(at + 1).split('?');
  if (extra.length > 0) throw new RpcError(RpcErrors.PARSE_ERROR);
  const { host, port } = splitHostPort(authority);
  if (isIP(host) === 0) {
    // A syntactically valid host name: Besu refuses it unless enode DNS support is on.
    if (/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host)) {
      throw new RpcError(RpcErrors.DNS_NOT_ENABLED);
    }
    throw new RpcError(RpcErrors.PARSE_ERROR);
  }
  const tcpPort = parsePort(port);
  const enode: Enode = { id: Uint8Array.from(Buffer.from(idText, 'hex')), idHex: idText.toLowerCase(), host, tcpPort };
  if (query !== undefined) {
    const match = /^discport=(\d+)$/.exec(query);
    if (!match) throw new RpcError(RpcErrors.PARSE_ERROR);
    const udpPort = parsePort(match[1]);
    if (udpPort !== tcpPort) enode.udpPort = udpPort;
  }
  return enode;
}

/** `enode://id@host:port`, with `?discport=N` when the discovery port differs (Besu's format). */
export function formatEnode(enode: Pick<Enode, 'idHex' | 'host' | 'tcpPort' | 'udpPort'>): string {
  const host = isIP(enode.host) === 6 ? `[${enode.host}]` : enode.host;
  const base = `enode://${enode.idHex}@${host}:${enode.tcpPort}`;
  return enode.udpPort === undefined || enode.udpPort === enode.tcpPort ? base : `${base}?discport=${enode.udpPort}`;
}

function splitHostPort(authority: string): { host: string; port: string | undefined } {
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) throw new RpcError(RpcErrors.PARSE_ERROR);
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw new RpcError(RpcErrors.PARSE_ERROR);
    return { host: authority.slice(1, close), port: after === '' ? undefined : after.slice(1) };
  }
  const colon = authority.lastIndexOf(':');
  if (colon < 0) return { host: authority, port: undefined };
  return { host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}

function parsePort(text: string | undefined): number {
  if (text === undefined || !/^\d{1,5}$/.test(text)) throw new RpcError(RpcErrors.PARSE_ERROR);
  const port = Number(text);
  if (port > 65535) throw new RpcError(RpcErrors.PARSE_ERROR);
  return port;
}
