/**
 * Consensus actor thread: runs QBFT (src/consensus/node-consensus.ts) on real time, with the chain and
 * the pool behind its channels and validator peers behind the p2p actor. Wiring only.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import type { ChannelEnd } from '../src/shared/actors/channel.js';
import { CONSENSUS_CHAIN, CONSENSUS_P2P, CONSENSUS_TXPOOL, TRANSPORT_CONSENSUS } from '../src/shared/actors/channels.js';
import type { ConsensusP2p } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { NodeConsensus, systemClock } from '../src/consensus/node-consensus.js';
import type { ConsensusNetwork } from '../src/consensus/node-consensus.js';
import { messageAuthor } from '../src/consensus/messages.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { serveMethodsAsJsonText } from '../src/shared/rpc/dispatch.js';
import type { JsonTextServer } from '../src/shared/rpc/dispatch.js';
import { RpcError, RpcErrors } from '../src/shared/rpc/errors.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';

const data = startActorThread('consensus');
setLogLevel(data.logLevel);
const log = new Logger('Consensus');

let consensus: NodeConsensus | undefined;

/**
 * QBFT messages go through the p2p actor to the connected validators of the current height; a
 * gossiped one never back to its origin or its author (qbft-and-p2p.md §4.7). Without the p2p actor
 * (`--p2p-enabled=false`) they have no peer to go to.
 */
function peerNetwork(p2p: ChannelEnd<ConsensusP2p, 'consensus'> | undefined): ConsensusNetwork {
  if (!p2p) return { broadcast: () => undefined, gossip: () => undefined };
  const recipients = () => consensus?.controller.context?.validators ?? [];
  return {
    broadcast: (message) => p2p.emit('istanbulSend', { code: message.code, data: message.data, recipients: recipients(), excludeAddresses: [] }),
    gossip: (message, origin) =>
      p2p.emit('istanbulSend', {
        code: message.code,
        data: message.data,
        recipients: recipients(),
        excludeAddresses: [messageAuthor(message)],
        ...(origin === undefined ? {} : { excludePeer: origin }),
      }),
  };
}

exposeControl('consensus', {
  async start() {
    const genesis = parseGenesisJson(data.genesisJson);
    const chain = openChannel(CONSENSUS_CHAIN, 'consensus', data.ports.chain);
    const pool = openChannel(CONSENSUS_TXPOOL, 'consensus', data.ports.txpool);
    const p2p = data.ports.p2p === undefined ? undefined : openChannel(CONSENSUS_P2P, 'consensus', data.ports.p2p);
    // Until QBFT runs (a genesis without qbft never starts it) the consensus methods are not served.
    let methods: JsonTextServer = async () => {
      throw new RpcError(RpcErrors.METHOD_NOT_FOUND);
    };
    for (const port of data.ports.transports) {
      openChannel(TRANSPORT_CONSENSUS, 'consensus', port).serve({ rpc: ({ method, params }) => methods(method, params) });
    }
    if (!genesis.qbft) {
      log.info('The genesis has no qbft section: this node does not produce blocks');
      return null;
    }
    const node = new NodeConsensus(
      {
        nodeKey: data.nodeKey,
        vanity: data.extraDataVanity,
        genesis,
        txSelectionShare: 0.75,
        maxTransactionsPerBlock: 20_000,
        earlyRoundChange: data.qbftEarlyRoundChange,
      },
      {
        head: () => chain.request('head', null),
        selectTransactions: (req) => pool.request('select', req),
        prebuild: async (req) => (await chain.request('prebuild', req)).included,
        build: (req) => chain.request('build', req),
        discardBuilt: async () => {
          await chain.request('discardBuilt', null);
        },
        importCommitted: async (rlp) => {
          await chain.request('importCommitted', { rlp });
        },
        validateBlock: (rlp) => chain.request('validateProposal', { rlp }),
        reportRejected: async (rejected) => {
          await pool.request('buildRejected', { rejected });
        },
        headers: (from, to) => chain.request('headers', { from, to }),
        headerByHash: (hash) => chain.request('headerByHash', { hash }),
        call: (blockNumber, to, callData) => chain.request('call', { blockNumber, to, data: callData }),
      },
      peerNetwork(p2p),
      systemClock,
      (message, level = 'info') => log[level](message),
    );
    consensus = node;
    methods = serveMethodsAsJsonText('consensus', node.rpc);
    chain.on({
      newHead: ({ head, removedBlocks, addedBlocks }) =>
        // A re-org joined `addedBlocks` above the block the two branches share.
        node.onNewHead(head, removedBlocks.length > 0 ? head.number - BigInt(addedBlocks.length) : undefined),
    });
    p2p?.on({ istanbulMessage: ({ code, data: messageData, origin }) => node.runner.onMessage(code, messageData, origin) });
    await node.start();
    return null;
  },
  metrics() {
    const height = consensus?.controller.height;
    // A height waits for its block timer before round 0 starts: it is in round 0 until then.
    return height === undefined ? null : { height, round: consensus?.controller.round ?? 0 };
  },
  async stop() {
    await consensus?.stop();
  },
});
