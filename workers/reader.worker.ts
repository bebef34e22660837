/**
 * A state reader thread (×`--Xstate-reader-threads`): answers the registry's `reader` methods
 * (eth_call, eth_estimateGas, eth_getBalance, eth_getCode, eth_getStorageAt) from the transports with
 * its own EVM, reading state values through the chain (src/reader/state-reader.ts says why that is
 * one block's state per answer).
 *
 * An actor rather than a piscina pool: each reader keeps what makes a call cheap — the persistent
 * VMs, the read state of the last root, the state values and blocks it has read — and the transports
 * reach it over a direct channel each, without a hop through a pool's queue on another thread.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import { READER_CHAIN, TRANSPORT_READER } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { chainSpecFromGenesis } from '../src/shared/execution/network-spec.js';
import { KzgVerifierPool } from '../src/shared/execution/kzg-verifier.js';
import { serveMethodsAsJsonText } from '../src/shared/rpc/dispatch.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { setLogLevel } from '../src/shared/util/log.js';
import { ArrivalOrder } from '../src/shared/util/arrival-order.js';
import { StateReader } from '../src/reader/state-reader.js';

const data = startActorThread('reader');
setLogLevel(data.logLevel);
const kzgVerifier = new KzgVerifierPool();

exposeControl('reader', {
  async start() {
    const spec = await chainSpecFromGenesis(data.genesisJson, data.networkId);
    const chain = openChannel(READER_CHAIN, 'reader', data.ports.chain);
    const head = new HeadReader(data.headView);
    const reader = await StateReader.open({
      spec,
      chain: {
        stateValues: (keys) => chain.request('stateValues', { keys }),
        block: (ref) => chain.request('block', { ref }),
        canonicalHash: (number) => chain.request('canonicalHash', { number }),
      },
      head: () => head.read(),
      rpcGasCap: data.rpcGasCap,
      verifyKzg: kzgVerifier.verify,
    });
    const serveRpc = serveMethodsAsJsonText('reader', reader.handlers);
    // Calls run one at a time (one read state): in arrival order across the transports' ports, not a port at a time.
    const arrivals = new ArrivalOrder();
    for (const port of data.ports.transports) {
      openChannel(TRANSPORT_READER, 'reader', port).serve({ rpc: ({ method, params }) => arrivals.run(() => serveRpc(method, params)) });
    }
    return null;
  },
  metrics: () => null,
  async stop() {
    await kzgVerifier.close();
  },
});
