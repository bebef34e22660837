/**
 * The JSON-RPC WebSocket port on `node:http` and the `ws` package (the `node` engine, engine.ts),
 * with ws-server.ts' behaviour on uWS: the WebSocket port policy at the handshake (host allow-list)
 * and for plain requests, the node-wide connection limit in shared memory (a connection beyond it is
 * closed without an answer), messages of up to 4 frames of `--rpc-ws-max-frame-size` (a larger one
 * closes the connection, 1009), idle connections pinged and closed when silent, and a client that
 * does not read cut once SEND_BUFFER_LIMIT bytes wait for it.
 *
 * Each thread listens on a private unix socket behind a relay in the supervisor that owns the public
 * port: Node 20 cannot share a listening port between threads as uWS does (SO_REUSEPORT).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { Logger } from '../../shared/util/log.js';
import { FRAMES_PER_MESSAGE, SEND_BUFFER_LIMIT, WS_IDLE_TIMEOUT_SECONDS, type WsServerConfig, type WsServerHandle } from '../engine.js';
import { bodyTooLarge, createWsPortPolicy } from '../http-policy.js';
import { loginHttpAnswer } from '../auth/login.js';
import type { StreamSession } from '../stream-session.js';
import { listenHttpOnUnixSocket, readBody, relayedSocketPath, requestFacts, requestHeader, splitTarget, writeAnswer, writeAnswerAndClose } from './http-io.js';

const log = new Logger('WebSocket');

interface Connection {
  session: StreamSession;
  remote: string;
  /** Closed for not reading: nothing more is sent. */
  cut: boolean;
  /** Something came from the client since the last idle check. */
  alive: boolean;
}

export async function startWsServer(cfg: WsServerConfig): Promise<WsServerHandle> {
  const login = cfg.login;
  const maxMessageLength = FRAMES_PER_MESSAGE * cfg.maxFrameSize;
  // A login body is small; it is held to the limit of a message.
  const policy = createWsPortPolicy({ hostAllowlist: cfg.hostAllowlist, loginServed: login !== undefined, maxLoginBodyLength: maxMessageLength });
  const sendBufferLimit = cfg.sendBufferLimit ?? SEND_BUFFER_LIMIT;
  const connections = new Map<WebSocket, Connection>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageLength, perMessageDeflate: false, clientTracking: false });

  const cut = (ws: WebSocket, connection: Connection): void => {
    connection.cut = true;
    log.warn(`Closed the WebSocket connection from ${connection.remote}: more than ${sendBufferLimit} bytes waited for it to read; its subscriptions are dropped`);
    // Not from inside a send: closing runs the close handler, which drops subscriptions being iterated.
    setImmediate(() => ws.terminate());
  };

  const opened = (ws: WebSocket, remote: string, authorization: string | undefined): void => {
    const connection: Connection = { remote, cut: false, alive: true, session: undefined as unknown as StreamSession };
    connections.set(ws, connection);
    connection.session = cfg.openSession((text) => {
      if (connection.cut) return;
      if (ws.bufferedAmount > sendBufferLimit) cut(ws, connection);
      // A text frame, bytes or not (ws makes a Buffer a binary frame unless told).
      else ws.send(text, { binary: false });
    }, authorization);
    log.debug(`WebSocket connection from ${remote} opened`);
    ws.on('message', (data: Buffer) => {
      connection.alive = true;
      // Text and binary frames alike.
      connection.session.receive(data.toString('utf8'));
    });
    ws.on('pong', () => (connection.alive = true));
    ws.on('error', (err) => log.debug(`WebSocket connection from ${remote}: ${err.message}`));
    ws.once('close', (code) => {
      connections.delete(ws);
      connection.session.close();
      log.debug(`WebSocket connection from ${remote} closed (${code})`);
    });
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const refusal = policy.upgrade(requestFacts(req, '/').host);
    if (refusal !== undefined) {
      writeAnswerAndClose(socket, refusal);
      return;
    }
    // Besu closes a connection beyond the limit without an answer.
    if (!cfg.counters.tryOpenConnection(cfg.maxActiveConnections)) {
      log.debug(`WebSocket connection refused: ${cfg.maxActiveConnections} connections are open (--rpc-ws-max-active-connections)`);
      socket.destroy();
      return;
    }
    // The place is given back once, when this side ends the connection (answering a close frame, as
    // uWS gives it back on the close frame) or the socket closes, whether or not the handshake succeeded.
    let counted = true;
    const release = (): void => {
      if (counted) cfg.counters.closeConnection();
      counted = false;
    };
    socket.once('finish', release);
    socket.once('close', release);
    // Behind the supervisor's relay the peer is a unix socket: the client's address is not known here.
    const remote = req.socket.remoteAddress ?? '(relayed)';
    const authorization = login === undefined ? undefined : requestHeader(req, 'authorization');
    wss.handleUpgrade(req, socket, head, (ws) => opened(ws, remote, authorization));
  };

  // Requests that are not a WebSocket handshake.
  const listening = await listenHttpOnUnixSocket(relayedSocketPath('JSON-RPC WebSocket', cfg.socketPath), (req, res) => {
    const facts = requestFacts(req, splitTarget(req.url).path);
    const verdict = policy.request(facts);
    if (verdict.kind === 'answer') {
      writeAnswer(res, verdict);
      return;
    }
    // The policy lets `POST /login` through only when the service serves it.
    readBody(
      req,
      maxMessageLength,
      (body) => void loginHttpAnswer(login, body, log).then((answer) => writeAnswer(res, answer)),
      () => writeAnswer(res, bodyTooLarge(verdict)),
    );
  });
  listening.server.on('upgrade', upgrade);

  // uWS' idleTimeout with automatic pings: a connection silent for a whole period after a ping goes.
  const idleCheck = setInterval(() => {
    for (const [ws, connection] of connections) {
      if (!connection.alive) {
        ws.terminate();
        continue;
      }
      connection.alive = false;
      ws.ping();
    }
  }, (WS_IDLE_TIMEOUT_SECONDS * 1000) / 2);
  idleCheck.unref();

  return {
    port: cfg.port,
    close() {
      clearInterval(idleCheck);
      for (const ws of [...connections.keys()]) ws.terminate();
      void listening.close();
    },
  };
}
