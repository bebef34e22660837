/**
 * Consensus actor: decides when this node proposes, and drives build → seal → import through the
 * chain and the pool. The decision logic lives in src/consensus; this file only wires ports.
 */
import { workerData } from 'node:worker_threads';
import { exposeControl } from '../src/actors/control.js';
import { Mailbox } from '../src/actors/mailbox.js';
import type { ChainEvents, ChainProtocol, ConsensusProtocol, TxPoolProtocol } from '../src/actors/protocols.js';
import type { ConsensusActorData } from '../src/actors/worker-data.js';
import { BlockProducer, systemClock } from '../src/consensus/block-producer.js';
import { parseGenesisJson } from '../src/chain/genesis.js';
import { RpcError, RpcErrors } from '../src/rpc/errors.js';
import { Logger, setLogLevel } from '../src/util/log.js';

const data = workerData as ConsensusActorData;
setLogLevel(data.logLevel);
const log = new Logger('Consensus');

let producer: BlockProducer | undefined;

exposeControl<null>({
  async start() {
    const genesis = parseGenesisJson(data.genesisJson);
    const chain = new Mailbox<ChainProtocol, ConsensusProtocol, Record<never, never>, ChainEvents>(data.ports.chain);
    const pool = new Mailbox<TxPoolProtocol, ConsensusProtocol>(data.ports.txpool);
    const rpc = { rpc: async () => Promise.reject(new RpcError(RpcErrors.METHOD_NOT_ENABLED)) };
    chain.serve(rpc);
    pool.serve(rpc);
    for (const port of data.ports.http) new Mailbox<Record<never, never>, ConsensusProtocol>(port).serve(rpc);

    if (!genesis.qbft) {
      log.info('The genesis has no qbft section: this node does not produce blocks');
      return null;
    }
    producer = new BlockProducer(
      {
        nodeKey: data.nodeKey,
        blockPeriodSeconds: genesis.qbft.blockPeriodSeconds,
        txSelectionShare: 0.75,
        vanity: data.extraDataVanity,
        maxTransactionsPerBlock: 20_000,
      },
      {
        selectTransactions: (req) => pool.request('select', req),
        build: (req) => chain.request('build', req),
        importBuilt: async (hash, sealedExtraData) => {
          await chain.request('importBuilt', { hash, sealedExtraData });
        },
        discardBuilt: async () => {
          await chain.request('discardBuilt', {});
        },
        dropTransactions: async (hashes) => {
          await pool.request('drop', { hashes });
        },
      },
      systemClock,
      (message, level = 'info') => log[level](message),
    );
    chain.on({ newHead: (event) => producer?.onNewHead(event.head) });
    producer.onNewHead(await chain.request('head', {}));
    return null;
  },
  async stop() {
    await producer?.stop();
  },
});
