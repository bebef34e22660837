/**
 * HTTP transport: the JSON-RPC port and the GraphQL port, each when enabled. JSON-RPC parses
 * requests, answers transport-local methods from shared memory and sends every other call straight
 * to the owning actor over its direct channel; GraphQL runs queries here and reads from the actors
 * in bulk. Holds no chain data.
 */
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel, RemoteError } from '../src/shared/actors/channel.js';
import { TRANSPORT_CHAIN, TRANSPORT_CONSENSUS, TRANSPORT_P2P, TRANSPORT_TXPOOL } from '../src/shared/actors/channels.js';
import type { RpcCall } from '../src/shared/actors/messages.js';
import { actorData } from '../src/shared/actors/worker-data.js';
import { RpcErrors, toRpcErrorObject } from '../src/shared/rpc/errors.js';
import { ETH_PROTOCOL_VERSION } from '../src/shared/ethereum/eth-protocol.js';
import { P2pStatusReader } from '../src/shared/shared-memory/p2p-status-view.js';
import { createMethodCaller } from '../src/transport/jsonrpc.js';
import type { RpcOutcome } from '../src/transport/jsonrpc.js';
import type { Json, Wire } from '../src/shared/rpc/types.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { startHttpServer } from '../src/transport/http-server.js';
import type { HttpServerHandle } from '../src/transport/http-server.js';
import { createDispatch, createLocalMethods } from '../src/transport/local-methods.js';
import { createGraphqlService } from '../src/transport/graphql/execute.js';
import { startGraphqlServer, type GraphqlServerHandle } from '../src/transport/graphql/server.js';
import { setLogLevel } from '../src/shared/util/log.js';

const data = actorData('transport');
setLogLevel(data.logLevel);

let server: HttpServerHandle | undefined;
let graphqlServer: GraphqlServerHandle | undefined;

exposeControl('transport', {
  async start() {
    const chain = openChannel(TRANSPORT_CHAIN, 'transport', data.ports.chain);
    const txpool = openChannel(TRANSPORT_TXPOOL, 'transport', data.ports.txpool);
    const consensus = openChannel(TRANSPORT_CONSENSUS, 'transport', data.ports.consensus);
    const p2p = data.ports.p2p === undefined ? undefined : openChannel(TRANSPORT_P2P, 'transport', data.ports.p2p);
    const rpcTo: Record<'chain' | 'txpool' | 'consensus' | 'p2p', ((call: RpcCall) => Promise<Json>) | undefined> = {
      chain: (call) => chain.request('rpc', call),
      txpool: (call) => txpool.request('rpc', call),
      consensus: (call) => consensus.request('rpc', call),
      p2p: p2p && ((call) => p2p.request('rpc', call)),
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
    // net_services reads the ports at each call: with port 0 they are known once the servers listen.
    const jsonRpc = data.server && { host: data.server.host, port: data.server.port };
    const graphql = data.graphql ? { host: data.graphql.host, port: data.graphql.port } : data.graphqlService;

    if (data.graphql !== undefined) {
      const service = createGraphqlService(
        { chain, txpool, chainId: data.chainId, headNumber: () => head.headNumber(), syncStatus },
        { maxComplexity: data.graphql.maxQueryComplexity, maxDepth: data.graphql.maxQueryDepth },
      );
      graphqlServer = await startGraphqlServer(data.graphql, service);
      if (graphql !== undefined) graphql.port = graphqlServer.port;
    }
    if (data.server !== undefined) {
      const local = createLocalMethods({
        clientVersion: data.clientVersion,
        networkId: data.networkId ?? data.chainId,
        chainId: data.chainId,
        apis: data.apis,
        head,
        p2pEnabled: data.p2pEnabled,
        peerCount,
        syncStatus,
        ethProtocolVersion: ETH_PROTOCOL_VERSION,
        ...(jsonRpc === undefined ? {} : { jsonRpc }),
        ...(graphql === undefined ? {} : { graphql }),
        ...(data.p2p === undefined ? {} : { p2p: data.p2p }),
      });
      const toActor = async (owner: keyof typeof rpcTo, method: string, params: Wire): Promise<RpcOutcome> => {
        try {
          const send = rpcTo[owner];
          if (send === undefined) return { error: RpcErrors.P2P_DISABLED };
          return { result: await send({ method, params }) };
        } catch (err) {
          return { error: err instanceof RemoteError ? err.error : toRpcErrorObject(err) };
        }
      };
      const call = createMethodCaller({ enabledApis: data.apis, send: createDispatch(local, toActor) });
      server = await startHttpServer({
        ...data.server,
        call,
        health: () => {
          const sync = syncStatus();
          return { p2pEnabled: data.p2pEnabled, peerCount: peerCount(), ...(sync ? { sync } : {}) };
        },
      });
      jsonRpc!.port = server.port;
    }
    return {
      ...(server === undefined ? {} : { port: server.port }),
      ...(graphqlServer === undefined ? {} : { graphqlPort: graphqlServer.port }),
    };
  },
  async stop() {
    graphqlServer?.close();
    await server?.close();
  },
});
