/**
 * P2P actor thread: devp2p (src/p2p/p2p-service.ts) wired to the chain (sync, head), the pool
 * (transaction gossip), consensus (istanbul messages) and the transports (admin_* / net_enode, and
 * the sync state for `syncing` subscriptions).
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import { CONSENSUS_P2P, P2P_CHAIN, P2P_TXPOOL, TRANSPORT_P2P } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { parseEnode } from '../src/shared/ethereum/enode.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { P2pService } from '../src/p2p/p2p-service.js';
import { createP2pRpcHandlers } from '../src/p2p/rpc-handlers.js';
import { serveMethodsAsJsonText } from '../src/shared/rpc/dispatch.js';
import { P2pStatusReader, P2pStatusWriter } from '../src/shared/shared-memory/p2p-status-view.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';

const data = startActorThread('p2p');
setLogLevel(data.logLevel);
const log = new Logger('P2P');

let service: P2pService | undefined;

exposeControl('p2p', {
  async start() {
    const genesis = parseGenesisJson(data.genesisJson);
    // Bootnodes are checked before anything listens, so that a typo stops the start-up.
    const bootnodes = data.bootnodes.map((text) => {
      try {
        return parseEnode(text);
      } catch (err) {
        throw new Error(`Invalid enode URL syntax '${text}' in --bootnodes: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    const chain = openChannel(P2P_CHAIN, 'p2p', data.ports.chain);
    const txpool = openChannel(P2P_TXPOOL, 'p2p', data.ports.txpool);
    const consensus = openChannel(CONSENSUS_P2P, 'p2p', data.ports.consensus);
    const status = new P2pStatusWriter(data.p2pStatusView);
    const statusRead = new P2pStatusReader(data.p2pStatusView);
    const transports = data.ports.transports.map((port) => openChannel(TRANSPORT_P2P, 'p2p', port));
    /** The sync state as eth_syncing shows it, for the transports' `syncing` subscriptions. */
    const publishSyncState = (localHead: bigint) => {
      const sync = statusRead.sync();
      const state = sync === undefined || localHead >= sync.highestBlock ? null : { ...sync, currentBlock: localHead };
      for (const transport of transports) transport.emit('syncState', state);
    };
    const p2p = new P2pService(
      {
        privateKey: data.nodeKey,
        clientId: data.clientVersion,
        advertisedHost: data.advertisedHost,
        listenHost: data.listenHost,
        listenPort: data.listenPort,
        maxPeers: data.maxPeers,
        networkId: data.networkId ?? genesis.networkId,
        genesis,
        genesisHash: data.genesisHash,
        head: await chain.request('head', null),
        ...(genesis.qbft ? { gossipedHistoryLimit: genesis.qbft.gossipedHistoryLimit } : {}),
        ...(data.discoveryEnabled ? { discovery: { seeds: bootnodes } } : {}),
        txpool: {
          add: (raws, hashes) => txpool.request('peerTransactions', { raws, hashes }),
          pooled: (hashes) => txpool.request('pooledTransactions', { hashes }),
          unknown: (hashes) => txpool.request('unknownTransactions', { hashes }),
        },
        chain: {
          headers: (query) => chain.request('headers', query),
          bodies: (hashes) => chain.request('bodies', { hashes }),
          importBlocks: (blocks) => chain.request('importSynced', { blocks }),
        },
      },
      {
        onIstanbulMessage: (code, messageData, origin) => consensus.emit('istanbulMessage', { code, data: messageData, origin }),
        onPeerCount: (count) => status.setPeerCount(count),
        onSyncProgress: (localHead, highestKnown) => {
          status.updateSync(localHead, highestKnown);
          publishSyncState(localHead);
        },
        log: (message, level = 'info') => log[level](message),
      },
    );
    service = p2p;
    chain.on({ newHead: (event) => p2p.setHead(event.head) });
    consensus.on({ istanbulSend: (message) => void p2p.sendIstanbul(message) });
    txpool.on({ newTransactions: ({ txs }) => p2p.gossipTransactions(txs) });
    const methods = serveMethodsAsJsonText('p2p', createP2pRpcHandlers(p2p));
    for (const transport of transports) transport.serve({ rpc: ({ method, params }) => methods(method, params) });

    const port = await p2p.start();
    log.info(`P2P network started and listening on ${data.listenHost}:${port}`);
    log.info(`Enode URL ${p2p.enode}`);
    log.info(
      data.discoveryEnabled
        ? `Discovery (v4) listening on UDP ${data.listenHost}:${port}`
        : 'Discovery disabled: only bootnodes and admin_addPeer peers are dialled',
    );
    for (const enode of bootnodes) if (enode.idHex !== p2p.idHex) p2p.addPeer(enode);
    return { port };
  },
  metrics: () => null,
  async stop() {
    await service?.stop();
  },
});
