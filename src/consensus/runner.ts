/**
 * Carries out what the QBFT state machine asks for: timers on a scheduler, block work through ports,
 * messages through the network. The node runs it on real time with the chain actor behind the ports;
 * the simulation runs the very same class on a virtual clock with a fake chain.
 *
 * Every port call completes asynchronously and comes back as a new input, so the controller is never
 * re-entered while it handles an input.
 *
 * Messages from peers wait in a bounded queue (Besu's consensus event queue, `messagequeuelimit`,
 * qbft-and-p2p.md §5.5) and are handed to the controller soon after, on the scheduler: a flood that
 * arrives faster than the controller works through it is dropped instead of piling up in memory.
 * Timer expiries, block work results and new heads are the node's own, bounded, and go straight in.
 */
import type { QbftBlock } from '../shared/qbft/block.js';
import type { QbftController } from './controller.js';
import type { BuildBlockRequest, ConsensusEvent, HeightContext, ParentInfo, QbftAction, QbftInput, TimerSlot } from './core-types.js';
import type { QbftMessage } from './messages.js';

export interface Scheduler {
  now(): number;
  /** Calls `fn` at absolute time `atMs` (asynchronously, soon, if that is past); returns a cancel function. */
  at(atMs: number, fn: () => void): () => void;
}

export interface QbftPorts {
  /** Builds a block on the head with these header fields; resolves with the unsealed block. */
  buildBlock(request: BuildBlockRequest): Promise<QbftBlock>;
  /** Executes a block another validator proposed on its parent (header rules are already checked). */
  validateBlock(block: QbftBlock, height: bigint): Promise<{ valid: boolean; reason?: string }>;
  /** Stores a committed, sealed block as the new head; the chain then reports it through `onNewHead`. */
  importBlock(block: QbftBlock, round: number): Promise<void>;
  /** Sends a message this node created to every validator peer. */
  broadcast(message: QbftMessage): void;
  /** Forwards a received message unchanged to validator peers other than its origin and its author. */
  gossip(message: QbftMessage, origin: string | undefined): void;
  /** What the machine needs about the height after `head` (validators, settings, tally). */
  heightContext(head: ParentInfo): Promise<HeightContext>;
  /** A peer showed it has at least `height` blocks (a message for a later height came from it). */
  peerHeight?(origin: string, height: bigint): void;
  onEvent?(event: ConsensusEvent): void;
  onError?(what: string, err: unknown): void;
}

export interface RunnerOptions {
  /** Peer messages are dropped while the queue holds more than this many (Besu `messagequeuelimit`, 1000). */
  messageQueueLimit?: number;
}

/** Besu's default `messagequeuelimit`. */
export const DEFAULT_MESSAGE_QUEUE_LIMIT = 1000;
/** Queued messages handled per scheduler turn, so timers and I/O get a look in during a burst. */
const MESSAGES_PER_TURN = 100;

interface QueuedMessage {
  code: number;
  data: Uint8Array;
  origin: string | undefined;
}

export class QbftRunner {
  private readonly timers = new Map<TimerSlot, () => void>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** Block production switched off (miner_stop): no timers and no intake until resume(). */
  private paused = false;
  /** Counts heads so that a context computed for an older head is not applied after a newer one. */
  private headSequence = 0;
  private readonly messageQueueLimit: number;
  private messageQueue: QueuedMessage[] = [];
  private cancelDrain: (() => void) | undefined;
  private dropped = 0;
  private overflowing = false;

  constructor(
    readonly controller: QbftController,
    private readonly ports: QbftPorts,
    private readonly scheduler: Scheduler,
    options: RunnerOptions = {},
  ) {
    this.messageQueueLimit = options.messageQueueLimit ?? DEFAULT_MESSAGE_QUEUE_LIMIT;
  }

  /** A new chain head (imported by consensus, sync or anything else). */
  onNewHead(head: ParentInfo, restart = false): void {
    if (this.stopped || this.paused) return;
    const sequence = ++this.headSequence;
    this.track('preparing the next height', async () => {
      const context = await this.ports.heightContext(head);
      if (sequence === this.headSequence) this.dispatch({ kind: 'newHeight', context, restart });
    });
  }

  /**
   * An istanbul message (code 0x12–0x15) from a peer: queued, handled on a later scheduler turn.
   * Dropped while the queue holds more than `messageQueueLimit` messages (Besu's `size > limit`).
   */
  onMessage(code: number, data: Uint8Array, origin?: string): void {
    if (this.stopped || this.paused) return;
    if (this.messageQueue.length > this.messageQueueLimit) {
      this.dropped += 1;
      // One event per overflow, not one per dropped message: a flood would otherwise flood the log too.
      if (!this.overflowing) {
        this.overflowing = true;
        this.ports.onEvent?.({ type: 'messageQueueFull', limit: this.messageQueueLimit, dropped: this.dropped });
      }
      return;
    }
    this.overflowing = false;
    this.messageQueue.push({ code, data, origin });
    this.scheduleDrain();
  }

  /** Peer messages waiting for the controller. */
  get queuedMessages(): number {
    return this.messageQueue.length;
  }

  /** Peer messages dropped so far because the queue was full. */
  get droppedMessages(): number {
    return this.dropped;
  }

  private scheduleDrain(): void {
    if (this.cancelDrain) return;
    this.cancelDrain = this.scheduler.at(this.scheduler.now(), () => {
      this.cancelDrain = undefined;
      const batch = this.messageQueue.splice(0, MESSAGES_PER_TURN);
      for (const { code, data, origin } of batch) {
        this.dispatch(origin === undefined ? { kind: 'message', code, data } : { kind: 'message', code, data, origin });
      }
      if (this.messageQueue.length > 0) this.scheduleDrain();
    });
  }

  private clearMessageQueue(): void {
    this.cancelDrain?.();
    this.cancelDrain = undefined;
    this.messageQueue = [];
  }

  dispatch(input: QbftInput): void {
    if (this.stopped || this.paused) return;
    for (const action of this.controller.handle(input, this.scheduler.now())) this.perform(action);
  }

  /** Stops timers and intake, then waits for block work in progress to settle. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearMessageQueue();
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Switches production off (Besu's miner_stop on a BFT node) and waits for block work in progress. */
  async pause(): Promise<void> {
    this.paused = true;
    this.headSequence++;
    this.clearMessageQueue();
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Switches production back on, starting over at the height after `head`. */
  resume(head: ParentInfo): void {
    if (!this.paused) return;
    this.paused = false;
    this.onNewHead(head, true);
  }

  get isPaused(): boolean {
    return this.paused;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private perform(action: QbftAction): void {
    switch (action.kind) {
      case 'broadcast':
        this.ports.broadcast(action.message);
        return;
      case 'gossip':
        this.ports.gossip(action.message, action.origin);
        return;
      case 'setTimer': {
        const { timer } = action;
        this.timers.get(timer.slot)?.();
        const cancel = this.scheduler.at(action.atMs, () => {
          if (this.timers.get(timer.slot) === cancel) this.timers.delete(timer.slot);
          this.dispatch({ kind: 'timer', timer });
        });
        this.timers.set(timer.slot, cancel);
        return;
      }
      case 'cancelTimer':
        this.timers.get(action.slot)?.();
        this.timers.delete(action.slot);
        return;
      case 'buildBlock': {
        const { kind: _kind, ...request } = action;
        this.track('building a block', async () => {
          try {
            const block = await this.ports.buildBlock(request);
            this.dispatch({ kind: 'blockBuilt', request: request.request, block });
          } catch (err) {
            this.ports.onError?.(`building block ${request.height} (round ${request.round})`, err);
            this.dispatch({ kind: 'buildFailed', request: request.request, reason: errorText(err) });
          }
        });
        return;
      }
      case 'validateBlock':
        this.track('validating a proposed block', async () => {
          let outcome: { valid: boolean; reason?: string };
          try {
            outcome = await this.ports.validateBlock(action.block, action.height);
          } catch (err) {
            outcome = { valid: false, reason: errorText(err) };
          }
          this.dispatch({ kind: 'blockValidated', request: action.request, ...outcome });
        });
        return;
      case 'importBlock':
        this.track('importing a committed block', async () => {
          try {
            await this.ports.importBlock(action.block, action.round);
          } catch (err) {
            this.ports.onError?.(`importing committed block ${action.height}`, err);
            this.dispatch({ kind: 'importFailed', height: action.height, reason: errorText(err) });
          }
        });
        return;
      case 'peerHeight':
        this.ports.peerHeight?.(action.origin, action.height);
        return;
      case 'event':
        this.ports.onEvent?.(action.event);
        return;
    }
  }

  private track(what: string, work: () => Promise<void>): void {
    const promise: Promise<void> = work()
      .catch((err: unknown) => this.ports.onError?.(what, err))
      .finally(() => this.inFlight.delete(promise));
    this.inFlight.add(promise);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
