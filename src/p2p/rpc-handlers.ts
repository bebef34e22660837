/**
 * The JSON-RPC methods the p2p actor answers (rpc-auth-cli.md §3.2, §3.4). Params arrive parsed by
 * the registry (an enode is already a valid `Enode`); `--p2p-enabled=false` never reaches here, the
 * transport answers "P2P has been disabled" itself.
 */
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { P2pService } from './p2p-service.js';

export function createP2pRpcHandlers(service: P2pService): MethodHandlers<'p2p'> {
  return {
    admin_nodeInfo: () => service.nodeInfo(),
    admin_peers: () => service.peerList(),
    admin_addPeer: ({ enode }) => {
      if (enode.idHex === service.idHex) throw new RpcError(RpcErrors.CANT_CONNECT_TO_LOCAL_PEER);
      return service.addPeer(enode);
    },
    admin_removePeer: ({ enode }) => service.removePeer(enode),
    net_enode: () => service.enode,
  };
}
