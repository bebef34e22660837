/**
 * A transport thread: serves the JSON-RPC HTTP port, the WebSocket port or both (the supervisor starts
 * `--rpc-http-workers` of them; HTTP on a private unix socket each, behind the supervisor's connection
 * guard on the public port; the WebSocket port shared), on the HTTP engine the supervisor chose
 * (src/transport/engine.ts), the first one IPC too, and the GraphQL port
 * (on the same threads, or on `--graphql-http-workers` threads that serve only it). JSON-RPC requests
 * are parsed here; transport-local methods are answered from shared memory, every other call goes
 * straight to the owning actor over its direct channel. WebSocket and IPC connections hold
 * subscriptions, fed by the chain's, pool's and p2p actor's events. GraphQL runs queries here and
 * reads from the actors in bulk. Holds no chain data.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel, RemoteError } from '../src/shared/actors/channel.js';
import { TRANSPORT_CHAIN, TRANSPORT_CONSENSUS, TRANSPORT_LOGINDEX, TRANSPORT_P2P, TRANSPORT_READER, TRANSPORT_TXPOOL } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { RpcErrors, toRpcErrorObject } from '../src/shared/rpc/errors.js';
import { ETH_PROTOCOL_VERSION } from '../src/shared/ethereum/eth-protocol.js';
import type { JsonRpcTransport } from '../src/shared/rpc/registry.js';
import { P2pStatusReader } from '../src/shared/shared-memory/p2p-status-view.js';
import { TransportCounters } from '../src/shared/shared-memory/transport-counters.js';
import { createMethodCaller } from '../src/transport/jsonrpc.js';
import { RpcTimings } from '../src/transport/rpc-timings.js';
import type { RpcOutcome } from '../src/transport/jsonrpc.js';
import { IPC_RULES, WS_RULES, type StreamRules } from '../src/transport/jsonrpc-stream.js';
import type { Json, Wire } from '../src/shared/rpc/types.js';
import type { JsonText } from '../src/shared/rpc/json-text.js';
import type { RpcCall } from '../src/shared/actors/messages.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { rememberAbsentReceipts } from '../src/transport/absent-receipts.js';
import { raiseReaderDemand } from '../src/shared/shared-memory/reader-demand.js';
import { loadTransportEngine, type GraphqlServerHandle, type HttpServerHandle, type WsServerHandle } from '../src/transport/engine.js';
import { startIpcServer, type IpcServerHandle } from '../src/transport/ipc-server.js';
import { createDispatch, createLocalMethods } from '../src/transport/local-methods.js';
import { streamSessions } from '../src/transport/stream-sessions.js';
import { SubscriptionHub } from '../src/transport/subscription-hub.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import type { ServiceAuthentication } from '../src/transport/auth/service-authentication.js';

const data = startActorThread('transport');
setLogLevel(data.logLevel);
const log = new Logger('JsonRpc');

let http: HttpServerHandle | undefined;
let ws: WsServerHandle | undefined;
let ipc: IpcServerHandle | undefined;
/** Each service's own (rpc-auth-cli.md §8.1): its key, token cache and login pool. */
let httpAuthentication: ServiceAuthentication | undefined;
let wsAuthentication: ServiceAuthentication | undefined;
let graphqlServer: GraphqlServerHandle | undefined;
/** The calls of every JSON-RPC transport of this thread, with `--metrics-enabled`. */
const timings = data.metrics === undefined ? undefined : new RpcTimings();
const timer = timings === undefined ? {} : { timer: timings };

exposeControl('transport', {
  async start() {
    // The engine the supervisor chose (uWebSockets.js, or node:http and ws); only its modules load.
    const engine = await loadTransportEngine(data.engine);
    const actors = {
      chain: openChannel(TRANSPORT_CHAIN, 'transport', data.ports.chain),
      txpool: openChannel(TRANSPORT_TXPOOL, 'transport', data.ports.txpool),
      consensus: openChannel(TRANSPORT_CONSENSUS, 'transport', data.ports.consensus),
      logindex: openChannel(TRANSPORT_LOGINDEX, 'transport', data.ports.logindex),
      p2p: data.ports.p2p === undefined ? undefined : openChannel(TRANSPORT_P2P, 'transport', data.ports.p2p),
    };
    const readers = data.ports.readers.map((port) => openChannel(TRANSPORT_READER, 'transport', port));
    let nextReader = 0;
    let readersDemanded = data.readerDemand === undefined;
    /** A state reader thread, taken in turn; the chain answers their methods when there is none. */
    const readerChannel = () => {
      if (readers.length === 0) return actors.chain;
      // The readers start at the first call that needs one; this call waits in its port until they serve.
      if (!readersDemanded) {
        readersDemanded = true;
        raiseReaderDemand(data.readerDemand!);
      }
      return readers[nextReader++ % readers.length]!;
    };
    const head = new HeadReader(data.headView);
    const p2pStatus = data.p2pStatusView === undefined ? undefined : new P2pStatusReader(data.p2pStatusView);
    const peerCount = () => p2pStatus?.peerCount() ?? 0;
    const syncStatus = () => {
      const sync = p2pStatus?.sync();
      const currentBlock = head.headNumber();
      // The head may have reached the target before the p2p actor saw it.
      return sync === undefined || currentBlock === null || currentBlock >= sync.highestBlock ? undefined : { ...sync, currentBlock };
    };
    // net_services reads the ports at each call: with port 0 the first thread learns each port once it
    // listens (the others are started with it, or the supervisor's relay bound it first).
    const jsonRpc = data.http === undefined ? undefined : { host: data.http.server.host, port: data.http.server.port };
    const wsService = data.ws === undefined ? undefined : { host: data.ws.server.host, port: data.ws.server.port };
    const graphqlService = data.graphql === undefined ? data.graphqlService : { host: data.graphql.host, port: data.graphql.port };
    const localMethods = (apis: readonly string[]) =>
      createLocalMethods({
        clientVersion: data.clientVersion,
        networkId: data.networkId ?? data.chainId,
        chainId: data.chainId,
        apis,
        head,
        p2pEnabled: data.p2pEnabled,
        peerCount,
        syncStatus,
        ethProtocolVersion: ETH_PROTOCOL_VERSION,
        ...(jsonRpc === undefined ? {} : { jsonRpc }),
        ...(wsService === undefined ? {} : { ws: wsService }),
        ...(graphqlService === undefined ? {} : { graphql: graphqlService }),
        ...(data.metricsService === undefined ? {} : { metrics: data.metricsService }),
        ...(data.p2p === undefined ? {} : { p2p: data.p2p }),
      });
    const askActor = async (owner: keyof typeof actors | 'reader', method: string, params: Wire): Promise<RpcOutcome> => {
      try {
        const channel: { request(type: 'rpc', body: RpcCall): Promise<JsonText> } | undefined = owner === 'reader' ? readerChannel() : actors[owner];
        if (channel === undefined) return { error: RpcErrors.P2P_DISABLED };
        return { resultJson: await channel.request('rpc', { method, params }) };
      } catch (err) {
        return { error: err instanceof RemoteError ? err.error : toRpcErrorObject(err) };
      }
    };
    const toActor = rememberAbsentReceipts(askActor, head);

    // GraphQL (its schema and the graphql library) and authentication (jose, a login pool) load only on a
    // thread that serves them: each costs a thread several MB of RSS (bench/node-memory.ts).
    const authentication = data.http?.authentication ?? data.ws?.authentication;
    const { createServiceAuthentication } = authentication === undefined ? {} : await import('../src/transport/auth/service-authentication.js');
    if (data.graphql !== undefined) {
      const { createGraphqlService } = await import('../src/transport/graphql/execute.js');
      const service = createGraphqlService(
        { chain: actors.chain, txpool: actors.txpool, logindex: actors.logindex, chainId: data.chainId, headNumber: () => head.headNumber(), syncStatus },
        { maxComplexity: data.graphql.maxQueryComplexity, maxDepth: data.graphql.maxQueryDepth },
      );
      graphqlServer = await engine.startGraphqlServer(data.graphql, service);
      graphqlService!.port = graphqlServer.port;
    }

    if (data.http !== undefined) {
      const apis = data.http.apis;
      const send = createDispatch(localMethods(apis), toActor);
      if (data.http.authentication !== undefined) httpAuthentication = createServiceAuthentication!(data.http.authentication, new Logger('JsonRpcHttp'));
      http = await engine.startHttpServer({
        ...data.http.server,
        call: createMethodCaller({ enabledApis: apis, transport: 'http', send, ...timer }),
        ...(httpAuthentication === undefined ? {} : { authentication: httpAuthentication }),
        health: () => {
          const sync = syncStatus();
          return { p2pEnabled: data.p2pEnabled, peerCount: peerCount(), ...(sync ? { sync } : {}) };
        },
      });
      jsonRpc!.port = http.port;
    }

    if (data.ws !== undefined || data.ipc !== undefined) {
      const counters = new TransportCounters(data.counters);
      const hub = new SubscriptionHub({
        nextId: () => counters.nextSubscriptionId(),
        chainInterest: async (interest) => void (await actors.chain.request('subscriptionInterest', interest)),
        poolInterest: async (interest) => void (await actors.txpool.request('subscriptionInterest', interest)),
      });
      actors.chain.on({ canonicalBlocks: (event) => hub.onCanonicalBlocks(event) });
      actors.txpool.on({
        pendingTransactions: (event) => hub.onPendingTransactions(event),
        droppedTransactions: ({ hashes }) => hub.onDroppedTransactions(hashes),
      });
      actors.p2p?.on({ syncState: (state) => hub.onSyncState(state) });
      /** Sessions of a connection-holding transport: its own groups, its subscriptions in the hub. */
      const sessionsOf = (transport: JsonRpcTransport, apis: readonly string[], rules: StreamRules, authentication?: ServiceAuthentication) => {
        const local = localMethods(apis);
        return streamSessions({
          transportName: transport === 'ws' ? 'WebSocket' : 'IPC',
          rules,
          hub,
          log,
          callerWith: (subscriptions) => createMethodCaller({ enabledApis: apis, transport, send: createDispatch(local, toActor, subscriptions), ...timer }),
          ...(authentication === undefined ? {} : { authenticator: authentication.authenticator }),
        });
      };
      if (data.ws !== undefined) {
        if (data.ws.authentication !== undefined) wsAuthentication = createServiceAuthentication!(data.ws.authentication, new Logger('WebSocket'));
        ws = await engine.startWsServer({
          ...data.ws.server,
          counters,
          openSession: sessionsOf('ws', data.ws.apis, WS_RULES, wsAuthentication),
          ...(wsAuthentication === undefined ? {} : { login: wsAuthentication.login }),
        });
        wsService!.port = ws.port;
      }
      if (data.ipc !== undefined) ipc = await startIpcServer({ path: data.ipc.path, openSession: sessionsOf('ipc', data.ipc.apis, IPC_RULES) });
    }
    return {
      ...(http ? { httpPort: http.port } : {}),
      ...(ws ? { wsPort: ws.port } : {}),
      ...(graphqlServer ? { graphqlPort: graphqlServer.port } : {}),
    };
  },
  metrics: () => ({ rpc: timings?.snapshot() ?? [] }),
  async stop() {
    graphqlServer?.close();
    await http?.close();
    ws?.close();
    await ipc?.close();
    await httpAuthentication?.close();
    await wsAuthentication?.close();
  },
});
