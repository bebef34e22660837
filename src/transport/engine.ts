/**
 * The one interface a transport thread serves its HTTP ports through (JSON-RPC HTTP, JSON-RPC
 * WebSocket, GraphQL HTTP), and the two engines behind it: uWebSockets.js (`uws`: http-server.ts,
 * ws-server.ts, graphql/server.ts), and `node:http` with the `ws` package (`node`: node-engine/)
 * where no native uWS build loads. The supervisor picks one at start (main/supervisor/http-engine.ts)
 * and every transport thread loads only that one: the uWS modules are not even imported under the
 * other, since their native binary is what does not load.
 *
 * Both engines ask the same HTTP policy (http-policy.ts) and the same JSON-RPC and GraphQL code, so
 * the answers, limits and subscriptions are the same; only the sockets differ.
 */
import type { GraphqlListenConfig, HttpEngineName, HttpListenConfig, WsListenConfig } from '../shared/actors/worker-data.js';
import type { TransportCounters } from '../shared/shared-memory/transport-counters.js';
import type { HealthSnapshot } from './http-policy.js';
import type { RpcCaller } from './jsonrpc.js';
import type { GraphqlService } from './graphql/execute.js';
import type { OpenSession } from './stream-sessions.js';
import type { LoginAnswer } from './auth/login.js';
import type { ServiceAuthentication } from './auth/service-authentication.js';

export interface HttpServerConfig extends HttpListenConfig {
  /** Executes one method call (see `createMethodCaller`). */
  call: RpcCaller;
  /** Node state `/readiness` is decided from; read on each health request. */
  health(): HealthSnapshot;
  /** `--rpc-http-authentication-enabled`: tokens on `POST /`, and `/login` in credentials mode. */
  authentication?: ServiceAuthentication;
}

export interface HttpServerHandle {
  /** The public port (bound by this thread, or by the supervisor's guard in front of it). */
  readonly port: number;
  /** Stops accepting connections and closes the open ones. */
  close(): Promise<void>;
}

export interface WsServerConfig extends WsListenConfig {
  counters: TransportCounters;
  /**
   * A new connection: the session that answers its messages, writing through `write`, with the
   * Authorization header of its upgrade request (§6.5: the only place a WebSocket client gives a token).
   */
  openSession: OpenSession;
  /** With `--rpc-ws-authentication-enabled`: the service's `POST /login` (§8.4), given the request body. */
  login?: (body: string) => Promise<LoginAnswer>;
  /** Overrides SEND_BUFFER_LIMIT (tests). */
  sendBufferLimit?: number;
}

export interface WsServerHandle {
  /** The public port (bound by this thread, or by the supervisor's relay in front of it). */
  readonly port: number;
  close(): void;
}

export interface GraphqlServerHandle {
  readonly port: number;
  close(): void;
}

export interface TransportEngine {
  readonly name: HttpEngineName;
  startHttpServer(cfg: HttpServerConfig): Promise<HttpServerHandle>;
  startWsServer(cfg: WsServerConfig): Promise<WsServerHandle>;
  startGraphqlServer(cfg: GraphqlListenConfig, service: GraphqlService): Promise<GraphqlServerHandle>;
}

/** Besu accepts WebSocket messages of up to this many frames of `--rpc-ws-max-frame-size`. */
export const FRAMES_PER_MESSAGE = 4;

/**
 * Bytes of WebSocket answers and notifications that may wait for a client that does not read before
 * its connection is closed. A single answer larger than this still goes out to a client that reads.
 */
export const SEND_BUFFER_LIMIT = 8 * 1024 * 1024;

/** A WebSocket connection idle this long is pinged, and closed if the ping goes unanswered. */
export const WS_IDLE_TIMEOUT_SECONDS = 120;

/** Loads the engine's modules (and only those). */
export async function loadTransportEngine(name: HttpEngineName): Promise<TransportEngine> {
  if (name === 'node') return (await import('./node-engine/index.js')).NODE_ENGINE;
  const [http, ws, graphql] = await Promise.all([import('./http-server.js'), import('./ws-server.js'), import('./graphql/server.js')]);
  return { name, startHttpServer: http.startHttpServer, startWsServer: ws.startWsServer, startGraphqlServer: graphql.startGraphqlServer };
}
