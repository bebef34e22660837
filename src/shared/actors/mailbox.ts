import type { MessagePort } from 'node:worker_threads';
import type { RpcErrorObject } from '../rpc/types.js';
import { RpcErrors, toRpcErrorObject } from '../rpc/errors.js';

/**
 * A lean typed request/response channel over a MessagePort: one postMessage per request and one per
 * answer, matched by a numeric id. This is the hot path between transports and actors (comlink costs
 * several times more per call and is kept for the control plane).
 *
 * `Protocol` maps each request type to its request payload and its answer:
 *   { getHead: { req: {}; res: HeadInfo }; ... }
 * Either side may also push one-way events (`Events`), e.g. the chain announcing a new head.
 */
export type Protocol = Record<string, { req: unknown; res: unknown }>;
export type Events = Record<string, unknown>;

type RequestMessage<P extends Protocol> = {
  [K in keyof P & string]: { kind: 'req'; id: number; type: K; body: P[K]['req'] };
}[keyof P & string];
type ResponseMessage = { kind: 'res'; id: number; ok: true; body: unknown } | { kind: 'res'; id: number; ok: false; error: RpcErrorObject };
type EventMessage<E extends Events> = { [K in keyof E & string]: { kind: 'event'; type: K; body: E[K] } }[keyof E & string];

/** Thrown on the calling side when the other actor answered with an error. */
export class RemoteError extends Error {
  constructor(readonly error: RpcErrorObject) {
    super(error.message);
  }
}

export type Handlers<P extends Protocol> = { [K in keyof P]: (body: P[K]['req']) => Promise<P[K]['res']> | P[K]['res'] };
export type EventHandlers<E extends Events> = { [K in keyof E]?: (body: E[K]) => void };

/**
 * One end of a channel. `Out` is what this end may ask the other end, `In` what it answers;
 * `OutEvents`/`InEvents` likewise for one-way pushes.
 */
export class Mailbox<Out extends Protocol, In extends Protocol = Record<never, never>, OutEvents extends Events = Record<never, never>, InEvents extends Events = Record<never, never>> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private handlers: Partial<Handlers<In>> = {};
  private eventHandlers: EventHandlers<InEvents> = {};

  constructor(private readonly port: MessagePort) {
    port.on('message', (msg: RequestMessage<In> | ResponseMessage | EventMessage<InEvents>) => this.dispatch(msg));
    port.on('close', () => this.failPending('channel closed'));
  }

  request<K extends keyof Out & string>(type: K, body: Out[K]['req']): Promise<Out[K]['res']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.port.postMessage({ kind: 'req', id, type, body });
    });
  }

  emit<K extends keyof OutEvents & string>(type: K, body: OutEvents[K]): void {
    this.port.postMessage({ kind: 'event', type, body });
  }

  serve(handlers: Handlers<In>): this {
    this.handlers = handlers;
    return this;
  }

  on(handlers: EventHandlers<InEvents>): this {
    this.eventHandlers = handlers;
    return this;
  }

  close(): void {
    this.failPending('channel closed');
    this.port.close();
  }

  /** Lets the thread exit while this channel is idle. */
  unref(): this {
    this.port.unref();
    return this;
  }

  private dispatch(msg: RequestMessage<In> | ResponseMessage | EventMessage<InEvents>): void {
    if (msg.kind === 'res') {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.ok) waiter.resolve(msg.body);
      else waiter.reject(new RemoteError(msg.error));
    } else if (msg.kind === 'req') {
      void this.answer(msg);
    } else {
      const handler = this.eventHandlers[msg.type];
      if (handler) handler(msg.body);
    }
  }

  private async answer(msg: RequestMessage<In>): Promise<void> {
    const handler = this.handlers[msg.type] as ((body: unknown) => unknown) | undefined;
    try {
      if (!handler) throw new Error(`no handler for ${msg.type}`);
      const body = await handler(msg.body);
      this.port.postMessage({ kind: 'res', id: msg.id, ok: true, body });
    } catch (err) {
      const error = err instanceof RemoteError ? err.error : toRpcErrorObject(err);
      if (error.code === RpcErrors.INTERNAL_ERROR.code && !(err instanceof RemoteError)) {
        // An unexpected failure inside an actor: keep the cause in the log, not in the client's answer.
        console.error(`[mailbox] ${msg.type} failed:`, err);
      }
      this.port.postMessage({ kind: 'res', id: msg.id, ok: false, error });
    }
  }

  private failPending(reason: string): void {
    for (const waiter of this.pending.values()) waiter.reject(new Error(reason));
    this.pending.clear();
  }
}
