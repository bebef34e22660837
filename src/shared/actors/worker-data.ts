import type { MessagePort } from 'node:worker_threads';
import type { ChainOptions } from '../../chain/chain.js';
import type { HttpServerConfig } from '../../transport/http-server.js';
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
  /** `--revert-reason-enabled` and `--target-gas-limit`. */
  chain: ChainOptions;
  ports: { txpool: MessagePort; consensus: MessagePort; http: MessagePort[] };
}

export interface TxPoolActorData extends ActorDataBase {
  pool: {
    priceBump: number;
    maxFutureBySender: number;
    minGasPrice: bigint;
    txFeeCap: bigint;
    noLocalPriority: boolean;
    strictTxReplayProtection: boolean;
  };
  /** `p2p` is absent when P2P is disabled. */
  ports: { chain: MessagePort; consensus: MessagePort; http: MessagePort[]; p2p?: MessagePort };
}

export interface ConsensusActorData extends ActorDataBase {
  /** This node's key: its devp2p identity and, when it is a validator, its signing key. */
  nodeKey: Uint8Array;
  /** Vanity bytes written into every proposed block's extraData. */
  extraDataVanity: Uint8Array;
  /** `--Xqbft-enable-early-round-change`: move rounds on f+1 round changes for higher rounds. */
  qbftEarlyRoundChange: boolean;
  /** `p2p` is absent when P2P is disabled: QBFT messages then have no peer to go to. */
  ports: { chain: MessagePort; txpool: MessagePort; http: MessagePort[]; p2p?: MessagePort };
}

export interface HttpActorData extends ActorDataBase {
  server: Omit<HttpServerConfig, 'call' | 'health'>;
  apis: readonly string[];
  chainId: bigint;
  clientVersion: string;
  p2pEnabled: boolean;
  /** Advertised devp2p host and listening port (net_services), when P2P is on. */
  p2p?: { host: string; port: number };
  /** Peer count and sync state written by the p2p actor (src/p2p/status-view.ts). */
  p2pStatusView?: SharedArrayBuffer;
  headView: SharedArrayBuffer;
  /** `p2p` is absent when P2P is disabled. */
  ports: { chain: MessagePort; txpool: MessagePort; consensus: MessagePort; p2p?: MessagePort };
}

export interface P2pActorData extends ActorDataBase {
  /** The node key: the RLPx identity, equal to the validator key (qbft-and-p2p.md §4.7). */
  nodeKey: Uint8Array;
  /** Hello client id and admin_nodeInfo name (web3_clientVersion). */
  clientVersion: string;
  /** `--p2p-host`: advertised in the enode. */
  advertisedHost: string;
  /** `--p2p-interface`: where the listener binds. */
  listenHost: string;
  listenPort: number;
  maxPeers: number;
  /** `--bootnodes`, dialled directly as static peers and, with discovery, its seeds. */
  bootnodes: string[];
  /** `--discovery-enabled`: discovery v4 on UDP at the listening port. */
  discoveryEnabled: boolean;
  /** The p2p actor writes the peer count and sync state here for the transports (src/p2p/status-view.ts). */
  p2pStatusView: SharedArrayBuffer;
  /** The chain head published by the chain actor; the p2p actor follows it for Status and admin_nodeInfo. */
  headView: SharedArrayBuffer;
  ports: { chain: MessagePort; consensus: MessagePort; txpool: MessagePort; http: MessagePort[] };
}
