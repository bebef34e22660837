import { parentPort, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpointModule from 'comlink/dist/umd/node-adapter.js';
import type { ActorName } from './channel.js';
import type { HeadInfo } from './messages.js';

/**
 * The control plane between the supervisor and an actor: start once the actor's channels are in
 * place, stop when the node shuts down. Comlink carries it; it is a handful of calls per lifetime.
 */
export interface ActorControl<StartInfo> {
  start(): Promise<StartInfo>;
  /** Stop intake, finish the work in progress, release resources. */
  stop(): Promise<void>;
}

/** What each actor answers when it has started. */
export interface ActorStartInfo {
  chain: { head: HeadInfo; genesisHash: Uint8Array };
  txpool: null;
  consensus: null;
  /** The devp2p port actually bound. */
  p2p: { port: number };
  transport: null;
}

export type ControlOf<A extends ActorName> = ActorControl<ActorStartInfo[A]>;

type NodeEndpointFactory = (target: Worker | NonNullable<typeof parentPort>) => Comlink.Endpoint;
// comlink's node adapter is CommonJS whose typings claim a default export; the factory is the module.
const nodeEndpoint = nodeEndpointModule as unknown as NodeEndpointFactory;

/** Called once in a worker to offer actor `actor`'s control interface to the supervisor. */
export function exposeControl<A extends ActorName>(_actor: A, control: ControlOf<A>): void {
  if (!parentPort) throw new Error('exposeControl must run inside a worker thread');
  Comlink.expose(control, nodeEndpoint(parentPort));
}

/** The supervisor's handle on the control interface of the `actor` running in `worker`. */
export function controlOf<A extends ActorName>(_actor: A, worker: Worker): Comlink.Remote<ControlOf<A>> {
  return Comlink.wrap<ControlOf<A>>(nodeEndpoint(worker));
}
