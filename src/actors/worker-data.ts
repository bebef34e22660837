import type { MessagePort } from 'node:worker_threads';
import type { HttpServerConfig } from '../transport/http-server.js';
import type { LogLevel } from '../util/log.js';

/**
 * What the supervisor hands each actor when it starts its thread: configuration (plain data) and the
 * MessagePorts of its direct channels. A port named after an actor is this actor's end of the channel
 * to that actor.
 */
interface ActorDataBase {
  logLevel: LogLevel;
  /** Genesis JSON text of the network, for actors that derive rules from it. */
  genesisJson: string;
  networkId?: bigint;
}

export interface ChainActorData extends ActorDataBase {
  dataPath: string;
  rpcGasCap: bigint;
  /** Floor of eth_gasPrice (`--min-gas-price`). */
  minGasPrice: bigint;
  /** `--rpc-max-logs-range` for eth_getLogs (0 = unlimited). */
  rpcMaxLogsRange: bigint;
  /** `--min-priority-fee`, the floor of eth_maxPriorityFeePerGas. */
  minPriorityFee: bigint;
  /** Published head number/hash that transports read without a round trip. */
  headView: SharedArrayBuffer;
  ports: { txpool: MessagePort; consensus: MessagePort; http: MessagePort[] };
}

export interface TxPoolActorData extends ActorDataBase {
  pool: {
    priceBump: number;
    maxFutureBySender: number;
    minGasPrice: bigint;
    txFeeCap: bigint;
    noLocalPriority: boolean;
  };
  ports: { chain: MessagePort; consensus: MessagePort; http: MessagePort[] };
}

export interface ConsensusActorData extends ActorDataBase {
  /** This node's key: its devp2p identity and, when it is a validator, its signing key. */
  nodeKey: Uint8Array;
  /** Vanity bytes written into every proposed block's extraData. */
  extraDataVanity: Uint8Array;
  ports: { chain: MessagePort; txpool: MessagePort; http: MessagePort[] };
}

export interface HttpActorData extends ActorDataBase {
  server: Omit<HttpServerConfig, 'call' | 'health'>;
  apis: readonly string[];
  chainId: bigint;
  clientVersion: string;
  p2pEnabled: boolean;
  headView: SharedArrayBuffer;
  ports: { chain: MessagePort; txpool: MessagePort; consensus: MessagePort };
}
