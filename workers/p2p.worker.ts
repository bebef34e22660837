/**
 * P2p actor: runs the devp2p service (src/p2p) — RLPx sessions with eth/68 and istanbul/100 — carries
 * QBFT messages between consensus and peers, follows the chain head for Status and admin_nodeInfo,
 * and answers the admin_* / net_enode methods. This file only wires mailboxes.
 */
import { workerData } from 'node:worker_threads';
import { exposeControl } from '../src/shared/actors/control.js';
import { Mailbox } from '../src/shared/actors/mailbox.js';
import type { ChainProtocol, ConsensusToP2pEvents, P2pProtocol, P2pToConsensusEvents, RpcCall, TxPoolEvents, TxPoolProtocol } from '../src/shared/actors/channels.js';
import type { P2pActorData } from '../src/shared/actors/worker-data.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { parseEnode } from '../src/shared/ethereum/enode.js';
import { P2pService } from '../src/p2p/p2p-service.js';
import { P2pStatusWriter } from '../src/shared/shared-memory/p2p-status-view.js';
import { createP2pRpcHandlers } from '../src/p2p/rpc-handlers.js';
import { RpcError, RpcErrors } from '../src/shared/rpc/errors.js';
import type { Json } from '../src/shared/rpc/types.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';

const data = workerData as P2pActorData;
setLogLevel(data.logLevel);
const log = new Logger('P2P');

/** How often the published head is checked; a head change costs one request to the chain. */
const HEAD_POLL_MS = 200;

let service: P2pService | undefined;
let headPoll: NodeJS.Timeout | undefined;

exposeControl<{ port: number }>({
  async start() {
    const genesis = parseGenesisJson(data.genesisJson);
    const chain = new Mailbox<ChainProtocol>(data.ports.chain);
    const head = await chain.request('head', {});
    const [genesisHeader] = await chain.request('consensusHeaders', { from: 0n, to: 0n });
    if (!genesisHeader) throw new Error('the chain has no genesis block');
    // Bootnodes are checked before anything listens, so that a typo stops the start-up.
    const bootnodes = data.bootnodes.map((text) => {
      try {
        return parseEnode(text);
      } catch (err) {
        throw new Error(`Invalid enode URL syntax '${text}' in --bootnodes: ${err instanceof Error ? err.message : String(err)}`);
      }
    });

    const txpool = new Mailbox<TxPoolProtocol, Record<never, never>, Record<never, never>, TxPoolEvents>(data.ports.txpool);
    const consensus = new Mailbox<Record<never, never>, Record<never, never>, P2pToConsensusEvents, ConsensusToP2pEvents>(data.ports.consensus);
    const status = new P2pStatusWriter(data.p2pStatusView);
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
        genesisHash: genesisHeader.hash,
        head,
        ...(genesis.qbft ? { gossipedHistoryLimit: genesis.qbft.gossipedHistoryLimit } : {}),
        ...(data.discoveryEnabled ? { discovery: { seeds: bootnodes } } : {}),
        txpool: {
          add: (raws) => txpool.request('peerTransactions', { raws }),
          pooled: (hashes) => txpool.request('pooledTransactions', { hashes }),
          unknown: (hashes) => txpool.request('unknownTransactions', { hashes }),
        },
        chain: {
          headers: (query) => chain.request('syncHeaders', query),
          bodies: (hashes) => chain.request('syncBodies', { hashes }),
          importBlocks: (blocks) => chain.request('syncImport', { blocks }),
        },
      },
      {
        onIstanbulMessage: (code, messageData, origin) => consensus.emit('istanbulMessage', { code, data: messageData, origin }),
        onPeerCount: (count) => status.setPeerCount(count),
        onSyncProgress: (localHead, highestKnown) => status.updateSync(localHead, highestKnown),
        log: (message, level = 'info') => log[level](message),
      },
    );
    service = p2p;
    consensus.on({ istanbulSend: (message) => void p2p.sendIstanbul(message) });
    txpool.on({ newTransactions: ({ txs }) => p2p.gossipTransactions(txs) });

    const handlers = createP2pRpcHandlers(p2p) as Record<string, ((params: unknown) => Json | Promise<Json>) | undefined>;
    const rpc = {
      rpc: (call: RpcCall) => {
        const handler = handlers[call.method];
        if (!handler) throw new RpcError(RpcErrors.METHOD_NOT_ENABLED);
        return handler(call.params);
      },
    };
    for (const port of data.ports.http) new Mailbox<Record<never, never>, P2pProtocol>(port).serve(rpc);

    const port = await p2p.start();
    log.info(`P2P network started and listening on ${data.listenHost}:${port}`);
    log.info(`Enode URL ${p2p.enode}`);
    log.info(
      data.discoveryEnabled
        ? `Discovery (v4) listening on UDP ${data.listenHost}:${port}`
        : 'Discovery disabled: only bootnodes and admin_addPeer peers are dialled',
    );
    for (const enode of bootnodes) if (enode.idHex !== p2p.idHex) p2p.addPeer(enode);

    const published = new HeadReader(data.headView);
    let lastHash = Buffer.from(head.hash).toString('hex');
    let refreshing = false;
    headPoll = setInterval(() => {
      const current = published.read();
      if (!current || refreshing) return;
      const hash = Buffer.from(current.hash).toString('hex');
      if (hash === lastHash) return;
      refreshing = true;
      chain
        .request('head', {})
        .then((info) => {
          lastHash = Buffer.from(info.hash).toString('hex');
          p2p.setHead(info);
        })
        .catch((err: unknown) => log.warn(`Could not read the chain head: ${String(err)}`))
        .finally(() => (refreshing = false));
    }, HEAD_POLL_MS);
    return { port };
  },
  async stop() {
    clearInterval(headPoll);
    await service?.stop();
  },
});
