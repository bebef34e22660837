/**
 * What the `node` engine's servers share: reading a request as the HTTP policy sees it, writing the
 * policy's answers, reading a body within the size limit, listening on the private unix socket the
 * supervisor's relay joins the public port to, and closing with every connection.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { unlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HttpAnswer, HttpHeaders, HttpRequestFacts } from '../http-policy.js';

/** uWS' idle timeout for HTTP connections, kept so that keep-alive lasts as long on either engine. */
const KEEP_ALIVE_TIMEOUT_MS = 10_000;

/** The path and the query string of a request target. */
export function splitTarget(url: string | undefined): { path: string; query: string } {
  const target = url ?? '/';
  const mark = target.indexOf('?');
  return mark < 0 ? { path: target, query: '' } : { path: target.slice(0, mark), query: target.slice(mark + 1) };
}

/** A header as the uWS engine reads it: missing and empty are both undefined; repeated ones joined. */
export function requestHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === '' ? undefined : text;
}

export function requestFacts(req: IncomingMessage, path: string): HttpRequestFacts {
  return {
    method: req.method ?? 'GET',
    path,
    host: requestHeader(req, 'host'),
    origin: requestHeader(req, 'origin'),
    contentLength: requestHeader(req, 'content-length'),
    accept: requestHeader(req, 'accept'),
    accessControlRequestMethod: requestHeader(req, 'access-control-request-method'),
  };
}

export function writeHeaders(res: ServerResponse, headers: HttpHeaders): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}

/** Writes a whole answer: status line with `reason`, `headers` in order, the body; nothing after it. */
export function writeResponse(res: ServerResponse, status: number, reason: string | undefined, headers: HttpHeaders, body: string | Uint8Array | undefined, closeConnection = false): void {
  if (res.headersSent || res.destroyed) return;
  writeHeaders(res, headers);
  // The rest of an unread body is not read: the connection goes, as uWS' end(body, true) does.
  if (closeConnection) res.setHeader('connection', 'close');
  // Framed by length as uWS frames every answer: writeHead alone would choose chunked encoding.
  res.setHeader('content-length', body === undefined ? 0 : Buffer.byteLength(body));
  res.writeHead(status, reason);
  res.end(body);
}

export function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  writeResponse(res, answer.status, answer.reason, answer.headers, answer.body === '' ? undefined : answer.body, answer.closeConnection);
}

/**
 * Reads the body, calling `done` with it as text, or `tooLarge` (once, and nothing more is kept)
 * as soon as more than `limit` bytes came: the declared length was checked by the policy, this is for
 * chunked bodies.
 */
export function readBody(req: IncomingMessage, limit: number, done: (body: string) => void, tooLarge: () => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    size += chunk.byteLength;
    if (size > limit) {
      over = true;
      chunks.length = 0;
      tooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (!over) done(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
  });
}

export interface UnixHttpServer {
  server: Server;
  /** Stops listening and destroys every open connection (keep-alive ones too). */
  close(): Promise<void>;
}

/** A `node:http` server listening on the unix socket `path` (a stale file there is replaced). */
export async function listenHttpOnUnixSocket(path: string, handler: RequestListener): Promise<UnixHttpServer> {
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, handler);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  try {
    unlinkSync(path);
  } catch {
    // Nothing there.
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The unix socket of a server the `node` engine runs behind the supervisor's relay. */
export function relayedSocketPath(what: string, socketPath: string | undefined): string {
  if (socketPath === undefined) throw new Error(`${what}: the node:http engine listens on a unix socket behind the supervisor's relay, and none was given`);
  return socketPath;
}

/**
 * Writes an answer on a socket taken over for an upgrade (no ServerResponse exists for it) and
 * closes it: what refusing a WebSocket handshake needs.
 */
export function writeAnswerAndClose(socket: Duplex, answer: HttpAnswer): void {
  const lines = [`HTTP/1.1 ${answer.status} ${answer.reason}`, ...answer.headers.map(([name, value]) => `${name}: ${value}`)];
  lines.push(`content-length: ${Buffer.byteLength(answer.body)}`, 'connection: close', '', '');
  socket.end(lines.join('\r\n') + answer.body);
}
