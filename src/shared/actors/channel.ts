/**
 * Typed channels between actors. Each edge of the actor graph is declared once (channels.ts): its two
 * ends, the requests each end may send (with their answers) and the one-way events each end may emit.
 * Both ends' types are derived from that one declaration, and at run time an end serves only the
 * requests and accepts only the events its edge declares — holding a chain port does not let a
 * transport call block import.
 *
 * On the wire: one postMessage per request and one per answer, matched by a numeric id (comlink costs
 * several times more per call and is kept for the control plane, control.ts).
 */
import type { MessagePort } from 'node:worker_threads';
import type { RpcErrorObject } from '../rpc/types.js';
import { RpcError, RpcErrors, toRpcErrorObject } from '../rpc/errors.js';
import { isHandedOver } from '../rpc/json-text.js';
import { MailboxCounter } from '../shared-memory/mailbox-counters.js';

/** The threads that own channels. `transport` is any of the JSON-RPC transports (HTTP, WS, IPC). */
export type ActorName = 'chain' | 'txpool' | 'consensus' | 'p2p' | 'logindex' | 'transport' | 'reader';

/** One request of a channel: who sends it, its body, its answer. */
export interface RequestSpec<From extends ActorName = ActorName> {
  from: From;
  req: unknown;
  res: unknown;
}

/** One event of a channel: who emits it and its body (Lodestar's `EventDirection`, as a sender). */
export interface EventSpec<From extends ActorName = ActorName> {
  from: From;
  body: unknown;
}

/** The type-level declaration of a channel between two different actors `A` and `B`. */
export interface ChannelSpec<A extends ActorName = ActorName, B extends ActorName = ActorName> {
  ends: [A, B];
  requests: Record<string, RequestSpec<A | B>>;
  events: Record<string, EventSpec<A | B>>;
}

/**
 * The run-time half of a declaration: the sender of every request and event, checked by the compiler
 * to list exactly the names of the type-level declaration.
 */
export interface ChannelDeclaration<C extends ChannelSpec> {
  readonly name: string;
  readonly ends: C['ends'];
  readonly requests: { readonly [K in keyof C['requests']]: C['requests'][K]['from'] };
  readonly events: { readonly [K in keyof C['events']]: C['events'][K]['from'] };
}

export function declareChannel<C extends ChannelSpec>(declaration: ChannelDeclaration<C>): ChannelDeclaration<C> {
  return declaration;
}

type Ends<C extends ChannelSpec> = C['ends'][number];
/** The other end of channel `C` as seen from `Self`. */
export type Peer<C extends ChannelSpec, Self extends Ends<C>> = Exclude<Ends<C>, Self>;

type RequestsFrom<C extends ChannelSpec, From extends ActorName> = {
  [K in keyof C['requests'] & string]: C['requests'][K]['from'] extends From ? K : never;
}[keyof C['requests'] & string];
type EventsFrom<C extends ChannelSpec, From extends ActorName> = {
  [K in keyof C['events'] & string]: C['events'][K]['from'] extends From ? K : never;
}[keyof C['events'] & string];

export type RequestOf<C extends ChannelSpec, K extends keyof C['requests']> = C['requests'][K]['req'];
export type AnswerOf<C extends ChannelSpec, K extends keyof C['requests']> = C['requests'][K]['res'];

/** What end `Self` must answer: one handler per request the other end may send. */
export type ChannelHandlers<C extends ChannelSpec, Self extends Ends<C>> = {
  [K in RequestsFrom<C, Peer<C, Self>>]: (body: RequestOf<C, K>) => Promise<AnswerOf<C, K>> | AnswerOf<C, K>;
};

/** What end `Self` may listen to: the events the other end emits. */
export type ChannelListeners<C extends ChannelSpec, Self extends Ends<C>> = {
  [K in EventsFrom<C, Peer<C, Self>>]?: (body: C['events'][K]['body']) => void;
};

/** Thrown on the calling side when the other actor answered with an error. */
export class RemoteError extends Error {
  constructor(readonly error: RpcErrorObject) {
    super(error.message);
  }
}

type Envelope =
  | { kind: 'req'; id: number; type: string; body: unknown }
  | { kind: 'res'; id: number; ok: true; body: unknown }
  | { kind: 'res'; id: number; ok: false; error: RpcErrorObject }
  | { kind: 'event'; type: string; body: unknown };

/** What crosses the port: one envelope, or the envelopes of one turn of the event loop, in order. */
type PortMessage = Envelope | { kind: 'batch'; items: Envelope[] };

/**
 * A handler or listener as the channel end stores it. Method syntax makes its parameter bivariant, so
 * a typed handler table is stored without a cast: the declaration, checked on both ends by the
 * compiler, is what guarantees that a body of type `X` arrives where `X` was declared.
 */
type AnyHandler = { handle(body: unknown): unknown }['handle'];
type AnyListener = { hear(body: unknown): void }['hear'];

/** Where this thread counts its channel messages, when metrics are on (mailbox-counters.ts). */
let threadMailbox: MailboxCounter | undefined;

/** Counts every message of the channels this thread opens from now on into `buffer`, which only it writes. */
export function countChannelMessages(buffer: SharedArrayBuffer): void {
  threadMailbox = new MailboxCounter(buffer);
}

/**
 * End `Self` of channel `C` over a MessagePort: asks the requests `Self` sends, answers the ones the
 * other end sends, emits and hears events in the declared direction only.
 */
export class ChannelEnd<C extends ChannelSpec, Self extends Ends<C>> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: AnyListener; reject: (e: Error) => void }>();
  private handlers: Partial<Record<string, AnyHandler>> = {};
  private listeners: Partial<Record<string, AnyListener>> = {};
  private readonly mailbox = threadMailbox;
  private readonly peer: ActorName;
  /**
   * Envelopes posted in this turn of the event loop, sent as one message when the turn ends. A post
   * costs 25-30 µs (the other thread's wake-up included) where a state reader's eth_call costs ~200:
   * a reader answering a 2 ms turn of calls (ArrivalOrder) spent 11 % of its time posting them one by one.
   */
  private outbox: Envelope[] = [];

  constructor(
    private readonly declaration: ChannelDeclaration<C>,
    private readonly self: Self,
    private readonly port: MessagePort,
  ) {
    this.peer = declaration.ends[0] === self ? declaration.ends[1] : declaration.ends[0];
    port.on('message', (message: PortMessage) => {
      if (message.kind !== 'batch') this.dispatch(message);
      else for (const item of message.items) this.dispatch(item);
    });
    port.on('close', () => this.failPending('channel closed'));
  }

  request<K extends RequestsFrom<C, Self>>(type: K, body: RequestOf<C, K>): Promise<AnswerOf<C, K>> {
    const id = this.nextId++;
    return new Promise<AnswerOf<C, K>>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ kind: 'req', id, type, body });
    });
  }

  emit<K extends EventsFrom<C, Self>>(type: K, body: C['events'][K]['body']): void {
    this.post({ kind: 'event', type, body });
  }

  /** Serves the requests the other end may send; only those, whatever else `handlers` holds. */
  serve(handlers: ChannelHandlers<C, Self>): this {
    const served: Partial<Record<string, AnyHandler>> = {};
    for (const [type, sender] of Object.entries(this.declaration.requests)) {
      if (sender === this.self) continue;
      const handler = lookup(handlers, type);
      if (handler) served[type] = handler;
    }
    this.handlers = served;
    return this;
  }

  /** Listens to the events the other end emits. */
  on(listeners: ChannelListeners<C, Self>): this {
    this.listeners = { ...listeners };
    return this;
  }

  close(): void {
    this.failPending('channel closed');
    this.flush();
    this.port.close();
  }

  /** Lets the thread exit while this channel is idle. */
  unref(): this {
    this.port.unref();
    return this;
  }

  private post(message: Envelope): void {
    this.mailbox?.posted(this.peer);
    if (this.outbox.push(message) === 1) setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    const outbox = this.outbox;
    if (outbox.length === 0) return;
    this.outbox = [];
    try {
      this.port.postMessage(outbox.length === 1 ? outbox[0] : { kind: 'batch', items: outbox }, transfersOf(outbox));
    } catch {
      // One envelope the structured clone refuses (a function in a body, say) must not take the others with it.
      for (const envelope of outbox) this.postAlone(envelope);
    }
  };

  private postAlone(envelope: Envelope): void {
    try {
      this.port.postMessage(envelope, transfersOf([envelope]));
    } catch (err) {
      if (envelope.kind === 'res') {
        console.error(`[${this.declaration.name}] an answer could not be sent:`, err);
        this.port.postMessage({ kind: 'res', id: envelope.id, ok: false, error: toRpcErrorObject(err) });
      } else if (envelope.kind === 'req') {
        const waiter = this.pending.get(envelope.id);
        this.pending.delete(envelope.id);
        waiter?.reject(err instanceof Error ? err : new Error(String(err)));
      } else {
        console.error(`[${this.declaration.name}] event ${envelope.type} could not be sent:`, err);
      }
    }
  }

  private dispatch(message: Envelope): void {
    this.mailbox?.taken();
    if (message.kind === 'res') {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.body);
      else waiter.reject(new RemoteError(message.error));
    } else if (message.kind === 'req') {
      void this.answer(message);
    } else if (this.declaredFromPeer(this.declaration.events, message.type)) {
      this.listeners[message.type]?.(message.body);
    }
  }

  private declaredFromPeer(senders: Readonly<Record<string, ActorName>>, type: string): boolean {
    const sender = Object.hasOwn(senders, type) ? senders[type] : undefined;
    return sender !== undefined && sender !== this.self;
  }

  private async answer(message: { id: number; type: string; body: unknown }): Promise<void> {
    try {
      const handler = this.declaredFromPeer(this.declaration.requests, message.type) ? this.handlers[message.type] : undefined;
      if (!handler) {
        // A wiring mistake, never a client's: the reason goes back in `data` and into the log.
        const reason = `${message.type} is not served on channel ${this.declaration.name} by ${this.self}`;
        console.error(`[${this.declaration.name}] ${reason}`);
        throw new RpcError(RpcErrors.INTERNAL_ERROR, reason);
      }
      const body = await handler(message.body);
      this.post({ kind: 'res', id: message.id, ok: true, body });
    } catch (err) {
      const error = err instanceof RemoteError ? err.error : toRpcErrorObject(err);
      if (error.code === RpcErrors.INTERNAL_ERROR.code && !(err instanceof RemoteError) && !(err instanceof RpcError)) {
        // An unexpected failure inside an actor: keep the cause in the log, not in the client's answer.
        console.error(`[${this.declaration.name}] ${message.type} failed:`, err);
      }
      this.post({ kind: 'res', id: message.id, ok: false, error });
    }
  }

  private failPending(reason: string): void {
    for (const waiter of this.pending.values()) waiter.reject(new Error(reason));
    this.pending.clear();
  }
}

/**
 * The buffers the envelopes' answers hand over (a large answer's bytes, json-text.ts): moved to the
 * other thread rather than copied; they are unusable here afterwards, which no one minds, since no one
 * else holds them.
 */
function transfersOf(envelopes: readonly Envelope[]): ArrayBuffer[] {
  const transfers: ArrayBuffer[] = [];
  for (const envelope of envelopes) {
    if (envelope.kind === 'res' && envelope.ok && isHandedOver(envelope.body)) transfers.push(envelope.body.buffer as ArrayBuffer);
  }
  return transfers;
}

function lookup(table: Readonly<Partial<Record<string, AnyHandler>>>, name: string): AnyHandler | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** Opens end `self` of a declared channel on `port`. */
export function openChannel<C extends ChannelSpec, Self extends Ends<C>>(
  declaration: ChannelDeclaration<C>,
  self: Self,
  port: MessagePort,
): ChannelEnd<C, Self> {
  return new ChannelEnd(declaration, self, port);
}
