/**
 * Transaction pool actor thread: wires the pool's core (src/txpool/txpool-actor.ts) to its channels
 * and to the piscina pool that decodes transactions and recovers their senders.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { availableParallelism } from 'node:os';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import { CONSENSUS_TXPOOL, P2P_TXPOOL, TRANSPORT_TXPOOL, TXPOOL_CHAIN } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import { OnDemandTaskPool, threadsBesideChain } from '../src/shared/util/task-pool.js';
import { TxPoolActor } from '../src/txpool/txpool-actor.js';
import { DecodeBatches } from '../src/txpool/decode-batches.js';
import type decodeTransactions from './tasks/transaction-decode.task.js';

const data = startActorThread('txpool');
setLogLevel(data.logLevel);
const log = new Logger('TxPool');

// No decode thread while no transaction comes: the first one starts them, all together, and they retire
// together after a minute without work (OnDemandTaskPool says why together). One per core but the
// chain's: each decode thread is an isolate that compiles the decoder for itself, and on a 2-core
// machine a second one found no core free while a burst was being included (ERC-20 bursts of 2,000 on
// fresh nodes, three alternated pairs: 875-979 transfers/s included with one thread against 822-861
// with two, 6-8 % less CPU in all, the decoders' own 250-290 ms against 330-390).
const decodeThreads = threadsBesideChain(availableParallelism());
const decoders = new OnDemandTaskPool<typeof decodeTransactions>(new URL('./tasks/transaction-decode.task.js', import.meta.url), {
  threads: decodeThreads,
  idleMs: 60_000,
  name: 'transaction decoder pool',
});
const decodeBatches = new DecodeBatches((raws, rules) => decoders.run({ raws, rules }), decodeThreads);

let pool: TxPoolActor | undefined;

exposeControl('txpool', {
  async start() {
    const chain = openChannel(TXPOOL_CHAIN, 'txpool', data.ports.chain);
    const transports = data.ports.transports.map((port) => openChannel(TRANSPORT_TXPOOL, 'txpool', port));
    const p2p = data.ports.p2p === undefined ? undefined : openChannel(P2P_TXPOOL, 'txpool', data.ports.p2p);
    const actor = new TxPoolActor({
      genesis: parseGenesisJson(data.genesisJson),
      pool: data.pool,
      decode: (raw, rules) => decodeBatches.decode(raw, rules),
      accounts: (addresses) => chain.request('accounts', { addresses }),
      ...(p2p ? { gossip: (txs) => p2p.emit('newTransactions', { txs }) } : {}),
      transports: {
        pending: (transport, event) => transports[transport]?.emit('pendingTransactions', event),
        dropped: (transport, hashes) => transports[transport]?.emit('droppedTransactions', { hashes }),
      },
      log,
    });
    pool = actor;
    actor.setHead(await chain.request('head', null));
    chain.serve(actor.chain).on({ newHead: (event) => actor.onNewHead(event) });
    p2p?.serve(actor.p2p);
    openChannel(CONSENSUS_TXPOOL, 'txpool', data.ports.consensus).serve(actor.consensus);
    transports.forEach((channel, index) => channel.serve(actor.transportHandlers(index)));
    return null;
  },
  metrics: () => ({ transactions: pool?.size ?? 0 }),
  async stop() {
    await decoders.destroy();
  },
});
