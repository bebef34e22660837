/**
 * Methods a transport answers itself, without a hop to an actor: static node facts and the chain
 * head published in shared memory.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { RpcError, RpcErrors, toRpcErrorObject } from '../shared/rpc/errors.js';
import { toData, toQuantity } from '../shared/rpc/encoding.js';
import type { Dispatch, RpcOutcome } from './jsonrpc.js';
import { serveMethods } from '../shared/rpc/dispatch.js';
import type { MethodHandlers, MethodName, Owner } from '../shared/rpc/registry.js';
import type { Json, Wire } from '../shared/rpc/types.js';
import type { HeadReader } from '../shared/shared-memory/head-view.js';
import { changeLogLevelEverywhere } from '../shared/util/log.js';

export interface LocalMethodsContext {
  /** web3_clientVersion, e.g. `basalt/v0.1.0/linux-x86_64/nodejs-20`. */
  clientVersion: string;
  /** net_version (Besu's default network id is the chain id). */
  networkId: bigint;
  /** eth_chainId; null when the genesis has none. */
  chainId: bigint | null;
  /** The configured API names in order; rpc_modules lists them lower-cased. */
  apis: readonly string[];
  head: HeadReader;
  p2pEnabled: boolean;
  /** Connected peers, published by the p2p actor; absent means 0. */
  peerCount?: () => number;
  /** The sync in progress (full sync over devp2p), or undefined when in sync; absent means never syncing. */
  syncStatus?: () => SyncState | undefined;
  /** Highest eth/ protocol version offered to peers (src/p2p); absent = none (null). */
  ethProtocolVersion?: number;
  /** Where JSON-RPC HTTP, WebSocket and devp2p listen, for net_services (read at each call: a port 0 is filled in once bound). */
  jsonRpc?: { host: string; port: number };
  ws?: { host: string; port: number };
  /** Where GraphQL HTTP listens, when enabled (net_services' `graphQL`). */
  graphql?: { host: string; port: number };
  /** Where /metrics is served, when enabled (net_services' `metrics`). */
  metrics?: { host: string; port: number };
  /** The advertised devp2p host and the port the p2p actor listens on; absent when P2P is off. */
  p2p?: { host: string; port: number };
}

/** The methods a transport answers itself, but for the subscription methods, which act on a connection. */
export type LocalMethods = Omit<MethodHandlers<'transport'>, 'eth_subscribe' | 'eth_unsubscribe'>;

/** A sync in progress, as eth_syncing reports it. */
export interface SyncState {
  startingBlock: bigint;
  currentBlock: bigint;
  highestBlock: bigint;
}

/** eth_syncing's result, and a `syncing` notification's: false when in sync. */
export function syncingResult(sync: SyncState | null | undefined): Json {
  if (sync === null || sync === undefined) return false;
  return { startingBlock: toQuantity(sync.startingBlock), currentBlock: toQuantity(sync.currentBlock), highestBlock: toQuantity(sync.highestBlock) };
}

export function createLocalMethods(ctx: LocalMethodsContext): LocalMethods {
  return {
    eth_blockNumber: () => {
      const number = ctx.head.headNumber();
      if (number === null) throw new Error('the chain has not published a head yet');
      return toQuantity(number);
    },
    eth_chainId: () => (ctx.chainId === null ? null : toQuantity(ctx.chainId)),
    eth_syncing: () => syncingResult(ctx.syncStatus?.()),
    eth_sendTransaction: () => {
      throw new RpcError(RpcErrors.ETH_SEND_TX_NOT_AVAILABLE);
    },
    net_version: () => ctx.networkId.toString(10),
    net_listening: () => ctx.p2pEnabled,
    net_peerCount: () => {
      if (!ctx.p2pEnabled) throw new RpcError(RpcErrors.P2P_DISABLED);
      return toQuantity(ctx.peerCount?.() ?? 0);
    },
    web3_clientVersion: () => ctx.clientVersion,
    web3_sha3: ({ data }) => toData(keccak_256(data)),
    // No key management and no mining here: Besu's answers for a node without them (spec §3.1–3.4).
    eth_accounts: () => [],
    eth_hashrate: () => '0x0',
    // Besu answers the highest eth/ capability it offers, null without any.
    eth_protocolVersion: () => (ctx.ethProtocolVersion === undefined ? null : toQuantity(ctx.ethProtocolVersion)),
    net_services: () => {
      const services: { [name: string]: Json } = {};
      if (ctx.jsonRpc !== undefined) services.jsonrpc = { host: ctx.jsonRpc.host, port: String(ctx.jsonRpc.port) };
      if (ctx.ws !== undefined) services.ws = { host: ctx.ws.host, port: String(ctx.ws.port) };
      if (ctx.p2pEnabled && ctx.p2p !== undefined) services.p2p = { host: ctx.p2p.host, port: String(ctx.p2p.port) };
      if (ctx.metrics !== undefined) services.metrics = { host: ctx.metrics.host, port: String(ctx.metrics.port) };
      if (ctx.graphql !== undefined) services.graphQL = { host: ctx.graphql.host, port: String(ctx.graphql.port) };
      return services;
    },
    admin_changeLogLevel: ({ level }) => {
      changeLogLevelEverywhere(level);
      return 'Success';
    },
    rpc_modules: () => {
      const modules: { [name: string]: Json } = {};
      for (const api of ctx.apis) modules[api.toLowerCase()] = '1.0';
      return modules;
    },
  };
}

/**
 * Sends a call to an actor's channel; actors answer with a result or a catalogued error. Without a
 * p2p actor (`--p2p-enabled=false`) the p2p-owned methods answer Besu's "P2P has been disabled".
 */
export type ActorSend = (owner: Exclude<Owner, 'transport'>, method: MethodName, params: Wire) => Promise<RpcOutcome>;

/** eth_subscribe and eth_unsubscribe, which act on the connection that calls them (subscription-hub.ts). */
export type SubscriptionHandlers = Pick<MethodHandlers<'transport'>, 'eth_subscribe' | 'eth_unsubscribe'>;

/**
 * The subscription methods of a transport without connections (HTTP). Never called: the method caller
 * answers "Method not found" for them on such a transport before dispatching.
 */
export const CONNECTIONLESS_SUBSCRIPTIONS: SubscriptionHandlers = {
  eth_subscribe: () => {
    throw new RpcError(RpcErrors.METHOD_NOT_FOUND);
  },
  eth_unsubscribe: () => {
    throw new RpcError(RpcErrors.METHOD_NOT_FOUND);
  },
};

/**
 * The Dispatch of a transport: `transport`-owned methods run here through the one dispatcher,
 * everything else goes to `toActor`. `subscriptions` are those of the connection the dispatch serves.
 */
export function createDispatch(local: LocalMethods, toActor: ActorSend, subscriptions: SubscriptionHandlers = CONNECTIONLESS_SUBSCRIPTIONS): Dispatch {
  const serveLocally = serveMethods('transport', { ...local, ...subscriptions });
  return async (owner, method, params) => {
    if (owner !== 'transport') return toActor(owner, method, params);
    try {
      return { result: await serveLocally(method, params) };
    } catch (err) {
      return { error: toRpcErrorObject(err) };
    }
  };
}
