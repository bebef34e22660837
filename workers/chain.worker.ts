/**
 * Chain actor thread: the one owner of RocksDB. Opens the chain, serves each channel what its edge
 * declares (src/chain/chain-actor.ts), publishes the head for the transports, and pushes every new
 * head to the pool, consensus and p2p, the new canonical blocks to the transports that subscribe, and
 * their logs to the log index; serves the state reader threads the state values and blocks they ask for.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import { CONSENSUS_CHAIN, LOGINDEX_CHAIN, P2P_CHAIN, READER_CHAIN, TRANSPORT_CHAIN, TXPOOL_CHAIN } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { Chain } from '../src/chain/chain.js';
import { prepareDatabaseLocation } from '../src/chain/database-location.js';
import { ChainActor } from '../src/chain/chain-actor.js';
import { chainSpecFromGenesis } from '../src/shared/execution/network-spec.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { HeadWriter } from '../src/shared/shared-memory/head-view.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';

const data = startActorThread('chain');
setLogLevel(data.logLevel);
const log = new Logger('Chain');

let chain: Chain | undefined;

exposeControl('chain', {
  async start() {
    const spec = await chainSpecFromGenesis(data.genesisJson, data.networkId);
    const location = await prepareDatabaseLocation(data.dataPath, (message) => log.info(message));
    const opened = await Chain.open(location, spec, data.chain);
    chain = opened;
    const headView = new HeadWriter(data.headView);
    const txpool = openChannel(TXPOOL_CHAIN, 'chain', data.ports.txpool);
    const consensus = openChannel(CONSENSUS_CHAIN, 'chain', data.ports.consensus);
    const p2p = data.ports.p2p === undefined ? undefined : openChannel(P2P_CHAIN, 'chain', data.ports.p2p);
    const logIndex = openChannel(LOGINDEX_CHAIN, 'chain', data.ports.logindex);
    const transports = data.ports.transports.map((port) => openChannel(TRANSPORT_CHAIN, 'chain', port));
    const actor = new ChainActor(opened, {
      rpc: { rpcGasCap: data.rpcGasCap, minGasPrice: data.minGasPrice, minPriorityFee: data.minPriorityFee },
      genesis: parseGenesisJson(data.genesisJson),
      pendingNonce: (address) => txpool.request('nextNonce', { address }),
      knownSenderKeys: (hashes) => txpool.request('senderKeys', { hashes }),
      onNewHead(event) {
        headView.publish(event.head.number, event.head.hash);
        txpool.emit('newHead', event);
        consensus.emit('newHead', event);
        p2p?.emit('newHead', event);
      },
      publishToTransport: (transport, event) => transports[transport]?.emit('canonicalBlocks', event),
      publishLogs: (event) => logIndex.emit('canonicalLogs', event),
      log,
    });
    txpool.serve(actor.txpool);
    consensus.serve(actor.consensus);
    p2p?.serve(actor.p2p);
    logIndex.serve(actor.logIndex);
    transports.forEach((channel, index) => channel.serve(actor.transportHandlers(index)));
    for (const port of data.ports.readers) openChannel(READER_CHAIN, 'chain', port).serve(actor.reader);
    const head = actor.head();
    headView.publish(head.number, head.hash);
    const genesisHash = await opened.store.getCanonicalHash(0n);
    if (!genesisHash) throw new Error('the chain has no genesis block');
    return { head, genesisHash };
  },
  metrics() {
    if (chain === undefined) throw new Error('the chain has not started');
    const block = chain.getHeadBlock();
    return {
      timestamp: block.header.timestamp,
      gasUsed: block.header.gasUsed,
      gasLimit: block.header.gasLimit,
      transactionCount: block.transactions.length,
      ommerCount: block.uncleHeaders.length,
      totalDifficulty: chain.getHead().totalDifficulty,
    };
  },
  async stop() {
    // The write lock inside Chain lets a block in progress finish before the database closes.
    if (chain) await chain.close();
    log.info('Database closed');
  },
});
