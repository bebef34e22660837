import { parentPort, Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpointModule from 'comlink/dist/umd/node-adapter.js';

/**
 * The control plane between the supervisor and an actor: start once the actor's channels are in
 * place, stop when the node shuts down. Comlink carries it; it is a handful of calls per lifetime.
 */
export interface ActorControl<StartInfo> {
  start(): Promise<StartInfo>;
  /** Stop intake, finish the work in progress, release resources. */
  stop(): Promise<void>;
}

type NodeEndpointFactory = (target: Worker | NonNullable<typeof parentPort>) => Comlink.Endpoint;
// comlink's node adapter is CommonJS whose typings claim a default export; the factory is the module.
const nodeEndpoint = nodeEndpointModule as unknown as NodeEndpointFactory;

/** Called once in a worker to offer its control interface to the supervisor. */
export function exposeControl<S>(control: ActorControl<S>): void {
  if (!parentPort) throw new Error('exposeControl must run inside a worker thread');
  Comlink.expose(control, nodeEndpoint(parentPort));
}

/** The supervisor's handle on an actor's control interface. */
export function controlOf<S>(worker: Worker): Comlink.Remote<ActorControl<S>> {
  return Comlink.wrap<ActorControl<S>>(nodeEndpoint(worker));
}
