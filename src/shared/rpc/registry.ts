/**
 * The ONE registry of JSON-RPC methods Basalt serves.
 *
 * Each entry says which API group enables it, which actor owns it and how its raw params are parsed.
 * Transports look a method up here and parse its params before anything crosses a thread, so an
 * actor only ever sees well-formed, typed params (`ParamsOf<M>`). Actors declare their handlers as
 * `MethodHandlers<'chain'>` etc., which the compiler checks against this table.
 */
import type { Json, Wire } from './types.js';
import type { MethodGroup } from './api-groups.js';
import { nodeMethods } from './methods/node-methods.js';
import { stateMethods } from './methods/state-methods.js';
import { blockMethods } from './methods/block-methods.js';
import { feeMethods } from './methods/fee-methods.js';
import { logMethods } from './methods/log-methods.js';
import { txpoolMethods } from './methods/txpool-methods.js';
import { peerMethods } from './methods/peer-methods.js';
import { debugMethods } from './methods/debug-methods.js';
import { qbftMethods } from './methods/qbft-methods.js';
import { subscriptionMethods } from './methods/subscription-methods.js';

/**
 * Who answers a method: an actor, or the transport itself without a hop. `reader`: a state reader
 * thread (state at a block, simulations), or the chain when the node runs none
 * (`--Xstate-reader-threads=0`): the chain answers every `reader` method too.
 */
export type Owner = 'chain' | 'txpool' | 'consensus' | 'p2p' | 'logindex' | 'transport' | 'reader';

/** The JSON-RPC transports: each serves the registry with its own enabled API groups. */
export type JsonRpcTransport = 'http' | 'ws' | 'ipc';

export interface MethodSpec {
  readonly group: MethodGroup;
  readonly owner: Owner;
  /**
   * Asked when `owner` answers `null`. Used by eth_getTransactionByHash: the pool answers first
   * (pending shape) and the chain only if the pool does not hold the transaction. Asking in this
   * order cannot miss a transaction that is being mined meanwhile, because the pool drops a
   * transaction only after the chain has imported its block.
   */
  readonly fallbackOwner?: Owner;
  /** Methods that reject any other number of params with "Invalid number of params" (§1.2 item 5). */
  readonly exactParamCount?: number;
  /**
   * The only transports that serve the method (subscriptions need a connection that outlives the
   * call); on the others it is "Method not found" as in Besu, whatever groups are enabled. On these it
   * is served whatever groups are enabled too: Besu adds eth_subscribe and eth_unsubscribe to every
   * WebSocket method set (rpc-auth-cli.md §6.2). Absent: all transports, where its group is enabled.
   */
  readonly transports?: readonly JsonRpcTransport[];
  /** Turns raw JSON params into the typed value the owner receives; throws `RpcError` on bad input. */
  parseParams(raw: readonly unknown[]): Wire;
}

const registry = { ...nodeMethods, ...stateMethods, ...blockMethods, ...feeMethods, ...logMethods, ...txpoolMethods, ...peerMethods, ...debugMethods, ...qbftMethods, ...subscriptionMethods };

type Registry = typeof registry;

export type MethodName = keyof Registry;

/** The typed params an owner receives for method `M`. */
export type ParamsOf<M extends MethodName> = ReturnType<Registry[M]['parseParams']>;

type OwnersOf<M extends MethodName> =
  | Registry[M]['owner']
  | (Registry[M]['owner'] extends 'reader' ? 'chain' : never)
  | (Registry[M] extends { readonly fallbackOwner: infer F } ? F : never);

/** Names of the methods owner `O` must answer (as owner or as fallback owner). */
export type MethodsOwnedBy<O extends Owner> = {
  [M in MethodName]: O extends OwnersOf<M> ? M : never;
}[MethodName];

/**
 * One method handler. Declared in method syntax so that its parameter is bivariant: a table of
 * handlers with their precise param types is then also a table of `WireHandler`s, which is how the
 * dispatcher (dispatch.ts) stores it without a cast. The registry is what guarantees that method M's
 * params are `ParamsOf<M>`: the transport parsed them with M's own `parseParams`.
 */
type Handler<P> = { handle(params: P): Json | Promise<Json> }['handle'];

/** The handler table an owner implements: one function per method it answers. */
export type MethodHandlers<O extends Owner> = {
  readonly [M in MethodsOwnedBy<O>]: Handler<ParamsOf<M>>;
};

/** A handler as the dispatcher calls it, with params as they crossed the thread. */
export type WireHandler = Handler<Wire>;

export const METHOD_REGISTRY: { readonly [M in MethodName]: Registry[M] } = registry;

export type RegisteredMethod = MethodSpec & { readonly name: MethodName };

const byName: ReadonlyMap<string, RegisteredMethod> = new Map(
  (Object.keys(registry) as MethodName[]).map((name): [string, RegisteredMethod] => [
    name,
    { ...(registry[name] as MethodSpec), name },
  ]),
);

/** The registry entry of `name` (case-sensitive), or undefined if Basalt does not serve it. */
export function lookupMethod(name: string): RegisteredMethod | undefined {
  return byName.get(name);
}

/** All served method names of one owner (for routing tables and tests). */
export function methodNamesOwnedBy(owner: Owner): MethodName[] {
  return (Object.keys(registry) as MethodName[]).filter((name) => {
    const spec: MethodSpec = registry[name];
    return spec.owner === owner || spec.fallbackOwner === owner || (owner === 'chain' && spec.owner === 'reader');
  });
}
