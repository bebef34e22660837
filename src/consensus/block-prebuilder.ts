/**
 * Executes pool transactions into this node's next block while they arrive, before the block timer
 * fires: a proposer that starts executing only at the timer makes every transaction wait for the
 * whole block's execution after it (for 2,000 token transfers, most of a second on two cores). At
 * the timer, the build finishes the same block: the transactions that came late and those still
 * arriving (`catchUp`), then the state root.
 *
 * Only for round 0 at a height this node proposes, with whole-second block periods, where the block's
 * time is known in advance (the parent's plus the period); a build for another time starts over. The
 * QBFT state machine does not know about it: building still happens when it asks.
 *
 * Only where this node is the sole validator, for now. Four validators on one 2-core machine
 * (`bench/qbft-network.ts`) included as many transactions per second with it (714–833 against 714–909)
 * but changed round in every run (1–4 round changes against none in three runs without): the proposer's
 * early work took CPU from the other validators while they validated and imported the previous block.
 * Validators on machines of their own were not measured.
 */
import type { BlockSelection, PoolSelection, PoolTxForBlock, PrebuildRequest } from '../shared/actors/messages.js';
import type { HeightContext } from '../shared/qbft/height-context.js';
import { bytesEqual } from '../shared/qbft/header-rules.js';
import type { Scheduler } from './runner.js';

/** How soon the pool is asked again when a catch-up round found nothing new but transactions were still being admitted. */
const CATCH_UP_POLL_MS = 5;

/** How often the pool is asked for new transactions while it had none. */
const IDLE_POLL_MS = 50;
/**
 * Candidates handed to the chain per request, ahead of the timer and in its catch-up rounds: the chain
 * holds its write lock while it executes them, and the build at the timer (like the pool's account
 * reads) waits for the request in progress.
 */
const BATCH = 256;

export interface PrebuildPorts {
  selectTransactions(req: BlockSelection): Promise<PoolSelection>;
  /** Answers how many transactions the block holds so far. */
  prebuild(req: PrebuildRequest): Promise<number>;
}

/**
 * What a session leaves for the build at the timer: that build needs from the pool only what became
 * selectable after `fromSequence`, after the `queued` ones. Selecting the whole pool again there, for
 * the chain to skip what it had run, started the build 27–40 ms after the timer in blocks of
 * 2,000–2,900 transfers (1–19 ms with only the rest), and took the pool from admission meanwhile.
 */
export interface PrebuildHandover {
  readonly parentHash: Uint8Array;
  readonly timestamp: bigint;
  /** How many transactions the chain's open block holds: the last prebuild's answer. */
  readonly executed: number;
  readonly fromSequence: number;
  readonly queued: readonly PoolTxForBlock[];
}

interface Session {
  readonly context: HeightContext;
  readonly timestamp: bigint;
  readonly untilMs: number;
  /** The pool's arrival point after the last selection: the next asks only for what came since. */
  fromSequence: number;
  /** Selected but not yet handed to the chain (more than a batch came at once). */
  queued: PoolTxForBlock[];
  /** The chain's answer to the last prebuild: how many transactions its open block holds. */
  executed: number;
  stopped: boolean;
  wake: (() => void) | undefined;
  /** Settles when the session's work has ended: false if it failed. */
  done: Promise<boolean>;
}

export class BlockPrebuilder {
  private session: Session | undefined;

  constructor(
    private readonly ports: PrebuildPorts,
    private readonly scheduler: Scheduler,
    private readonly self: Uint8Array,
    /** What to ask the pool for: the same as the build at the timer asks. */
    private readonly selection: () => BlockSelection,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * A new height: stops the work for the last one, and starts for this one when this node proposes
   * its round 0 on a whole-second period.
   */
  async startHeight(context: HeightContext): Promise<void> {
    await this.stop();
    const { settings, parent, validators } = context;
    if (settings.blockPeriodMilliseconds > 0 || settings.blockPeriodSeconds <= 0) return;
    if (validators.length !== 1 || !bytesEqual(validators[0]!, this.self)) return;
    const timestamp = parent.timestamp + BigInt(settings.blockPeriodSeconds);
    const session: Session = { context, timestamp, untilMs: Number(timestamp) * 1000, fromSequence: 0, queued: [], executed: 0, stopped: false, wake: undefined, done: Promise.resolve(true) };
    session.done = this.run(session).then(
      () => true,
      (err: unknown) => {
        this.onError(err);
        return false;
      },
    );
    this.session = session;
  }

  /**
   * Stops feeding the chain and waits for a request in progress: the build at the timer comes next,
   * with what the session leaves it. Undefined when there was none or its work failed. When the
   * chain's last answer was that its block holds nothing (it also answers 0 to a request it ignored),
   * the handover starts from the whole pool: the build still catches up (`catchUp`), as it must when
   * the timer fired before any transaction could run ahead (a block sealed late, under load).
   */
  async stop(): Promise<PrebuildHandover | undefined> {
    const session = this.session;
    if (!session) return undefined;
    this.session = undefined;
    session.stopped = true;
    session.wake?.();
    if (!(await session.done)) return undefined;
    const { context, timestamp, executed } = session;
    const fromWholePool = executed === 0;
    return { parentHash: context.parent.hash, timestamp, executed, fromSequence: fromWholePool ? 0 : session.fromSequence, queued: fromWholePool ? [] : session.queued };
  }

  /**
   * The build at the timer, before the block is sealed: executes what the session left and what
   * arrived since, then, round after round, what arrived while the last round ran (handed to the
   * chain `BATCH` at a time), until the pool has nothing new and nothing still being admitted, or the
   * build's time (`maxBuildMs`, counted from now) is spent. What is left out waits for the next block,
   * as what arrives after the seal does.
   *
   * Without the rounds, a burst that outlasted the timer left its tail to the next block, a period
   * later. Arrivals faster than execution (ERC-20 transfers on a fresh node) join the block too. An
   * earlier rule sealed the block at once then, so that the next block could run the rest ahead of its
   * timer; but the rest was then included only at that timer, a period later, where going on includes
   * a finite burst as soon as it has run (2,000 ERC-20 transfers with the timer 0.05 or 0.15 s into
   * the burst: all included 1.02–1.08 s after the first send against 1.17–1.26 s, one block instead of
   * two; a 10,000-transfer burst 4.77–4.80 s against 4.90–5.10; see CHANGELOG).
   *
   * Answers how many transactions the block holds and the rounds run, or undefined when the chain did
   * not take a round into the block the session ran transactions into.
   */
  async catchUp(handover: PrebuildHandover, maxBuildMs: number): Promise<{ executed: number; rounds: number } | undefined> {
    const until = this.scheduler.now() + maxBuildMs;
    let fromSequence = handover.fromSequence;
    let admitting = 0;
    const arrivals = async (): Promise<PoolTxForBlock[]> => {
      const selected = await this.ports.selectTransactions({ ...this.selection(), fromSequence });
      fromSequence = selected.nextSequence;
      admitting = selected.admitting;
      return selected.transactions;
    };
    let round = [...handover.queued, ...(await arrivals())];
    let executed = handover.executed;
    let rounds = 0;
    let roundStarted = false;
    for (;;) {
      const left = until - this.scheduler.now();
      if (left <= 0) break;
      if (round.length === 0) {
        // Admission comes in decode batches: a pause between two is no end of the arrivals.
        if (admitting === 0) break;
        await this.delay(Math.min(CATCH_UP_POLL_MS, left));
        round = await arrivals();
        continue;
      }
      if (!roundStarted) rounds += 1;
      roundStarted = true;
      const holds = await this.prebuild(handover.parentHash, handover.timestamp, round.splice(0, BATCH), left);
      // Fewer than before, or nothing at all of a first round: the chain ignored the request or no
      // longer holds the block (the build then starts again from the whole pool).
      if (holds < executed || holds === 0) return undefined;
      executed = holds;
      if (round.length === 0) {
        round = await arrivals();
        roundStarted = false;
      }
    }
    return { executed, rounds };
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => this.scheduler.at(this.scheduler.now() + ms, resolve));
  }

  private async run(session: Session): Promise<void> {
    const { context } = session;
    while (!session.stopped && this.scheduler.now() < session.untilMs) {
      if (session.queued.length === 0) {
        const selected = await this.ports.selectTransactions({ ...this.selection(), fromSequence: session.fromSequence });
        session.fromSequence = selected.nextSequence;
        session.queued = selected.transactions;
      }
      if (session.stopped) return;
      if (session.queued.length === 0) {
        await this.sleep(session, IDLE_POLL_MS);
        continue;
      }
      const batch = session.queued.splice(0, BATCH);
      session.executed = await this.prebuild(context.parent.hash, session.timestamp, batch);
    }
  }

  /** Hands `transactions` to the chain for this node's block on `parentHash` at `timestamp`; answers how many the block holds. */
  private prebuild(parentHash: Uint8Array, timestamp: bigint, transactions: PoolTxForBlock[], maxBuildMs?: number): Promise<number> {
    const request: PrebuildRequest = { parentHash, timestamp, coinbase: this.self, maxTransactions: this.selection().maxCount, transactions };
    if (maxBuildMs !== undefined) request.maxBuildMs = maxBuildMs;
    return this.ports.prebuild(request);
  }

  private sleep(session: Session, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.scheduler.at(Math.min(this.scheduler.now() + ms, session.untilMs), () => {
        session.wake = undefined;
        resolve();
      });
      session.wake = () => {
        cancel();
        session.wake = undefined;
        resolve();
      };
    });
  }
}
