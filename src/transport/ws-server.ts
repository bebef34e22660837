/**
 * The JSON-RPC WebSocket port (rpc-auth-cli.md §6.1) on a raw uWebSockets.js app of its own. Several
 * transport threads may each serve it: uWS listens with SO_REUSEPORT and the kernel spreads
 * connections; the connection limit is counted across threads in shared memory, from uWS' own open
 * and close events (the HTTP port, whose connections uWS does not show, is the supervisor's guard's).
 *
 * Frame size: uWS hands over whole messages and never shows the frames they came in, so
 * `--rpc-ws-max-frame-size` cannot be checked per frame. Besu allows messages of up to 4 frames of that
 * size; the limit is applied to the message (4 × the frame size): a message above it closes the
 * connection, as in Besu. The difference: one frame larger than the frame size but within the message
 * limit is accepted here, where Besu closes the connection.
 *
 * Slow readers: answers and notifications wait in a per-connection send buffer while the client does
 * not read them. Once more than SEND_BUFFER_LIMIT bytes wait, the next message is not queued: the
 * connection is closed (its subscriptions go with it) and the node says so once.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket } from 'uWebSockets.js';
import { Logger } from '../shared/util/log.js';
import { FRAMES_PER_MESSAGE, SEND_BUFFER_LIMIT, WS_IDLE_TIMEOUT_SECONDS, type WsServerConfig, type WsServerHandle } from './engine.js';
import { bodyTooLarge, createWsPortPolicy, type HttpAnswer, type HttpProceed } from './http-policy.js';
import { writeAnswer } from './jsonrpc-route.js';
import { loginHttpAnswer, type LoginAnswer } from './auth/login.js';
import type { StreamSession } from './stream-session.js';
import { closeListenSocket, listenUws } from './uws-listen.js';

const log = new Logger('WebSocket');

/** uWS `send` result: the message was not queued because the send buffer is over its limit. */
const SEND_DROPPED = 2;

interface Connection {
  session?: StreamSession;
  remote: string;
  /** The upgrade request's Authorization header, read only with authentication on. */
  authorization: string | undefined;
  /** Closed for not reading: nothing more is sent. */
  cut: boolean;
}

export async function startWsServer(cfg: WsServerConfig): Promise<WsServerHandle> {
  const login = cfg.login;
  const maxMessageLength = FRAMES_PER_MESSAGE * cfg.maxFrameSize;
  // A login body is small; it is held to the limit of a message.
  const policy = createWsPortPolicy({ hostAllowlist: cfg.hostAllowlist, loginServed: login !== undefined, maxLoginBodyLength: maxMessageLength });
  const sendBufferLimit = cfg.sendBufferLimit ?? SEND_BUFFER_LIMIT;
  const open = new Set<WebSocket<Connection>>();
  const app: TemplatedApp = uWS.App();

  const cut = (ws: WebSocket<Connection>, connection: Connection): void => {
    connection.cut = true;
    log.warn(`Closed the WebSocket connection from ${connection.remote}: more than ${sendBufferLimit} bytes waited for it to read; its subscriptions are dropped`);
    // Not from inside a send: closing runs the close handler, which drops subscriptions being iterated.
    setImmediate(() => {
      if (open.has(ws)) ws.close();
    });
  };

  app.ws<Connection>('/*', {
    maxPayloadLength: maxMessageLength,
    maxBackpressure: sendBufferLimit,
    idleTimeout: WS_IDLE_TIMEOUT_SECONDS,
    sendPingsAutomatically: true,
    upgrade: (res: HttpResponse, req: HttpRequest, context) => {
      const refusal = policy.upgrade(req.getHeader('host') || undefined);
      if (refusal !== undefined) {
        writeAnswer(res, refusal);
        return;
      }
      // Besu closes a connection beyond the limit without an answer.
      if (!cfg.counters.tryOpenConnection(cfg.maxActiveConnections)) {
        log.debug(`WebSocket connection refused: ${cfg.maxActiveConnections} connections are open (--rpc-ws-max-active-connections)`);
        res.close();
        return;
      }
      const connection: Connection = {
        remote: Buffer.from(res.getRemoteAddressAsText()).toString(),
        cut: false,
        authorization: login === undefined ? undefined : req.getHeader('authorization') || undefined,
      };
      res.upgrade(connection, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
    },
    open: (ws) => {
      open.add(ws);
      const connection = ws.getUserData();
      connection.session = cfg.openSession((text) => {
        if (connection.cut) return;
        let status = 0;
        ws.cork(() => (status = ws.send(text, false)));
        if (status === SEND_DROPPED) cut(ws, connection);
      }, connection.authorization);
      log.debug(`WebSocket connection from ${connection.remote} opened`);
    },
    message: (ws, message) => {
      // Text and binary frames alike; the text is copied out before uWS reuses the buffer.
      ws.getUserData().session?.receive(Buffer.from(message).toString('utf8'));
    },
    close: (ws, code) => {
      open.delete(ws);
      cfg.counters.closeConnection();
      const connection = ws.getUserData();
      connection.session?.close();
      log.debug(`WebSocket connection from ${connection.remote} closed (${code})`);
    },
  });
  // Requests that are not a WebSocket handshake.
  app.any('/*', (res, req) => {
    const verdict = policy.request({
      method: req.getCaseSensitiveMethod(),
      path: req.getUrl(),
      host: req.getHeader('host') || undefined,
      contentLength: req.getHeader('content-length') || undefined,
    });
    if (verdict.kind === 'answer') writeAnswer(res, verdict);
    // The policy lets `POST /login` through only when the service serves it.
    else serveLogin(res, verdict, maxMessageLength, login!);
  });

  const listening = await listenUws(app, cfg.host, cfg.port, 'JSON-RPC WebSocket');
  return {
    port: listening.port,
    close() {
      closeListenSocket(listening.socket);
      for (const ws of [...open]) ws.close();
      (app as unknown as { close(): void }).close();
    },
  };
}

/** `POST /login` on the WebSocket port: the body read (at most `maxLength` bytes), answered by `login`. */
function serveLogin(res: HttpResponse, verdict: HttpProceed, maxLength: number, login: (body: string) => Promise<LoginAnswer>): void {
  let done = false;
  res.onAborted(() => (done = true));
  const chunks: Buffer[] = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    if (done) return;
    size += chunk.byteLength;
    if (size > maxLength) {
      // A chunked body that outgrew the limit: answered now, the connection closed.
      done = true;
      res.cork(() => writeAnswer(res, bodyTooLarge(verdict)));
      return;
    }
    // uWS reuses the chunk's memory once this callback returns: keep a copy.
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!isLast) return;
    const write = (answer: HttpAnswer): void => {
      if (done) return;
      done = true;
      res.cork(() => writeAnswer(res, answer));
    };
    void loginHttpAnswer(login, Buffer.concat(chunks).toString('utf8'), log).then(write);
  });
}
