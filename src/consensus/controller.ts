/**
 * The QBFT protocol as a deterministic state machine (qbft-and-p2p.md §4.6, §5), modelled on Besu's
 * QbftController / QbftBlockHeightManager / QbftRound / RoundChangeManager, in their default mode or
 * with early round change (`ControllerConfig.earlyRoundChange`).
 *
 * `QbftController.handle(input, nowMs)` is the only entry point; it never does I/O and never keeps
 * time itself, so the same inputs always give the same actions (see core-types.ts).
 *
 * One height at a time: a new chain head replaces the height manager. Within a height, rounds move on
 * by the round timer (timeout doubling each round), by a quorum of round changes for a higher round
 * (with early round change: by round changes from f+1 validators for higher rounds), or by a valid
 * proposal for a higher round. Blocks carried by proposals and by round changes are executed (the
 * driver's `validateBlock`) before the message counts. Messages for later heights wait in a bounded
 * buffer and are replayed when their height starts.
 */
// noble's keccak: a few messages per block (messages.ts says why not hash-wasm's).
import { keccak_256 as keccak256 } from '@noble/hashes/sha3.js';

import type { QbftBlock } from '../shared/qbft/block.js';
import type {
  ConsensusEvent,
  HeightContext,
  QbftAction,
  QbftInput,
  RoundStartReason,
  TimerId,
} from './core-types.js';
import { encodeExtraData } from '../shared/qbft/extra-data.js';
import { RecentKeys } from '../shared/util/recent-keys.js';
import { bytesEqual, checkHeaderRules, includesAddress } from '../shared/qbft/header-rules.js';
import type { HeaderRuleContext } from '../shared/qbft/header-rules.js';
import {
  MessageCode,
  createCommit,
  createPrepare,
  createProposal,
  createRoundChange,
  decodeMessage,
  isMessageCode,
  messageAuthor,
  messageHeight,
  QbftMessageError,
} from './messages.js';
import type {
  CommitMessage,
  CommitPayload,
  PreparedCertificate,
  PreparePayload,
  ProposalMessage,
  QbftMessage,
  RoundChangeMessage,
  RoundChangePayload,
  Signed,
  Signer,
} from './messages.js';
import { addressOf, faultTolerance, proposerFor, quorum, recoverSealSigner, signHash } from '../shared/qbft/seal.js';
import { addressHex } from '../shared/qbft/validators.js';
import { PendingVotes } from '../shared/qbft/votes.js';

export interface ControllerConfig {
  nodeKey: Uint8Array;
  /** 32 bytes written at the front of every block this node creates (`--miner-extra-data`). */
  vanity: Uint8Array;
  /** Round-0 timeout base; round r times out after requestTimeoutSeconds × 2^r. */
  requestTimeoutSeconds: number;
  /** Received-message de-duplication window (Besu `duplicatemessagelimit`, 100). */
  duplicateMessageLimit: number;
  /** Future-height buffer cap (Besu `futuremessageslimit`, 1000; 0 disables buffering). */
  futureMessagesLimit: number;
  /** How many heights ahead are buffered (Besu `futuremessagesmaxdistance`, 10). */
  futureMessagesMaxDistance: number;
  /**
   * Besu `--Xqbft-enable-early-round-change` (default off): round changes from f+1 validators for
   * rounds above the current one move this node to the smallest of those rounds at once (§5.4).
   */
  earlyRoundChange?: boolean;
}

/** Besu keeps prepares/commits of future rounds without a bound; this one keeps a peer from flooding memory. */
const FUTURE_ROUND_MESSAGES_LIMIT = 1000;

/** What height managers need from their controller. */
interface Environment {
  readonly config: ControllerConfig;
  readonly signer: Signer;
  readonly votes: PendingVotes;
  now(): number;
  emit(action: QbftAction): void;
  nextRequest(): number;
}

interface BufferedMessage {
  message: QbftMessage;
  origin: string | undefined;
}

/** Messages for heights after the current one (§5.5). */
class FutureMessages {
  private readonly buckets = new Map<bigint, BufferedMessage[]>();
  private total = 0;

  constructor(private readonly limit: number) {}

  add(height: bigint, item: BufferedMessage): void {
    if (this.limit <= 0) return;
    const bucket = this.buckets.get(height) ?? [];
    bucket.push(item);
    this.buckets.set(height, bucket);
    this.total += 1;
    while (this.total > this.limit) {
      if (this.buckets.size > 1) {
        const highest = [...this.buckets.keys()].reduce((a, b) => (a > b ? a : b));
        this.total -= this.buckets.get(highest)!.length;
        this.buckets.delete(highest);
      } else {
        const [only] = this.buckets.values();
        only!.shift();
        this.total -= 1;
      }
    }
  }

  /** The messages for `height`; every bucket at or below it is dropped. */
  take(height: bigint): BufferedMessage[] {
    const bucket = this.buckets.get(height) ?? [];
    for (const [h, messages] of this.buckets) {
      if (h <= height) {
        this.total -= messages.length;
        this.buckets.delete(h);
      }
    }
    return bucket;
  }

  get size(): number {
    return this.total;
  }
}

export class QbftController {
  readonly signer: Signer;
  /** This node's pending validator votes (qbft_proposeValidatorVote...). */
  readonly votes = new PendingVotes();
  private manager: HeightManager | undefined;
  /** Number of the chain head the current height builds on; -1 before the first head. */
  private headNumber = -1n;
  private readonly seen: RecentKeys;
  private readonly future: FutureMessages;
  private actions: QbftAction[] = [];
  private nowMs = 0;
  private requestCounter = 0;
  private readonly env: Environment;

  constructor(readonly config: ControllerConfig) {
    this.signer = { key: config.nodeKey, address: addressOf(config.nodeKey) };
    this.seen = new RecentKeys(Math.max(1, config.duplicateMessageLimit));
    this.future = new FutureMessages(config.futureMessagesLimit);
    this.env = {
      config,
      signer: this.signer,
      votes: this.votes,
      now: () => this.nowMs,
      emit: (action) => this.actions.push(action),
      nextRequest: () => ++this.requestCounter,
    };
  }

  get address(): Uint8Array {
    return this.signer.address;
  }

  /** The height being worked on, if any. */
  get height(): bigint | undefined {
    return this.manager?.context.height;
  }

  get round(): number | undefined {
    return this.manager?.roundNumber;
  }

  get context(): HeightContext | undefined {
    return this.manager?.context;
  }

  /** Whether this node is among validators(h) of the current height. */
  get isValidator(): boolean {
    return this.manager?.isValidator ?? false;
  }

  get bufferedFutureMessages(): number {
    return this.future.size;
  }

  handle(input: QbftInput, nowMs: number): QbftAction[] {
    this.nowMs = nowMs;
    this.actions = [];
    switch (input.kind) {
      case 'newHeight':
        this.startHeight(input.context, input.restart === true);
        break;
      case 'message':
        this.receive(input.code, input.data, input.origin);
        break;
      case 'timer':
        if (this.manager && input.timer.height === this.manager.context.height) this.manager.onTimer(input.timer);
        break;
      case 'blockBuilt':
        this.manager?.onBlockBuilt(input.request, input.block);
        break;
      case 'buildFailed':
        this.manager?.onBuildFailed(input.request);
        break;
      case 'blockValidated':
        this.manager?.onBlockValidated(input.request, input.valid, input.reason);
        break;
      case 'importFailed':
        if (this.manager && input.height === this.manager.context.height) this.manager.onImportFailed();
        break;
    }
    return this.actions;
  }

  private event(event: ConsensusEvent): void {
    this.actions.push({ kind: 'event', event });
  }

  private reject(code: number, reason: string, author?: Uint8Array): void {
    this.event(author ? { type: 'messageRejected', code, reason, author } : { type: 'messageRejected', code, reason });
  }

  private startHeight(context: HeightContext, restart: boolean): void {
    if (this.manager && (restart ? context.height < this.manager.context.height : context.height <= this.manager.context.height)) return;
    if (this.manager) {
      this.actions.push({ kind: 'cancelTimer', slot: 'block' }, { kind: 'cancelTimer', slot: 'round' });
    }
    this.headNumber = context.height - 1n;
    this.manager = new HeightManager(context, this.env);
    this.manager.start();
    for (const { message, origin } of this.future.take(context.height)) this.route(message, origin);
  }

  private receive(code: number, data: Uint8Array, origin: string | undefined): void {
    if (!isMessageCode(code)) return this.reject(code, 'not a QBFT message code');
    if (!this.seen.add(Buffer.from(keccak256(data)).toString('hex'))) return;
    let message: QbftMessage;
    try {
      message = decodeMessage(code, data);
    } catch (err) {
      if (err instanceof QbftMessageError) return this.reject(code, err.message);
      throw err;
    }
    this.route(message, origin);
  }

  /** Steps 3–5 of the receive pipeline (§4.6), then the height manager. */
  private route(message: QbftMessage, origin: string | undefined): void {
    const height = messageHeight(message);
    if (height <= this.headNumber) return this.reject(message.code, 'message for a past height');
    if (!this.manager || height > this.headNumber + 1n) {
      if (height <= this.headNumber + 1n + BigInt(this.config.futureMessagesMaxDistance)) this.future.add(height, { message, origin });
      if (origin !== undefined) this.actions.push({ kind: 'peerHeight', origin, height: height - 1n });
      return;
    }
    const manager = this.manager;
    if (!manager.isValidator) return;
    if (!includesAddress(manager.context.validators, messageAuthor(message))) {
      return this.reject(message.code, 'author is not a validator', messageAuthor(message));
    }
    this.actions.push(origin === undefined ? { kind: 'gossip', message } : { kind: 'gossip', message, origin });
    manager.handleMessage(message);
  }
}

// ---------------------------------------------------------------------------------------------
// One round
// ---------------------------------------------------------------------------------------------

class RoundState {
  block: QbftBlock | undefined;
  /** Prepares by author, in arrival order (first one per author wins). */
  readonly prepares = new Map<string, Signed<PreparePayload>>();
  readonly commits = new Map<string, Signed<CommitPayload>>();
  prepared = false;
  committed = false;
  /** This node's commit, created when it accepts the proposal and sent once prepared. */
  ownCommit: CommitMessage | undefined;

  constructor(readonly round: number) {}

  get futureMessageCount(): number {
    return this.prepares.size + this.commits.size;
  }
}

type Age = 'prior' | 'current' | 'future';

interface PendingBuild {
  request: number;
  round: number;
  justification: readonly Signed<RoundChangePayload>[];
}

/** A message whose block is being executed; it is taken up again once the verdict is in. */
type AwaitingExecution = ProposalMessage | RoundChangeMessage;

interface PendingExecution {
  /** On-chain hash of the block (round and seals excluded: execution does not depend on them). */
  blockKey: string;
  waiting: AwaitingExecution[];
}

interface RoundChangeCollection {
  byAuthor: Map<string, RoundChangeMessage>;
  /** Set once a quorum was used: later round changes for this round are ignored. */
  actioned: boolean;
}

// ---------------------------------------------------------------------------------------------
// One height
// ---------------------------------------------------------------------------------------------

class HeightManager {
  readonly isValidator: boolean;
  private readonly quorum: number;
  /** f+1: round changes from this many validators for higher rounds trigger an early round change. */
  private readonly earlyRoundChangeThreshold: number;
  private currentRound: RoundState | undefined;
  private latestPrepared: PreparedCertificate | undefined;
  private readonly roundChanges = new Map<number, RoundChangeCollection>();
  private readonly futureRounds = new Map<number, RoundState>();
  private futureRoundMessages = 0;
  private pendingBuild: PendingBuild | undefined;
  /** Block executions asked of the driver, by request. */
  private readonly pendingExecutions = new Map<number, PendingExecution>();
  /** Request of the execution in flight for a block, by block key. */
  private readonly executionByBlock = new Map<string, number>();
  /**
   * Blocks known to execute on this height's parent (accepted proposals, own blocks, blocks found
   * valid). Only good verdicts are kept: a failure may have been the driver's, not the block's.
   */
  private readonly executedBlocks = new Set<string>();
  /** A quorum committed a block here and it went to import. */
  private committed = false;

  constructor(
    readonly context: HeightContext,
    private readonly env: Environment,
  ) {
    this.isValidator = includesAddress(context.validators, env.signer.address);
    this.quorum = quorum(context.validators.length);
    this.earlyRoundChangeThreshold = faultTolerance(context.validators.length) + 1;
  }

  get roundNumber(): number | undefined {
    return this.currentRound?.round;
  }

  private get height(): bigint {
    return this.context.height;
  }

  private event(event: ConsensusEvent): void {
    this.env.emit({ kind: 'event', event });
  }

  private reject(message: QbftMessage, reason: string): void {
    this.event({ type: 'messageRejected', code: message.code, reason, author: messageAuthor(message) });
  }

  private proposer(round: number): Uint8Array {
    return proposerFor(this.context.validators, this.context.parent.coinbase, round);
  }

  private isLocalProposer(round: number): boolean {
    return bytesEqual(this.proposer(round), this.env.signer.address);
  }

  private age(round: number): Age {
    const current = this.currentRound?.round ?? -1;
    return round < current ? 'prior' : round === current ? 'current' : 'future';
  }

  private period(): number {
    return this.context.settings.blockPeriodSeconds;
  }

  /** Arms the block timer (§5.1). Non-validators do nothing at this height. */
  start(): void {
    if (!this.isValidator) return;
    const { settings, parent } = this.context;
    const atMs =
      settings.blockPeriodMilliseconds > 0
        ? this.env.now() + settings.blockPeriodMilliseconds
        : Number(parent.timestamp + BigInt(this.period())) * 1000;
    this.env.emit({ kind: 'setTimer', timer: { slot: 'block', height: this.height }, atMs });
  }

  // --- timers -------------------------------------------------------------------------------

  onTimer(timer: TimerId): void {
    if (!this.isValidator) return;
    if (timer.slot === 'block') this.onBlockTimer();
    else this.onRoundTimer(timer.round);
  }

  private onBlockTimer(): void {
    if (this.committed) return;
    if (!this.currentRound) this.startNewRound(0, 'blockTimer');
    else if (this.currentRound.round !== 0) return;
    const round = this.currentRound!;
    if (round.block || this.pendingBuild || !this.isLocalProposer(0)) return;
    // Round 0 takes the current time rounded half-up, never earlier than the period allows.
    this.requestBuild(0, BigInt(Math.round(this.env.now() / 1000)), []);
  }

  private onRoundTimer(round: number): void {
    if (this.committed || this.currentRound?.round !== round) return;
    this.doRoundChange(round + 1);
  }

  // --- building and proposing ---------------------------------------------------------------

  private requestBuild(round: number, timestamp: bigint, justification: readonly Signed<RoundChangePayload>[]): void {
    const { settings, parent, validators, tally } = this.context;
    const periodMs = settings.blockPeriodMilliseconds;
    const earliest = periodMs > 0 && periodMs < 1000 ? parent.timestamp : parent.timestamp + BigInt(settings.blockPeriodSeconds);
    const blockHeaderMode = settings.validatorSelectionMode === 'blockheader';
    const vote = blockHeaderMode && tally ? this.env.votes.selectVote(this.env.signer.address, tally) : undefined;
    const extraData = encodeExtraData({
      vanity: this.env.config.vanity,
      validators: blockHeaderMode ? validators : [],
      ...(vote ? { vote } : {}),
      round,
      seals: [],
    });
    const request = this.env.nextRequest();
    this.pendingBuild = { request, round, justification };
    this.env.emit({
      kind: 'buildBlock',
      request,
      height: this.height,
      round,
      parentHash: parent.hash,
      timestamp: timestamp > earliest ? timestamp : earliest,
      coinbase: this.env.signer.address,
      extraData,
    });
  }

  onBuildFailed(request: number): void {
    if (this.pendingBuild?.request === request) this.pendingBuild = undefined;
  }

  onBlockBuilt(request: number, block: QbftBlock): void {
    const pending = this.pendingBuild;
    if (!pending || pending.request !== request) return;
    this.pendingBuild = undefined;
    const round = this.currentRound;
    if (this.committed || !round || round.round !== pending.round || round.block) return;
    if (block.number !== this.height || block.round !== pending.round || !bytesEqual(block.parentHash, this.context.parent.hash)) return;
    if (pending.round === 0 && block.transactionCount === 0 && !this.emptyBlockPeriodExpired()) {
      // Besu does not propose an empty block before xemptyblockperiodseconds: it drops the round and
      // tries again later (non-proposers meanwhile run round 0 and may change round).
      const { parent, settings } = this.context;
      const atMs = Math.min(
        Number(parent.timestamp + BigInt(settings.emptyBlockPeriodSeconds)) * 1000,
        this.env.now() + this.period() * 1000,
      );
      this.env.emit({ kind: 'cancelTimer', slot: 'round' });
      this.currentRound = undefined;
      this.env.emit({ kind: 'setTimer', timer: { slot: 'block', height: this.height }, atMs });
      this.event({ type: 'emptyBlockSkipped', height: this.height, nextAttemptMs: atMs });
      return;
    }
    this.propose(round, block, pending.justification, [], false);
  }

  /**
   * Besu tests `now > parent + period`; a timer re-armed for exactly that instant fires again a moment
   * later and then proposes, so `>=` gives the same result without spinning at one instant.
   */
  private emptyBlockPeriodExpired(): boolean {
    const { parent, settings } = this.context;
    return this.env.now() >= Number(parent.timestamp + BigInt(settings.emptyBlockPeriodSeconds)) * 1000;
  }

  private propose(
    round: RoundState,
    block: QbftBlock,
    roundChanges: readonly Signed<RoundChangePayload>[],
    prepares: readonly Signed<PreparePayload>[],
    reproposed: boolean,
  ): void {
    const proposal = createProposal(this.env.signer, this.height, round.round, block, roundChanges, prepares);
    this.env.emit({ kind: 'broadcast', message: proposal });
    this.event({
      type: 'proposed',
      height: this.height,
      round: round.round,
      hash: block.hash(),
      reproposed,
      transactions: block.transactionCount,
    });
    this.acceptProposal(round, block);
  }

  // --- messages -----------------------------------------------------------------------------

  handleMessage(message: QbftMessage): void {
    // Once a block is committed here, only the new chain head (or a failed import) matters.
    if (this.committed) return;
    switch (message.code) {
      case MessageCode.PROPOSAL:
        return this.handleProposal(message);
      case MessageCode.PREPARE:
        return this.handleRoundMessage(message, message.signed, (round, signed) => this.addPrepare(round, signed));
      case MessageCode.COMMIT:
        return this.handleRoundMessage(message, message.signed, (round, signed) => this.addCommit(round, signed));
      case MessageCode.ROUND_CHANGE:
        return this.handleRoundChange(message);
    }
  }

  private handleRoundMessage<P extends PreparePayload>(
    message: QbftMessage,
    signed: Signed<P>,
    addToCurrent: (round: RoundState, signed: Signed<P>) => void,
  ): void {
    const round = signed.payload.round;
    const age = this.age(round);
    if (age === 'prior') return this.reject(message, 'message for a prior round');
    if (age === 'current') return addToCurrent(this.currentRound!, signed);
    // Future round: kept until that round starts, checked against its proposal then.
    if (this.futureRoundMessages >= FUTURE_ROUND_MESSAGES_LIMIT) return this.reject(message, 'future-round buffer full');
    let state = this.futureRounds.get(round);
    if (!state) {
      state = new RoundState(round);
      this.futureRounds.set(round, state);
    }
    const store = (message.code === MessageCode.PREPARE ? state.prepares : state.commits) as Map<string, Signed<P>>;
    const author = addressHex(signed.author);
    if (!store.has(author)) {
      store.set(author, signed);
      this.futureRoundMessages += 1;
    }
  }

  private validPrepare(prepare: Signed<PreparePayload>, round: number, digest: Uint8Array): boolean {
    const p = prepare.payload;
    return (
      p.height === this.height &&
      p.round === round &&
      bytesEqual(p.digest, digest) &&
      includesAddress(this.context.validators, prepare.author)
    );
  }

  private validCommit(commit: Signed<CommitPayload>, round: number, digest: Uint8Array): boolean {
    if (!this.validPrepare(commit, round, digest)) return false;
    try {
      return bytesEqual(recoverSealSigner(digest, commit.payload.commitSeal), commit.author);
    } catch {
      return false;
    }
  }

  private addPrepare(round: RoundState, prepare: Signed<PreparePayload>): void {
    const author = addressHex(prepare.author);
    if (round.prepares.has(author)) return;
    if (round.block && !this.validPrepare(prepare, round.round, round.block.digest())) {
      return this.event({ type: 'messageRejected', code: MessageCode.PREPARE, reason: 'prepare does not match the proposal', author: prepare.author });
    }
    round.prepares.set(author, prepare);
    this.updatePrepared(round);
  }

  private addCommit(round: RoundState, commit: Signed<CommitPayload>): void {
    const author = addressHex(commit.author);
    if (round.commits.has(author)) return;
    if (round.block && !this.validCommit(commit, round.round, round.block.digest())) {
      return this.event({ type: 'messageRejected', code: MessageCode.COMMIT, reason: 'commit does not match the proposal or its seal', author: commit.author });
    }
    round.commits.set(author, commit);
    this.updateCommitted(round);
  }

  /** Once a quorum of prepares matches the proposal, send this node's commit. */
  private updatePrepared(round: RoundState): void {
    const wasPrepared = round.prepared;
    round.prepared = round.block !== undefined && round.prepares.size >= this.quorum;
    if (!wasPrepared && round.prepared && round.ownCommit) this.env.emit({ kind: 'broadcast', message: round.ownCommit });
  }

  /** Once a quorum of commits matches the proposal, seal and import the block. */
  private updateCommitted(round: RoundState): void {
    const wasCommitted = round.committed;
    round.committed = round.block !== undefined && round.commits.size >= this.quorum;
    if (wasCommitted || !round.committed || this.committed) return;
    this.committed = true;
    const seals = [...round.commits.values()].map((c) => c.payload.commitSeal);
    const sealed = round.block!.withSeals(seals);
    this.env.emit({ kind: 'importBlock', height: this.height, round: round.round, block: sealed });
    this.event({ type: 'committed', height: this.height, round: round.round, hash: sealed.hash(), seals: seals.length });
  }

  onImportFailed(): void {
    // Let the round timer move things on again.
    this.committed = false;
  }

  /** Besu's updateStateWithProposedBlock followed by sendPrepare. */
  private acceptProposal(round: RoundState, block: QbftBlock): void {
    if (round.block) return;
    round.block = block;
    this.executedBlocks.add(blockKey(block));
    const digest = block.digest();
    for (const [author, prepare] of round.prepares) if (!this.validPrepare(prepare, round.round, digest)) round.prepares.delete(author);
    for (const [author, commit] of round.commits) if (!this.validCommit(commit, round.round, digest)) round.commits.delete(author);
    // The commit seal signs the block hash at this round; the proposal's block carries this round.
    round.ownCommit = createCommit(this.env.signer, this.height, round.round, digest, signHash(digest, this.env.signer.key));
    this.updatePrepared(round);
    const own = addressHex(this.env.signer.address);
    if (!round.commits.has(own)) round.commits.set(own, round.ownCommit.signed);
    this.updateCommitted(round);
    // The proposer prepares its own proposal too (QBFT).
    const prepare = createPrepare(this.env.signer, { height: this.height, round: round.round, digest });
    this.addPrepare(round, prepare.signed);
    this.env.emit({ kind: 'broadcast', message: prepare });
  }

  // --- proposals ----------------------------------------------------------------------------

  private ruleContext(): HeaderRuleContext {
    const { parent, validators, settings } = this.context;
    return {
      parent,
      validators,
      mode: settings.validatorSelectionMode,
      blockPeriodSeconds: settings.blockPeriodSeconds,
      blockPeriodMilliseconds: settings.blockPeriodMilliseconds,
      nowMs: this.env.now(),
      ...(this.context.londonBlock === undefined ? {} : { londonBlock: this.context.londonBlock }),
    };
  }

  private handleProposal(message: ProposalMessage): void {
    const { round, block } = message.signed.payload;
    if (this.age(round) === 'prior') return this.reject(message, 'proposal for a prior round');
    const reason = this.checkProposal(message);
    if (reason) return this.reject(message, reason);
    const target = round === this.currentRound?.round ? this.currentRound : this.futureRounds.get(round);
    if (target?.block) return this.reject(message, 'a proposal for this round was already accepted');
    for (const pending of this.pendingExecutions.values()) {
      for (const waiting of pending.waiting) {
        // The same proposal, re-sent: it is already waiting for this block's execution.
        if (waiting.code === MessageCode.PROPOSAL && waiting.signed.payload.round === round && bytesEqual(waiting.signed.payload.block.digest(), block.digest())) return;
      }
    }
    this.executeThen(message, block);
  }

  /**
   * Has the driver execute `block` on the parent (Besu's validateAndProcessBlock, not stored), then
   * takes `message` up again. A block already known to execute is not executed again, and one
   * execution serves every message carrying the same block.
   */
  private executeThen(message: AwaitingExecution, block: QbftBlock): void {
    const key = blockKey(block);
    if (this.executedBlocks.has(key)) return this.afterExecution(message, true);
    const inFlight = this.executionByBlock.get(key);
    if (inFlight !== undefined) {
      this.pendingExecutions.get(inFlight)!.waiting.push(message);
      return;
    }
    const request = this.env.nextRequest();
    this.pendingExecutions.set(request, { blockKey: key, waiting: [message] });
    this.executionByBlock.set(key, request);
    this.env.emit({ kind: 'validateBlock', request, height: this.height, block });
  }

  onBlockValidated(request: number, valid: boolean, reason?: string): void {
    const pending = this.pendingExecutions.get(request);
    if (!pending) return;
    this.pendingExecutions.delete(request);
    this.executionByBlock.delete(pending.blockKey);
    if (valid) this.executedBlocks.add(pending.blockKey);
    for (const message of pending.waiting) this.afterExecution(message, valid, reason);
  }

  private afterExecution(message: AwaitingExecution, valid: boolean, reason?: string): void {
    if (this.committed) return;
    if (message.code === MessageCode.ROUND_CHANGE) {
      if (!valid) return this.reject(message, `prepared block is invalid${reason ? `: ${reason}` : ''}`);
      return this.countRoundChange(message);
    }
    if (!valid) return this.reject(message, `proposed block is invalid${reason ? `: ${reason}` : ''}`);
    const { round, block } = message.signed.payload;
    const age = this.age(round);
    if (age === 'prior') return this.reject(message, 'proposal for a prior round');
    // A valid proposal for a later round moves this node to that round at once.
    if (age === 'future') this.startNewRound(round, 'proposal');
    const current = this.currentRound!;
    if (current.block) return this.reject(message, 'a proposal for this round was already accepted');
    this.acceptProposal(current, block);
  }

  /** Every proposal check that does not execute the block (§4.6 table). */
  private checkProposal(message: ProposalMessage): string | undefined {
    const { height, round, block } = message.signed.payload;
    const author = message.signed.author;
    if (round < 0) return 'negative round';
    if (height !== this.height) return 'proposal for another height';
    if (!bytesEqual(author, this.proposer(round))) return 'author is not the proposer of the round';
    if (block.number !== this.height) return 'proposed block is not at this height';
    // The commit seals will sign the block at this round, so the block must carry it.
    if (block.round !== round) return 'proposed block carries another round';
    const headerProblem = checkHeaderRules(block, this.ruleContext(), false);
    if (headerProblem) return `proposed block breaks a header rule: ${headerProblem}`;
    if (round === 0) {
      if (message.roundChanges.length > 0 || message.prepares.length > 0) return 'a round-0 proposal carries no justification';
      if (!bytesEqual(block.coinbase, author)) return 'coinbase of a new block is not the proposer';
      return undefined;
    }
    return this.checkProposalJustification(message);
  }

  private checkProposalJustification(message: ProposalMessage): string | undefined {
    const { round, block } = message.signed.payload;
    const roundChanges = message.roundChanges;
    if (!distinctAuthors(roundChanges)) return 'round changes from the same validator twice';
    if (roundChanges.length < this.quorum) return 'fewer round changes than a quorum';
    let latest: { preparedRound: number; preparedBlockHash: Uint8Array } | undefined;
    const hashByPreparedRound = new Map<number, Uint8Array>();
    for (const rc of roundChanges) {
      const problem = this.checkRoundChangePayload(rc);
      if (problem) return `justification: ${problem}`;
      if (rc.payload.round !== round) return 'justification: round change for another round';
      const prepared = rc.payload.prepared;
      if (!prepared) continue;
      const seen = hashByPreparedRound.get(prepared.preparedRound);
      if (seen && !bytesEqual(seen, prepared.preparedBlockHash)) return 'justification: two blocks prepared in one round';
      hashByPreparedRound.set(prepared.preparedRound, prepared.preparedBlockHash);
      if (!latest || prepared.preparedRound > latest.preparedRound) latest = prepared;
    }
    if (!latest) {
      if (message.prepares.length > 0) return 'prepares without a prepared round change';
      if (!bytesEqual(block.coinbase, message.signed.author)) return 'coinbase of a new block is not the proposer';
      return undefined;
    }
    // The re-proposed block, put back at its prepared round, must be the block that was prepared.
    if (!bytesEqual(block.digestAtRound(latest.preparedRound), latest.preparedBlockHash)) {
      return 'proposed block is not the latest prepared block';
    }
    return this.checkPrepareCertificate(message.prepares, latest.preparedRound, latest.preparedBlockHash);
  }

  private checkPrepareCertificate(prepares: readonly Signed<PreparePayload>[], round: number, digest: Uint8Array): string | undefined {
    if (!distinctAuthors(prepares)) return 'prepares from the same validator twice';
    if (prepares.length < this.quorum) return 'fewer prepares than a quorum';
    for (const prepare of prepares) {
      if (!this.validPrepare(prepare, round, digest)) return 'a prepare does not match the prepared block';
    }
    return undefined;
  }

  private checkRoundChangePayload(rc: Signed<RoundChangePayload>): string | undefined {
    const { height, round, prepared } = rc.payload;
    if (!includesAddress(this.context.validators, rc.author)) return 'round change author is not a validator';
    if (height !== this.height) return 'round change for another height';
    if (round <= 0) return 'round change target must be above round 0';
    if (prepared && (prepared.preparedRound < 0 || prepared.preparedRound >= round)) return 'prepared round not below the target round';
    return undefined;
  }

  // --- round changes ------------------------------------------------------------------------

  /** Besu's doRoundChange: keep the prepared certificate, start the round, announce it. */
  private doRoundChange(newRound: number, reason: RoundStartReason = 'roundTimer'): void {
    const current = this.currentRound;
    if (current && current.round >= newRound) return;
    this.startNewRound(newRound, reason);
    const roundChange = createRoundChange(this.env.signer, this.height, newRound, this.latestPrepared);
    // Announce before counting it: counting may start the round's proposal, which must come after.
    this.env.emit({ kind: 'broadcast', message: roundChange });
    this.handleRoundChange(roundChange, true);
  }

  private startNewRound(round: number, reason: RoundStartReason): void {
    // Besu keeps the certificate of a prepared round only when leaving it on its timer; keeping it on
    // every way out (a round-change quorum or a proposal for a later round too) is the QBFT paper's
    // rule and only ever adds a valid certificate to this node's next round change.
    const leaving = this.currentRound;
    if (leaving?.prepared && leaving.block && (!this.latestPrepared || leaving.round > this.latestPrepared.round)) {
      this.latestPrepared = { block: leaving.block, prepares: [...leaving.prepares.values()], round: leaving.round };
    }
    const buffered = this.futureRounds.get(round);
    for (const [r, state] of this.futureRounds) {
      if (r <= round) {
        this.futureRoundMessages -= state.futureMessageCount;
        this.futureRounds.delete(r);
      }
    }
    for (const r of this.roundChanges.keys()) if (r < round) this.roundChanges.delete(r);
    this.currentRound = buffered ?? new RoundState(round);
    this.pendingBuild = undefined;
    const timeoutMs = this.env.config.requestTimeoutSeconds * 1000 * 2 ** round;
    const now = this.env.now();
    this.env.emit({ kind: 'setTimer', timer: { slot: 'round', height: this.height, round }, atMs: now + timeoutMs });
    this.event({ type: 'roundStarted', height: this.height, round, atMs: now, reason, timeoutMs });
  }

  /** `local`: this node's own round change, whose block (if any) it prepared itself. */
  private handleRoundChange(message: RoundChangeMessage, local = false): void {
    const round = message.signed.payload.round;
    if (this.age(round) === 'prior') return this.reject(message, 'round change for a prior round');
    const problem = this.checkRoundChange(message);
    if (problem) return this.reject(message, problem);
    // Besu executes the attached block too (RoundChangeMessageValidator): a round change carrying a
    // block that does not execute is ignored, even with a quorum of prepares for it.
    if (message.preparedBlock && !local) return this.executeThen(message, message.preparedBlock);
    this.countRoundChange(message);
  }

  /** Stores a valid round change and acts on a quorum (§5.4), or on f+1 with early round change. */
  private countRoundChange(message: RoundChangeMessage): void {
    const round = message.signed.payload.round;
    const age = this.age(round);
    // The round may have moved on while the block was executed.
    if (age === 'prior') return this.reject(message, 'round change for a prior round');
    let collection = this.roundChanges.get(round);
    if (!collection) {
      collection = { byAuthor: new Map(), actioned: false };
      this.roundChanges.set(round, collection);
    }
    if (collection.actioned) return;
    const author = addressHex(message.signed.author);
    if (!collection.byAuthor.has(author)) collection.byAuthor.set(author, message);
    if (this.env.config.earlyRoundChange) {
      // Only the current round's quorum makes its proposer propose; higher rounds are reached by
      // the f+1 rule first (a quorum is more than f+1).
      if (age === 'current') {
        if (collection.byAuthor.size >= this.quorum) this.actOnQuorum(round, collection);
        return;
      }
      const early = this.earlyRoundChangeTarget();
      if (early !== undefined) this.doRoundChange(early, 'futureRoundChanges');
      return;
    }
    if (collection.byAuthor.size >= this.quorum) this.actOnQuorum(round, collection);
  }

  private actOnQuorum(round: number, collection: RoundChangeCollection): void {
    collection.actioned = true;
    const certificate = [...collection.byAuthor.values()];
    if (this.age(round) === 'future') this.startNewRound(round, 'roundChangeQuorum');
    if (this.isLocalProposer(round)) this.startRoundWith(certificate);
  }

  /**
   * Early round change: when f+1 distinct validators sent round changes for rounds above the current
   * one, the smallest such round (each validator counted at its highest). At least one of them is
   * honest and already at that round or beyond, so moving there skips no round an honest node needs.
   */
  private earlyRoundChangeTarget(): number | undefined {
    const current = this.currentRound?.round ?? -1;
    const highestByAuthor = new Map<string, number>();
    for (const [round, collection] of this.roundChanges) {
      if (round <= current) continue;
      for (const author of collection.byAuthor.keys()) {
        highestByAuthor.set(author, Math.max(round, highestByAuthor.get(author) ?? round));
      }
    }
    if (highestByAuthor.size < this.earlyRoundChangeThreshold) return undefined;
    return Math.min(...highestByAuthor.values());
  }

  private checkRoundChange(message: RoundChangeMessage): string | undefined {
    const payloadProblem = this.checkRoundChangePayload(message.signed);
    if (payloadProblem) return payloadProblem;
    const prepared = message.signed.payload.prepared;
    const block = message.preparedBlock;
    if (!block) return prepared ? 'prepared round change without its block' : undefined;
    if (!prepared) return 'round change carries a block but no prepared round';
    if (!bytesEqual(block.digest(), prepared.preparedBlockHash)) return 'prepared block does not match its hash';
    if (block.number !== this.height) return 'prepared block is not at this height';
    const headerProblem = checkHeaderRules(block, this.ruleContext(), false);
    if (headerProblem) return `prepared block breaks a header rule: ${headerProblem}`;
    return this.checkPrepareCertificate(message.prepares, prepared.preparedRound, prepared.preparedBlockHash);
  }

  /** This node proposes for `round` on a quorum of round changes (§5.4). */
  private startRoundWith(certificate: readonly RoundChangeMessage[]): void {
    const round = this.currentRound;
    if (!round || round.block || this.pendingBuild) return;
    const justification = certificate.map((rc) => rc.signed);
    let best: RoundChangeMessage | undefined;
    for (const rc of certificate) {
      const prepared = rc.signed.payload.prepared;
      if (!prepared || !rc.preparedBlock) continue;
      if (!best || prepared.preparedRound > best.signed.payload.prepared!.preparedRound) best = rc;
    }
    if (best) {
      // Re-propose the prepared block unchanged but for its round (coinbase and timestamp kept).
      this.propose(round, best.preparedBlock!.withRound(round.round), justification, best.prepares, true);
    } else {
      this.requestBuild(round.round, BigInt(Math.floor(this.env.now() / 1000)), justification);
    }
  }
}

/** Identifies a block for execution: its on-chain hash (round and seals excluded). */
function blockKey(block: QbftBlock): string {
  return Buffer.from(block.hash()).toString('hex');
}

function distinctAuthors(items: readonly Signed<unknown>[]): boolean {
  const authors = new Set(items.map((i) => addressHex(i.author)));
  return authors.size === items.length;
}
