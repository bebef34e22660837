/**
 * What the supervisor hands each actor when it starts its thread: configuration (plain data) and the
 * MessagePorts of its channels (channels.ts). A port named after an actor is this actor's end of the
 * channel to that actor; `transports` are the ends towards every transport thread.
 *
 * `workerData` arrives untyped; `actorData(kind)` checks the `actor` tag the supervisor wrote, so a
 * worker started with another actor's data fails at once instead of misreading it.
 */
import { workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { LogLevel } from '../util/log.js';
import { nameThisThread } from '../util/thread-name.js';
import type { ActorName } from './channel.js';
import type { TxType } from '../ethereum/decoded-tx.js';
import type { AuthenticationConfig } from '../auth/authentication-config.js';

interface ActorDataBase {
  logLevel: LogLevel;
  /** The thread's name as the supervisor knows it (`transport-0`): what `top -H` shows (thread-name.ts). */
  threadName?: string;
  /** Genesis JSON text of the network, for actors that derive rules from it. */
  genesisJson: string;
  networkId?: bigint;
  /** With `--metrics-enabled`: where this thread counts its channel messages (mailbox-counters.ts). */
  metrics?: { mailboxCounters: SharedArrayBuffer };
}

/** Node options that change what the chain builds and stores. */
export interface ChainOptions {
  /** `--revert-reason-enabled`: store the REVERT data of a reverted transaction in its receipt. */
  revertReasonEnabled?: boolean;
  /** `--target-gas-limit`: built blocks move their gas limit toward this (see `nextGasLimit` in src/chain/chain.ts). */
  targetGasLimit?: bigint;
  /**
   * Whether each block's batch is fsynced before the block becomes the head (the default): what the
   * node has told anyone about — a head, a block, a receipt — then survives a power cut. `blocks
   * import` turns it off and syncs once when it closes the chain; a power cut during an import can
   * only lose blocks that running the same import again stores again.
   */
  syncEachBlock?: boolean;
}

export interface ChainActorData extends ActorDataBase {
  actor: 'chain';
  /** The data path; the database is in its `database` folder (src/shared/util/data-path.ts). */
  dataPath: string;
  rpcGasCap: bigint;
  /** Floor of eth_gasPrice (`--min-gas-price`). */
  minGasPrice: bigint;
  /** `--min-priority-fee`, the floor of eth_maxPriorityFeePerGas. */
  minPriorityFee: bigint;
  /** Published head number/hash that transports read without a round trip. */
  headView: SharedArrayBuffer;
  /** `--revert-reason-enabled` and `--target-gas-limit`. */
  chain: ChainOptions;
  /** `readers`: the ends towards each state reader thread (`--Xstate-reader-threads`). */
  ports: { txpool: MessagePort; consensus: MessagePort; p2p?: MessagePort; logindex: MessagePort; transports: MessagePort[]; readers: MessagePort[] };
}

export interface LogIndexActorData extends ActorDataBase {
  actor: 'logindex';
  /** The data path; the index is in its `log-index` folder (src/shared/util/data-path.ts). */
  dataPath: string;
  /** `--rpc-max-logs-range` for eth_getLogs (0 = unlimited). */
  rpcMaxLogsRange: bigint;
  /** `--rpc-max-logs-count`: the most logs one answer carries (0 = unlimited). */
  rpcMaxLogsCount: number;
  /** The head the chain publishes: a query waits until the index has reached it. */
  headView: SharedArrayBuffer;
  ports: { chain: MessagePort; transports: MessagePort[] };
}

/**
 * A state reader thread (src/reader/): answers state reads and simulations (eth_call, eth_estimateGas,
 * balances, code, storage) at a block, reading the state trie's nodes through the chain.
 */
export interface ReaderActorData extends ActorDataBase {
  actor: 'reader';
  /** `--rpc-gas-cap`, as the chain's. */
  rpcGasCap: bigint;
  /** The chain head the chain publishes: what `latest` names. */
  headView: SharedArrayBuffer;
  ports: { chain: MessagePort; transports: MessagePort[] };
}

export interface TxPoolActorData extends ActorDataBase {
  actor: 'txpool';
  pool: {
    priceBump: number;
    blobPriceBump: number;
    maxFutureBySender: number;
    minGasPrice: bigint;
    txFeeCap: bigint;
    noLocalPriority: boolean;
    layerMaxCapacity: number;
    maxPrioritized: number;
    maxPrioritizedByType: Partial<Record<TxType, number>>;
    strictTxReplayProtection: boolean;
  };
  /** `p2p` is absent when P2P is disabled. */
  ports: { chain: MessagePort; consensus: MessagePort; p2p?: MessagePort; transports: MessagePort[] };
}

export interface ConsensusActorData extends ActorDataBase {
  actor: 'consensus';
  /** This node's key: its devp2p identity and, when it is a validator, its signing key. */
  nodeKey: Uint8Array;
  /** Vanity bytes written into every proposed block's extraData. */
  extraDataVanity: Uint8Array;
  /** `--Xqbft-enable-early-round-change`: move rounds on f+1 round changes for higher rounds. */
  qbftEarlyRoundChange: boolean;
  /** `p2p` is absent when P2P is disabled: QBFT messages then have no peer to go to. */
  ports: { chain: MessagePort; txpool: MessagePort; p2p?: MessagePort; transports: MessagePort[] };
}

export interface P2pActorData extends ActorDataBase {
  actor: 'p2p';
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
  /** Hash of the chain's genesis block (eth/68 Status, fork id). */
  genesisHash: Uint8Array;
  /** `--discovery-enabled`: discovery v4 on UDP at the listening port. */
  discoveryEnabled: boolean;
  /** The p2p actor writes the peer count and sync state here for the transports (p2p-status-view.ts). */
  p2pStatusView: SharedArrayBuffer;
  ports: { chain: MessagePort; consensus: MessagePort; txpool: MessagePort; transports: MessagePort[] };
}

/**
 * What serves the HTTP ports (JSON-RPC HTTP and WebSocket, GraphQL): uWebSockets.js, or `node:http`
 * and `ws` where no native uWS build loads (src/transport/engine.ts). Chosen once by the supervisor.
 */
export type HttpEngineName = 'uws' | 'node';

/** Where the JSON-RPC HTTP port listens, and its request limits. */
export interface HttpListenConfig {
  /**
   * The public address, `--rpc-http-host` and the port (net_services). Without `socketPath` the
   * thread listens on it itself (0: the first thread has the kernel pick it, the others share it).
   */
  host: string;
  port: number;
  /**
   * The private unix socket this thread listens on instead, when the supervisor's connection guard
   * owns the public port (`--rpc-http-max-active-connections` given, or the `node` engine).
   */
  socketPath?: string;
  /** `--host-allowlist` entries (`*` accepts any Host). */
  hostAllowlist: readonly string[];
  /** `--rpc-http-cors-origins` entries (regular expressions; `*`/`all` any origin). */
  corsOrigins: readonly string[];
  /** `--rpc-http-max-request-content-length`, bytes. */
  maxRequestContentLength: number;
  /** `--rpc-http-max-batch-size`; ≤ 0 unlimited. */
  maxBatchSize: number;
  /** `--json-pretty-print-enabled`. */
  prettyPrint: boolean;
  /** `--Xhttp-timeout-seconds`, default 30: a JSON-RPC body still running then answers 408. */
  timeoutSeconds?: number;
}

/** Where and how the GraphQL HTTP port listens (`--graphql-http-*`), and its limits. */
export interface GraphqlListenConfig {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * With the `node` engine, the private unix socket this thread listens on: the supervisor's relay
   * owns the public `port` (node:http cannot share a port between threads on Node 20).
   */
  socketPath?: string;
  /** `--host-allowlist`, as on the JSON-RPC port. */
  hostAllowlist: readonly string[];
  /** `--graphql-http-cors-origins`. */
  corsOrigins: readonly string[];
  /** Bodies over this are refused (413), as on the JSON-RPC port (`--rpc-http-max-request-content-length`). */
  maxRequestContentLength: number;
  /** A query still running after this answers 504 (`--Xhttp-timeout-seconds`, 30 as on the JSON-RPC port). */
  timeoutSeconds: number;
  /** `--graphql-max-query-complexity` (Besu's 200). */
  maxQueryComplexity: number;
  /** `--graphql-max-query-depth` (0: no limit, as Besu). */
  maxQueryDepth: number;
}

/** Where and how the JSON-RPC WebSocket port listens (rpc-auth-cli.md §6.1). */
export interface WsListenConfig {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** With the `node` engine, the private unix socket this thread listens on (as GraphqlListenConfig's). */
  socketPath?: string;
  /** `--host-allowlist` entries, checked at the upgrade. */
  hostAllowlist: readonly string[];
  /** `--rpc-ws-max-active-connections`, for the node (all transport threads together). */
  maxActiveConnections: number;
  /** `--rpc-ws-max-frame-size`, bytes; a message may be 4 frames long. */
  maxFrameSize: number;
}

/**
 * A transport thread: the JSON-RPC HTTP port, the WebSocket port, or both (every JSON-RPC transport
 * thread serves the enabled ones); the first thread also serves IPC. Each transport has its own API
 * groups. GraphQL HTTP runs on the same threads, or on threads of its own (`--graphql-http-workers`)
 * that serve nothing else.
 */
export interface TransportActorData extends ActorDataBase {
  actor: 'transport';
  engine: HttpEngineName;
  /** `authentication`: with `--rpc-<service>-authentication-enabled`, the same for every thread of that service. */
  http?: { server: HttpListenConfig; apis: readonly string[]; authentication?: AuthenticationConfig };
  ws?: { server: WsListenConfig; apis: readonly string[]; authentication?: AuthenticationConfig };
  ipc?: { path: string; apis: readonly string[] };
  /** The GraphQL HTTP port; absent unless this thread serves it. */
  graphql?: GraphqlListenConfig;
  /** Where GraphQL HTTP listens when other threads serve it (`--graphql-http-workers`), for net_services. */
  graphqlService?: { host: string; port: number };
  /** Where the supervisor serves /metrics (`--metrics-enabled`), for net_services. */
  metricsService?: { host: string; port: number };
  /** Open WebSocket connections and subscription ids, shared by every transport thread (transport-counters.ts). */
  counters: SharedArrayBuffer;
  chainId: bigint;
  clientVersion: string;
  p2pEnabled: boolean;
  /** Advertised devp2p host and listening port (net_services), when P2P is on. */
  p2p?: { host: string; port: number };
  /** Peer count and sync state written by the p2p actor (p2p-status-view.ts). */
  p2pStatusView?: SharedArrayBuffer;
  headView: SharedArrayBuffer;
  /** With state reader threads: raised at the first call for one, which starts them (reader-demand.ts). */
  readerDemand?: SharedArrayBuffer;
  /** `p2p` is absent when P2P is disabled; `readers`: one end per state reader thread (none: the chain reads state). */
  ports: { chain: MessagePort; txpool: MessagePort; consensus: MessagePort; p2p?: MessagePort; logindex: MessagePort; readers: MessagePort[] };
}

/** The data of each actor kind. */
export interface ActorDataOf {
  chain: ChainActorData;
  txpool: TxPoolActorData;
  consensus: ConsensusActorData;
  p2p: P2pActorData;
  logindex: LogIndexActorData;
  transport: TransportActorData;
  reader: ReaderActorData;
}

function isActorData<A extends ActorName>(value: unknown, actor: A): value is ActorDataOf[A] {
  return typeof value === 'object' && value !== null && 'actor' in value && value.actor === actor;
}

/** This worker's data, which must be that of actor `actor`. */
export function actorData<A extends ActorName>(actor: A): ActorDataOf[A] {
  const data: unknown = workerData;
  if (!isActorData(data, actor)) throw new Error(`this thread was not started as the ${actor} actor`);
  return data;
}

/**
 * The start of an actor thread: its data, checked as `actorData` does, and the thread named as the
 * supervisor knows it (thread-name.ts). Each worker's first line.
 */
export function startActorThread<A extends ActorName>(actor: A): ActorDataOf[A] {
  const data = actorData(actor);
  nameThisThread(data.threadName ?? actor);
  return data;
}

/** Every MessagePort in an actor's data, to move to its thread. */
export function portsOf(data: ActorDataOf[ActorName]): MessagePort[] {
  return Object.values(data.ports).flatMap((port: MessagePort | MessagePort[] | undefined) => (port === undefined ? [] : port));
}
