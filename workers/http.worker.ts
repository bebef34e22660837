/**
 * HTTP JSON-RPC transport: parses requests, answers transport-local methods from shared memory, and
 * sends every other call straight to the owning actor over its direct channel. Holds no chain data.
 */
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel, RemoteError } from '../src/shared/actors/channel.js';
import { TRANSPORT_CHAIN, TRANSPORT_CONSENSUS, TRANSPORT_P2P, TRANSPORT_TXPOOL } from '../src/shared/actors/channels.js';
import { actorData } from '../src/shared/actors/worker-data.js';
import { RpcErrors, toRpcErrorObject } from '../src/shared/rpc/errors.js';
import { ETH_PROTOCOL_VERSION } from '../src/shared/ethereum/eth-protocol.js';
import { P2pStatusReader } from '../src/shared/shared-memory/p2p-status-view.js';
import { createMethodCaller } from '../src/transport/jsonrpc.js';
import type { RpcOutcome } from '../src/transport/jsonrpc.js';
import type { Wire } from '../src/shared/rpc/types.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { startHttpServer } from '../src/transport/http-server.js';
import type { HttpServerHandle } from '../src/transport/http-server.js';
import { createDispatch, createLocalMethods } from '../src/transport/local-methods.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import { createServiceAuthentication, type ServiceAuthentication } from '../src/transport/auth/service-authentication.js';

const data = actorData('transport');
setLogLevel(data.logLevel);

let server: HttpServerHandle | undefined;
let authentication: ServiceAuthentication | undefined;

exposeControl('transport', {
  async start() {
    const actors = {
      chain: openChannel(TRANSPORT_CHAIN, 'transport', data.ports.chain),
      txpool: openChannel(TRANSPORT_TXPOOL, 'transport', data.ports.txpool),
      consensus: openChannel(TRANSPORT_CONSENSUS, 'transport', data.ports.consensus),
      p2p: data.ports.p2p === undefined ? undefined : openChannel(TRANSPORT_P2P, 'transport', data.ports.p2p),
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
    // net_services reads the port at each call: with port 0 it is known once the server listens.
    const jsonRpc = { host: data.server.host, port: data.server.port };
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
      jsonRpc,
      ...(data.p2p === undefined ? {} : { p2p: data.p2p }),
    });
    const toActor = async (owner: keyof typeof actors, method: string, params: Wire): Promise<RpcOutcome> => {
      try {
        const channel = actors[owner];
        if (channel === undefined) return { error: RpcErrors.P2P_DISABLED };
        return { result: await channel.request('rpc', { method, params }) };
      } catch (err) {
        return { error: err instanceof RemoteError ? err.error : toRpcErrorObject(err) };
      }
    };
    const call = createMethodCaller({ enabledApis: data.apis, send: createDispatch(local, toActor) });
    if (data.authentication !== undefined) authentication = createServiceAuthentication(data.authentication, new Logger('JsonRpcHttp'));
    server = await startHttpServer({
      ...data.server,
      call,
      ...(authentication === undefined ? {} : { authentication }),
      health: () => {
        const sync = syncStatus();
        return { p2pEnabled: data.p2pEnabled, peerCount: peerCount(), ...(sync ? { sync } : {}) };
      },
    });
    jsonRpc.port = server.port;
    return { port: server.port };
  },
  async stop() {
    await server?.close();
    await authentication?.close();
  },
});
