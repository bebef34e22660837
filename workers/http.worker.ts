/**
 * HTTP JSON-RPC transport: parses requests, answers transport-local methods from shared memory, and
 * sends every other call straight to the owning actor over its direct channel. Holds no chain data.
 */
import { workerData } from 'node:worker_threads';
import { exposeControl } from '../src/shared/actors/control.js';
import { Mailbox, RemoteError } from '../src/shared/actors/mailbox.js';
import type { ChainProtocol, ConsensusProtocol, P2pProtocol, TxPoolProtocol } from '../src/shared/actors/channels.js';
import type { HttpActorData } from '../src/shared/actors/worker-data.js';
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
import { setLogLevel } from '../src/shared/util/log.js';

const data = workerData as HttpActorData;
setLogLevel(data.logLevel);

let server: HttpServerHandle | undefined;

exposeControl<number>({
  async start() {
    const actors = {
      chain: new Mailbox<ChainProtocol>(data.ports.chain),
      txpool: new Mailbox<TxPoolProtocol>(data.ports.txpool),
      consensus: new Mailbox<ConsensusProtocol>(data.ports.consensus),
      p2p: data.ports.p2p === undefined ? undefined : new Mailbox<P2pProtocol>(data.ports.p2p),
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
        const mailbox: Mailbox<{ rpc: ChainProtocol['rpc'] }> | undefined = actors[owner];
        if (mailbox === undefined) return { error: RpcErrors.P2P_DISABLED };
        return { result: await mailbox.request('rpc', { method, params }) };
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
    jsonRpc.port = server.port;
    return server.port;
  },
  async stop() {
    await server?.close();
  },
});
