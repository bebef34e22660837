/**
 * The inputs and outputs of the QBFT state machine (controller.ts).
 *
 * The machine is a pure function of what it is told: chain heads, messages, timer expiries and the
 * results of the block work it asked for, each stamped with the local time. It answers with actions
 * — messages to send, timers to set, blocks to build, validate or import — that a driver carries out:
 * the node with the chain actor and real timers, the simulation with a fake chain, a simulated
 * network and a virtual clock.
 */
import type { QbftBlock } from '../shared/qbft/block.js';
import type { QbftMessage } from './messages.js';
import type { HeightContext } from '../shared/qbft/height-context.js';

export type { HeightContext, ParentInfo } from '../shared/qbft/height-context.js';

export type TimerSlot = 'block' | 'round';

export type TimerId = { slot: 'block'; height: bigint } | { slot: 'round'; height: bigint; round: number };

export type QbftInput =
  /** A new chain head was imported (by consensus or otherwise): work on the height after it. */
  /** `restart`: start the height over even if it is the current one (production switched back on). */
  | { kind: 'newHeight'; context: HeightContext; restart?: boolean }
  /** An istanbul message from a peer; `origin` names the peer for gossip and sync. */
  | { kind: 'message'; code: number; data: Uint8Array; origin?: string }
  | { kind: 'timer'; timer: TimerId }
  | { kind: 'blockBuilt'; request: number; block: QbftBlock }
  | { kind: 'buildFailed'; request: number; reason: string }
  | { kind: 'blockValidated'; request: number; valid: boolean; reason?: string }
  | { kind: 'importFailed'; height: bigint; reason: string };

export interface BuildBlockRequest {
  request: number;
  height: bigint;
  round: number;
  parentHash: Uint8Array;
  timestamp: bigint;
  coinbase: Uint8Array;
  /** Unsealed extraData: vanity, validators, this node's vote, round, no seals. */
  extraData: Uint8Array;
}

export type QbftAction =
  /** A message this node created: send it to every validator peer. */
  | { kind: 'broadcast'; message: QbftMessage }
  /** A received message from a validator at the current height: forward it unchanged (§4.7). */
  | { kind: 'gossip'; message: QbftMessage; origin?: string }
  /** Arm the timer of a slot for an absolute time (fire at once if past); replaces the slot's live timer. */
  | { kind: 'setTimer'; timer: TimerId; atMs: number }
  | { kind: 'cancelTimer'; slot: TimerSlot }
  | ({ kind: 'buildBlock' } & BuildBlockRequest)
  /** Execute a block another validator proposed; answer with `blockValidated`. */
  | { kind: 'validateBlock'; request: number; height: bigint; block: QbftBlock }
  /** A quorum committed this block: store it, sealed, as the new head. */
  | { kind: 'importBlock'; height: bigint; round: number; block: QbftBlock }
  /** A peer is at least at this chain height (a future-height message came from it). */
  | { kind: 'peerHeight'; origin: string; height: bigint }
  | { kind: 'event'; event: ConsensusEvent };

export type RoundStartReason = 'blockTimer' | 'proposal' | 'roundTimer' | 'roundChangeQuorum' | 'futureRoundChanges';

/** What happened, for logs, metrics and tests. */
export type ConsensusEvent =
  | { type: 'roundStarted'; height: bigint; round: number; atMs: number; reason: RoundStartReason; timeoutMs: number }
  | { type: 'proposed'; height: bigint; round: number; hash: Uint8Array; reproposed: boolean; transactions: number }
  | { type: 'emptyBlockSkipped'; height: bigint; nextAttemptMs: number }
  | { type: 'committed'; height: bigint; round: number; hash: Uint8Array; seals: number }
  | { type: 'messageRejected'; code: number; reason: string; author?: Uint8Array }
  /** Peer messages are being dropped: the runner's queue holds more than `limit` (`dropped` so far in total). */
  | { type: 'messageQueueFull'; limit: number; dropped: number };
