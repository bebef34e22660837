/**
 * A dev chain in this process with its chain actor and a state reader wired to what that actor serves
 * readers (the reader→chain channel without a thread): for tests and benches of the reader's answers.
 */
import { ChainActor } from '../../src/chain/chain-actor.js';
import type { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { Logger } from '../../src/shared/util/log.js';
import { StateReader } from '../../src/reader/state-reader.js';
import { devNetwork } from './dev-chain.js';

export interface InProcessReader {
  actor: ChainActor;
  reader: StateReader;
}

/** `onStateValues`: told how many state values each of the reader's asks names. */
export async function openInProcessReader(chain: Chain, logName: string, onStateValues: (count: number) => void = () => undefined): Promise<InProcessReader> {
  const actor = new ChainActor(chain, {
    rpc: { rpcGasCap: 0n, minGasPrice: 0n },
    genesis: parseGenesisJson(JSON.stringify(devNetwork.genesisJson)),
    pendingNonce: async () => null,
    onNewHead: () => undefined,
    log: new Logger(logName),
  });
  const reader = await StateReader.open({
    spec: await chainSpecFromGenesis(JSON.stringify(devNetwork.genesisJson)),
    chain: {
      stateValues: (keys) => {
        onStateValues(keys.length);
        return Promise.resolve(actor.reader.stateValues({ keys }));
      },
      block: async (ref) => actor.reader.block({ ref }),
      canonicalHash: async (number) => actor.reader.canonicalHash({ number }),
    },
    head: () => ({ number: chain.getHead().number, hash: chain.getHead().hash }),
    rpcGasCap: 0n,
    verifyKzg: async () => false,
  });
  return { actor, reader };
}
