/**
 * Registry entries: Peers and this node's devp2p identity (p2p actor).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { parseEnode as parseEnodeUrl } from '../../ethereum/enode.js';
import { parseEnode } from '../params.js';
import { noParams, type EnodeParams } from './param-shapes.js';

export const peerMethods = {
  admin_nodeInfo: { group: 'ADMIN', owner: 'p2p', parseParams: noParams },
  admin_peers: { group: 'ADMIN', owner: 'p2p', parseParams: noParams },
  /**
   * Owned by the p2p actor. The enode is parsed here, before routing, because Besu reports a bad
   * enode (Parse error, invalid node id) even when P2P is disabled.
   */
  admin_addPeer: {
    group: 'ADMIN',
    owner: 'p2p',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): EnodeParams => ({ enode: parseEnodeUrl(parseEnode(raw[0])) }),
  },
  admin_removePeer: {
    group: 'ADMIN',
    owner: 'p2p',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): EnodeParams => ({ enode: parseEnodeUrl(parseEnode(raw[0])) }),
  },
  net_enode: { group: 'NET', owner: 'p2p', parseParams: noParams },
} as const satisfies Record<string, MethodSpec>;
