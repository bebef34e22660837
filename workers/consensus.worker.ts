/**
 * Consensus actor: runs QBFT (src/consensus) on real time, drives build → seal → import through the
 * chain and the pool, and answers the qbft_* JSON-RPC methods. This file only wires mailboxes.
 */
import { workerData } from 'node:worker_threads';
import { exposeControl } from '../src/shared/actors/control.js';
import { Mailbox } from '../src/shared/actors/mailbox.js';
import type {
  ChainEvents,
  ChainProtocol,
  ConsensusProtocol,
  ConsensusToP2pEvents,
  P2pToConsensusEvents,
  RpcCall,
  TxPoolProtocol,
} from '../src/shared/actors/channels.js';
import type { ConsensusActorData } from '../src/shared/actors/worker-data.js';
import { NodeConsensus, systemClock } from '../src/consensus/node-consensus.js';
import type { ConsensusNetwork, NodeChainPorts } from '../src/consensus/node-consensus.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { messageAuthor } from '../src/consensus/messages.js';
import { RpcError, RpcErrors } from '../src/shared/rpc/errors.js';
import type { MethodHandlers } from '../src/shared/rpc/registry.js';
import type { Json } from '../src/shared/rpc/types.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';

const data = workerData as ConsensusActorData;
setLogLevel(data.logLevel);
const log = new Logger('Consensus');

let consensus: NodeConsensus | undefined;

type P2pMailbox = Mailbox<Record<never, never>, Record<never, never>, ConsensusToP2pEvents, P2pToConsensusEvents>;

/**
 * QBFT messages go through the p2p actor to the connected validators of the current height; a
 * gossiped one never back to its origin or its author (qbft-and-p2p.md §4.7). Without the p2p actor
 * (`--p2p-enabled=false`) they have no peer to go to.
 */
function peerNetwork(p2p: P2pMailbox | undefined): ConsensusNetwork {
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

function answer(call: RpcCall): Promise<Json> | Json {
  const handlers = consensus?.rpc as Record<string, ((params: unknown) => Json | Promise<Json>) | undefined> | undefined;
  const handler = handlers?.[call.method as keyof MethodHandlers<'consensus'>];
  if (!handler) throw new RpcError(RpcErrors.METHOD_NOT_ENABLED);
  return handler(call.params);
}

exposeControl<null>({
  async start() {
    const genesis = parseGenesisJson(data.genesisJson);
    const chain = new Mailbox<ChainProtocol, ConsensusProtocol, Record<never, never>, ChainEvents>(data.ports.chain);
    const pool = new Mailbox<TxPoolProtocol, ConsensusProtocol>(data.ports.txpool);
    const rpc = { rpc: (call: RpcCall) => answer(call) };
    chain.serve(rpc);
    pool.serve(rpc);
    for (const port of data.ports.http) new Mailbox<Record<never, never>, ConsensusProtocol>(port).serve(rpc);
    const p2p: P2pMailbox | undefined = data.ports.p2p === undefined ? undefined : new Mailbox(data.ports.p2p);

    if (!genesis.qbft) {
      log.info('The genesis has no qbft section: this node does not produce blocks');
      return null;
    }
    const ports: NodeChainPorts = {
      head: () => chain.request('head', {}),
      selectTransactions: (req) => pool.request('select', req),
      build: (req) => chain.request('build', req),
      heldBlock: () => chain.request('heldBlock', {}),
      importBuilt: async (hash, sealedExtraData) => {
        await chain.request('importBuilt', { hash, sealedExtraData });
      },
      discardBuilt: async () => {
        await chain.request('discardBuilt', {});
      },
      importBlock: async (rlp) => {
        await chain.request('consensusImportBlock', { rlp });
      },
      validateBlock: (rlp) => chain.request('consensusValidateBlock', { rlp }),
      dropTransactions: async (hashes) => {
        await pool.request('drop', { hashes });
      },
      headers: (from, to) => chain.request('consensusHeaders', { from, to }),
      headerByHash: (hash) => chain.request('consensusHeaderByHash', { hash }),
      call: (blockNumber, to, callData) => chain.request('consensusCall', { blockNumber, to, data: callData }),
    };
    consensus = new NodeConsensus(
      {
        nodeKey: data.nodeKey,
        vanity: data.extraDataVanity,
        genesis,
        txSelectionShare: 0.75,
        maxTransactionsPerBlock: 20_000,
        earlyRoundChange: data.qbftEarlyRoundChange,
      },
      ports,
      peerNetwork(p2p),
      systemClock,
      (message, level = 'info') => log[level](message),
    );
    chain.on({ newHead: (event) => consensus?.onNewHead(event.head) });
    p2p?.on({ istanbulMessage: ({ code, data: messageData, origin }) => consensus?.runner.onMessage(code, messageData, origin) });
    await consensus.start();
    return null;
  },
  async stop() {
    await consensus?.stop();
  },
});
