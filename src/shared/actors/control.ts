import { parentPort, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpointModule from 'comlink/dist/umd/node-adapter.js';
import type { ActorName } from './channel.js';
import type { HeadInfo } from './messages.js';
import { threadMemory } from '../util/thread-memory.js';
import type { ThreadMemory } from '../util/thread-memory.js';

/** What each actor's thread implements: start once its channels are in place, stop at shutdown. */
export interface ActorLifecycle<StartInfo> {
  start(): Promise<StartInfo>;
  /** Stop intake, finish the work in progress, release resources. */
  stop(): Promise<void>;
}

/**
 * The control plane between the supervisor and an actor: its lifecycle, plus what every actor thread
 * answers alike (its memory figures). Comlink carries it; it is a handful of calls per minute at most.
 */
export interface ActorControl<StartInfo> extends ActorLifecycle<StartInfo> {
  memory(): ThreadMemory;
}

/** What each actor answers when it has started. */
export interface ActorStartInfo {
  chain: { head: HeadInfo; genesisHash: Uint8Array };
  txpool: null;
  consensus: null;
  /** The devp2p port actually bound. */
  p2p: { port: number };
  /** The ports this thread bound itself (the HTTP port is the supervisor's connection guard's). */
  transport: { wsPort?: number; graphqlPort?: number };
}

export type ControlOf<A extends ActorName> = ActorControl<ActorStartInfo[A]>;

type NodeEndpointFactory = (target: Worker | NonNullable<typeof parentPort>) => Comlink.Endpoint;
// comlink's node adapter is CommonJS whose typings claim a default export; the factory is the module.
const nodeEndpoint = nodeEndpointModule as unknown as NodeEndpointFactory;

/** Called once in a worker to offer actor `actor`'s control interface to the supervisor. */
export function exposeControl<A extends ActorName>(_actor: A, lifecycle: ActorLifecycle<ActorStartInfo[A]>): void {
  if (!parentPort) throw new Error('exposeControl must run inside a worker thread');
  const control: ControlOf<A> = { start: () => lifecycle.start(), stop: () => lifecycle.stop(), memory: threadMemory };
  Comlink.expose(control, nodeEndpoint(parentPort));
}

/** The supervisor's handle on the control interface of the `actor` running in `worker`. */
export function controlOf<A extends ActorName>(_actor: A, worker: Worker): Comlink.Remote<ControlOf<A>> {
  return Comlink.wrap<ControlOf<A>>(nodeEndpoint(worker));
}
