/**
 * A deterministic QBFT network in one process: N validators running the production state machine
 * and runner (controller.ts, runner.ts) on a virtual clock, each with its own fake chain, connected
 * by a simulated network with delay, loss, duplication and partitions. Optional faults: crashed or
 * silent validators, an equivocating proposer, and an outside adversary that forges, replays and
 * injects messages from a non-validator key.
 *
 * Besides consensus messages the network carries what the eth protocol gives a Besu validator:
 * NewBlock announcements after each import and block requests from a node that fell behind, so a
 * node that missed a height catches up by importing sealed blocks (checked with the full header rule
 * set, commit seals included).
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

import type { QbftTransition } from '../../../src/shared/ethereum/genesis.js';
import { HeaderField } from '../../../src/shared/qbft/block.js';
import type { QbftBlock } from '../../../src/shared/qbft/block.js';
import { QbftController } from '../../../src/consensus/controller.js';
import { RecentKeys } from '../../../src/shared/util/recent-keys.js';
import type { ConsensusEvent, ParentInfo } from '../../../src/consensus/core-types.js';
import { checkHeaderRules, bytesEqual } from '../../../src/shared/qbft/header-rules.js';
import { MessageCode, createCommit, createPrepare, createProposal, createRoundChange, decodeMessage, messageAuthor } from '../../../src/consensus/messages.js';
import type { QbftMessage, Signer } from '../../../src/consensus/messages.js';
import { createQbftRpcHandlers } from '../../../src/consensus/rpc-handlers.js';
import { QbftRunner } from '../../../src/consensus/runner.js';
import type { QbftMethodHandlers } from '../../../src/consensus/rpc-handlers.js';
import type { QbftPorts } from '../../../src/consensus/runner.js';
import { QbftSchedule } from '../../../src/shared/qbft/schedule.js';
import { addressOf, compareAddresses, quorum, signHash } from '../../../src/shared/qbft/seal.js';
import { ValidatorTracker, addressHex } from '../../../src/shared/qbft/validators.js';
import { FakeChain, fakeGenesis } from './fake-chain.js';
import { derivedKey, hashUnit } from './random.js';
import { VirtualClock } from './virtual-clock.js';

export interface NetworkConditions {
  /** Smallest one-way delay of a message copy. */
  baseDelayMs: number;
  /** Extra delay, uniform in [0, jitterMs). */
  jitterMs: number;
  /** Probability that a copy is lost. */
  loss: number;
  /** Probability that a copy is delivered twice. */
  duplication: number;
}

/** During [fromMs, toMs) nodes in different groups cannot reach each other. */
export interface Partition {
  fromMs: number;
  toMs: number;
  groups: number[][];
}

/** An outside attacker that hears all traffic (it is not a validator and holds no validator key). */
export interface AdversaryConfig {
  /** Re-send every consensus message it hears this long after hearing it. */
  replayDelayMs?: number;
  /** Send copies of what it hears with a corrupted signature or a tampered payload. */
  forge?: boolean;
  /** Sign prepares, commits, round changes and proposals with its own (non-validator) key. */
  nonValidator?: boolean;
  /** Announce blocks whose seals are forged or fewer than a quorum. */
  forgedBlocks?: boolean;
}

export type Behaviour = 'honest' | 'equivocating';

export interface SimulationConfig {
  seed: number;
  validators: number;
  blockPeriodSeconds?: number;
  requestTimeoutSeconds?: number;
  epochLength?: number;
  emptyBlockPeriodSeconds?: number;
  transitions?: QbftTransition[];
  /** Contract-mode genesis: the fake contract's address (its list starts as the validators). */
  contractAddress?: Uint8Array;
  network?: Partial<NetworkConditions>;
  partitions?: Partition[];
  behaviours?: Record<number, Behaviour>;
  /** Validators that crash at a time (they neither send nor receive; `restartAtMs` brings them back). */
  crashes?: { node: number; atMs: number; restartAtMs?: number }[];
  /** Simulated time to run. */
  durationMs: number;
  /** Ends the run early once every running honest node has reached this height. */
  targetHeight?: bigint;
  /** Transactions of the block node `node` builds at `height` (default: one, so blocks differ). */
  payload?: (node: number, height: bigint, round: number) => Uint8Array[];
  adversary?: AdversaryConfig;
  /** Build and validation delay of the fake chain. */
  executionDelayMs?: number;
  /** Besu `--Xqbft-enable-early-round-change` on every node. */
  earlyRoundChange?: boolean;
  /** Blocks node `node`'s validateBlock port refuses (a reason), whatever their execution says. */
  refuseBlock?: (node: number, block: QbftBlock) => string | undefined;
  /** `messagequeuelimit` of every node (default 1000). */
  messageQueueLimit?: number;
}

export interface RoundRecord {
  node: number;
  height: bigint;
  round: number;
  atMs: number;
  timeoutMs: number;
  reason: string;
}

export interface SimulationReport {
  /** Head number of each node at the end. */
  heads: bigint[];
  /** Lowest head among nodes that were running and honest at the end. */
  minHonestHead: bigint;
  maxHead: bigint;
  /** Every round start above round 0, per node. */
  roundChanges: RoundRecord[];
  /** Heights at which any node moved past round 0. */
  heightsWithRoundChanges: bigint[];
  /** Two different blocks imported at one height, or a block without a valid quorum of seals. */
  safetyViolations: string[];
  /** Committed blocks that failed to import (should never happen). */
  importErrors: string[];
  /** Foreign blocks refused on import (forged announcements land here). */
  refusedBlocks: number;
  rejectedMessages: number;
  messagesSent: number;
  messagesLost: number;
  /** Per node: round starts, proposals and commits in order, with their times — for run-to-run comparison. */
  traces: string[][];
  /** On-chain hash of every block of the longest chain, by height. */
  chain: string[];
  simulatedMs: number;
  timersFired: number;
}

type Envelope =
  | { kind: 'consensus'; code: number; data: Uint8Array }
  | { kind: 'newBlock'; block: QbftBlock }
  | { kind: 'syncRequest'; from: bigint }
  | { kind: 'syncResponse'; blocks: QbftBlock[] };

const DEFAULT_NETWORK: NetworkConditions = { baseDelayMs: 10, jitterMs: 40, loss: 0, duplication: 0 };
const GOSSIPED_HISTORY_LIMIT = 1000;
const SYNC_BATCH = 64n;
const SYNC_RETRY_MS = 2000;
/** Virtual time at which every simulation starts (the genesis timestamp, in ms). */
export const START_MS = 1_700_000_000_000;

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The simulated network: every node index can reach every other, unless partitioned. */
class SimNetwork {
  private readonly copies = new Map<string, number>();
  sent = 0;
  lost = 0;
  /** The adversary's ear: called with every envelope an honest node sends. */
  tap: ((from: number, envelope: Envelope) => void) | undefined;

  constructor(
    private readonly clock: VirtualClock,
    private readonly seed: number,
    private readonly conditions: NetworkConditions,
    private readonly partitions: readonly Partition[],
    private readonly deliver: (from: number, to: number, envelope: Envelope) => void,
  ) {}

  canReach(a: number, b: number, atMs: number): boolean {
    for (const p of this.partitions) {
      const elapsed = atMs - START_MS;
      if (elapsed < p.fromMs || elapsed >= p.toMs) continue;
      const groupOf = (n: number) => p.groups.findIndex((g) => g.includes(n));
      if (groupOf(a) !== groupOf(b)) return false;
    }
    return true;
  }

  send(from: number, to: number, envelope: Envelope, domain = 'honest'): void {
    this.sent += 1;
    if (domain === 'honest') this.tap?.(from, envelope);
    const now = this.clock.now();
    if (!this.canReach(from, to, now)) {
      this.lost += 1;
      return;
    }
    const key = `${domain}|${from}|${to}|${envelopeKey(envelope)}`;
    const copy = (this.copies.get(key) ?? 0) + 1;
    this.copies.set(key, copy);
    const draw = (what: string) => hashUnit(this.seed, what, key, copy);
    if (draw('loss') < this.conditions.loss) {
      this.lost += 1;
      return;
    }
    const deliveries = draw('duplicate') < this.conditions.duplication ? 2 : 1;
    for (let i = 0; i < deliveries; i++) {
      const delay = this.conditions.baseDelayMs + Math.floor(draw(`delay${i}`) * this.conditions.jitterMs);
      this.clock.at(now + delay, () => {
        // A partition that started while the copy was in flight also cuts it.
        if (this.canReach(from, to, this.clock.now())) this.deliver(from, to, envelope);
        else this.lost += 1;
      });
    }
  }
}

function envelopeKey(envelope: Envelope): string {
  switch (envelope.kind) {
    case 'consensus':
      return hex(keccak_256(envelope.data));
    case 'newBlock':
      return `block:${hex(envelope.block.hash())}`;
    case 'syncRequest':
      return `sync:${envelope.from}`;
    case 'syncResponse':
      return `blocks:${envelope.blocks.map((b) => hex(b.hash()).slice(0, 8)).join(',')}`;
  }
}

/** One validator (or observer): controller + runner + fake chain. */
export class SimNode {
  readonly id: string;
  readonly signer: Signer;
  readonly chain: FakeChain;
  readonly tracker: ValidatorTracker;
  readonly controller: QbftController;
  readonly runner: QbftRunner;
  crashed = false;
  readonly trace: string[] = [];
  readonly rounds: RoundRecord[] = [];
  readonly importErrors: string[] = [];
  /** Virtual time (ms after the start) at which this node committed each height. */
  readonly commitTimes = new Map<bigint, number>();
  refusedBlocks = 0;
  rejectedMessages = 0;
  private readonly sentRecently = new RecentKeys(GOSSIPED_HISTORY_LIMIT);
  private importQueue: Promise<void> = Promise.resolve();
  private readonly syncRequested = new Map<number, number>();
  private rpcHandlers: QbftMethodHandlers | undefined;

  constructor(
    readonly index: number,
    key: Uint8Array,
    private readonly sim: Simulation,
    readonly behaviour: Behaviour,
  ) {
    this.id = `n${index}`;
    this.signer = { key, address: addressOf(key) };
    this.chain = new FakeChain(sim.genesis, sim.contractAddresses);
    this.tracker = new ValidatorTracker(sim.schedule, this.chain);
    const fixed = sim.schedule.fixed;
    this.controller = new QbftController({
      nodeKey: key,
      vanity: new Uint8Array(32),
      requestTimeoutSeconds: fixed.requestTimeoutSeconds,
      duplicateMessageLimit: fixed.duplicateMessageLimit,
      futureMessagesLimit: fixed.futureMessagesLimit,
      futureMessagesMaxDistance: fixed.futureMessagesMaxDistance,
      earlyRoundChange: sim.config.earlyRoundChange ?? false,
    });
    this.runner = new QbftRunner(this.controller, this.ports(), sim.clock, { messageQueueLimit: fixed.messageQueueLimit });
  }

  get head(): bigint {
    return this.chain.headNumber;
  }

  /** The qbft_* JSON-RPC handlers of this node, over its fake chain. */
  get rpc(): QbftMethodHandlers {
    this.rpcHandlers ??= createQbftRpcHandlers({
      tracker: this.tracker,
      votes: this.controller.votes,
      chain: {
        headNumber: () => this.chain.headNumber,
        headerByNumber: async (number) => (await this.chain.headers(number, number))[0],
        headerByHash: async (hash) => {
          for (let n = this.chain.headNumber; n >= 0n; n--) {
            if (bytesEqual(this.chain.blockAt(n)!.hash(), hash)) return (await this.chain.headers(n, n))[0];
          }
          return undefined;
        },
        headers: (from, to) => this.chain.headers(from, to),
      },
    });
    return this.rpcHandlers;
  }

  start(): void {
    this.runner.onNewHead(this.chain.headInfo());
  }

  crash(): void {
    this.crashed = true;
    void this.runner.stop();
  }

  private ports(): QbftPorts {
    const sim = this.sim;
    return {
      buildBlock: (request) =>
        sim.after(sim.executionDelayMs, () => this.chain.build(request, sim.payloadFor(this.index, request.height, request.round))),
      validateBlock: (block) =>
        sim.after(sim.executionDelayMs, () => {
          const refused = sim.config.refuseBlock?.(this.index, block);
          if (refused) return { valid: false, reason: refused };
          const { reason } = this.chain.execute(block);
          return reason ? { valid: false, reason } : { valid: true };
        }),
      importBlock: async (block) => {
        await this.enqueueImport(async () => {
          const existing = this.chain.blockAt(block.number);
          if (existing) {
            if (!bytesEqual(existing.hash(), block.hash())) sim.recordViolation(`${this.id} committed ${hex(block.hash())} at ${block.number} over ${hex(existing.hash())}`);
            return;
          }
          const refusal = await this.importChecked(block);
          if (refusal) {
            this.importErrors.push(`${this.id} could not import its committed block ${block.number}: ${refusal}`);
            throw new Error(refusal);
          }
        });
      },
      broadcast: (message) => this.sendConsensus(message, undefined),
      gossip: (message, origin) => this.sendConsensus(message, origin),
      heightContext: (head: ParentInfo) => this.tracker.heightContext(head),
      peerHeight: (origin, height) => this.requestSync(Number(origin.slice(1)), height),
      onEvent: (event) => this.record(event),
      onError: (what, err) => {
        // A build that lost its parent is routine; failing to work out a height is not.
        if (what.startsWith('preparing')) this.importErrors.push(`${this.id} failed ${what}: ${err instanceof Error ? err.message : String(err)}`);
      },
    };
  }

  private record(event: ConsensusEvent): void {
    const at = this.sim.clock.now() - START_MS;
    switch (event.type) {
      case 'roundStarted':
        this.trace.push(`${at} round ${event.height}/${event.round} ${event.reason}`);
        this.rounds.push({ node: this.index, height: event.height, round: event.round, atMs: event.atMs - START_MS, timeoutMs: event.timeoutMs, reason: event.reason });
        break;
      case 'proposed':
        this.trace.push(`${at} proposed ${event.height}/${event.round} ${hex(event.hash).slice(0, 12)}${event.reproposed ? ' again' : ''}`);
        break;
      case 'committed':
        this.commitTimes.set(event.height, at);
        this.trace.push(`${at} committed ${event.height}/${event.round} ${hex(event.hash).slice(0, 12)}`);
        break;
      case 'messageRejected':
        this.rejectedMessages += 1;
        break;
      case 'emptyBlockSkipped':
        this.trace.push(`${at} empty ${event.height}`);
        break;
    }
  }

  /** Local messages go to everyone; gossip skips the origin and the author. Sender-side de-duplication. */
  private sendConsensus(message: QbftMessage, origin: string | undefined): void {
    if (this.crashed) return;
    if (!this.sentRecently.add(hex(keccak_256(message.data)))) return;
    const author = addressHex(messageAuthor(message));
    if (this.behaviour === 'equivocating' && message.code === MessageCode.PROPOSAL && origin === undefined) {
      return this.equivocate(message);
    }
    for (const peer of this.sim.nodes) {
      if (peer === this || peer.id === origin || addressHex(peer.signer.address) === author) continue;
      this.sim.network.send(this.index, peer.index, { kind: 'consensus', code: message.code, data: message.data });
    }
  }

  /**
   * An equivocating proposer: half of its peers get its proposal, the other half a different block
   * for the same round, with a prepare and a commit for that one too.
   */
  private equivocate(message: QbftMessage): void {
    if (message.code !== MessageCode.PROPOSAL || message.signed.payload.round !== 0) {
      for (const peer of this.sim.nodes) if (peer !== this) this.sim.network.send(this.index, peer.index, { kind: 'consensus', code: message.code, data: message.data });
      return;
    }
    const { height, round, block } = message.signed.payload;
    const request = {
      request: 0,
      height,
      round,
      parentHash: block.parentHash,
      timestamp: block.timestamp,
      coinbase: block.coinbase,
      extraData: block.field(HeaderField.extraData),
    };
    const other = this.chain.build(request, [new TextEncoder().encode(`equivocation ${height}`)]);
    const otherProposal = createProposal(this.signer, height, round, other);
    const otherPrepare = createPrepare(this.signer, { height, round, digest: other.digest() });
    const otherCommit = createCommit(this.signer, height, round, other.digest(), signHash(other.digest(), this.signer.key));
    for (const peer of this.sim.nodes) {
      if (peer === this) continue;
      const messages = peer.index % 2 === 0 ? [message] : [otherProposal, otherPrepare, otherCommit];
      for (const m of messages) this.sim.network.send(this.index, peer.index, { kind: 'consensus', code: m.code, data: m.data });
    }
  }

  receive(from: number, envelope: Envelope): void {
    if (this.crashed) return;
    switch (envelope.kind) {
      case 'consensus':
        this.runner.onMessage(envelope.code, envelope.data, `n${from}`);
        return;
      case 'newBlock':
        void this.importForeign([envelope.block], from);
        return;
      case 'syncRequest': {
        const blocks: QbftBlock[] = [];
        for (let n = envelope.from; n <= this.chain.headNumber && n < envelope.from + SYNC_BATCH; n++) blocks.push(this.chain.blockAt(n)!);
        if (blocks.length > 0) this.sim.network.send(this.index, from, { kind: 'syncResponse', blocks });
        return;
      }
      case 'syncResponse':
        this.syncRequested.delete(from);
        void this.importForeign(envelope.blocks, from);
        return;
    }
  }

  private requestSync(peer: number, height: bigint): void {
    if (this.crashed || height <= this.chain.headNumber || peer === this.index) return;
    const last = this.syncRequested.get(peer);
    const now = this.sim.clock.now();
    if (last !== undefined && now - last < SYNC_RETRY_MS) return;
    this.syncRequested.set(peer, now);
    this.sim.network.send(this.index, peer, { kind: 'syncRequest', from: this.chain.headNumber + 1n });
  }

  private enqueueImport(work: () => Promise<void>): Promise<void> {
    const next = this.importQueue.then(work);
    this.importQueue = next.catch(() => undefined);
    return next;
  }

  /** Blocks from a peer (announced or synced): import those that extend the head, in order. */
  private importForeign(blocks: QbftBlock[], from: number): Promise<void> {
    return this.enqueueImport(async () => {
      for (const block of blocks) {
        if (this.crashed) return;
        // A different block at a height this node already has would be a fork: the peer that
        // imported it recorded it, and the report compares every node's imports.
        if (this.chain.blockAt(block.number)) continue;
        if (block.number > this.chain.headNumber + 1n) {
          this.requestSync(from, block.number);
          return;
        }
        const refusal = await this.importChecked(block);
        if (refusal) {
          this.refusedBlocks += 1;
          return;
        }
      }
    });
  }

  /** Full header rules (seals included) and execution, then the new head goes to consensus. */
  private async importChecked(block: QbftBlock): Promise<string | undefined> {
    const context = await this.tracker.heightContext(this.chain.headInfo());
    const reason = checkHeaderRules(
      block,
      {
        parent: context.parent,
        validators: context.validators,
        mode: context.settings.validatorSelectionMode,
        blockPeriodSeconds: context.settings.blockPeriodSeconds,
        blockPeriodMilliseconds: context.settings.blockPeriodMilliseconds,
        nowMs: this.sim.clock.now(),
        ...(context.londonBlock === undefined ? {} : { londonBlock: context.londonBlock }),
      },
      true,
    );
    if (reason) return reason;
    try {
      this.chain.append(block);
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    this.sim.recordImport(this, block);
    this.runner.onNewHead(this.chain.headInfo());
    for (const peer of this.sim.nodes) {
      if (peer !== this) this.sim.network.send(this.index, peer.index, { kind: 'newBlock', block });
    }
    return undefined;
  }
}

/** The outside attacker. */
class Adversary {
  readonly index: number;
  private readonly signer: Signer;
  private readonly seenSeals = new Map<string, Uint8Array[]>();
  private readonly heard = new RecentKeys(100_000);
  private readonly forged = new Set<string>();

  constructor(
    private readonly sim: Simulation,
    private readonly config: AdversaryConfig,
  ) {
    this.index = sim.nodes.length;
    const key = derivedKey(sim.config.seed, 9999);
    this.signer = { key, address: addressOf(key) };
  }

  private sendAll(envelope: Envelope, delayMs = 0): void {
    const send = () => {
      for (const node of this.sim.nodes) this.sim.network.send(this.index, node.index, envelope, 'adversary');
    };
    if (delayMs > 0) this.sim.clock.at(this.sim.clock.now() + delayMs, send);
    else send();
  }

  overhear(envelope: Envelope): void {
    if (envelope.kind !== 'consensus') return;
    const { code, data } = envelope;
    const key = hex(keccak_256(data));
    // Its own forgeries come back through honest gossip; forging them again could undo the forgery.
    if (this.forged.has(key) || !this.heard.add(key)) return;
    if (this.config.replayDelayMs !== undefined) this.sendAll(envelope, this.config.replayDelayMs);
    let message: QbftMessage;
    try {
      message = decodeMessage(code, data);
    } catch {
      return;
    }
    if (this.config.forge) this.forge(message);
    if (this.config.nonValidator) this.impersonate(message);
    if (this.config.forgedBlocks) this.forgeBlock(message);
  }

  private forge(message: QbftMessage): void {
    // 1. The same payload with a corrupted signature.
    const corrupted = Uint8Array.from(message.data);
    corrupted[corrupted.length - 20] ^= 0x5a;
    this.sendForgery(message.code, corrupted);
    // 2. A tampered payload under the original signature (digest or round changed).
    if (message.code === MessageCode.PREPARE || message.code === MessageCode.COMMIT) {
      const p = message.signed.payload;
      const tampered =
        message.code === MessageCode.PREPARE
          ? createPrepare(this.signer, { ...p, digest: keccak_256(p.digest) })
          : createCommit(this.signer, p.height, p.round, keccak_256(p.digest));
      // Keep the genuine author's signature: the recovered author is then some random address.
      this.sendForgery(message.code, swapSignature(tampered.data, message.signed.signature));
    }
  }

  private sendForgery(code: number, data: Uint8Array): void {
    this.forged.add(hex(keccak_256(data)));
    this.sendAll({ kind: 'consensus', code, data });
  }

  private impersonate(message: QbftMessage): void {
    const { height, round } = message.signed.payload;
    if (message.code === MessageCode.PROPOSAL) {
      const block = message.signed.payload.block;
      const own = createProposal(this.signer, height, round, block, message.roundChanges, message.prepares);
      this.sendAll({ kind: 'consensus', code: own.code, data: own.data });
      const prepare = createPrepare(this.signer, { height, round, digest: block.digest() });
      const commit = createCommit(this.signer, height, round, block.digest());
      for (const m of [prepare, commit]) this.sendAll({ kind: 'consensus', code: m.code, data: m.data });
    }
    if (message.code === MessageCode.ROUND_CHANGE) {
      const rc = createRoundChange(this.signer, height, round);
      this.sendAll({ kind: 'consensus', code: rc.code, data: rc.data });
    }
  }

  private forgeBlock(message: QbftMessage): void {
    if (message.code === MessageCode.COMMIT) {
      const key = hex(message.signed.payload.digest);
      const seals = this.seenSeals.get(key) ?? [];
      seals.push(message.signed.payload.commitSeal);
      this.seenSeals.set(key, seals);
      return;
    }
    if (message.code !== MessageCode.PROPOSAL) return;
    const block = message.signed.payload.block;
    // Its own seal, and a seal set one short of a quorum, are both refused by the seal rule.
    const ownSealed = block.withSeals([signHash(block.digest(), this.signer.key)]);
    this.sendAll({ kind: 'newBlock', block: ownSealed });
    const genuine = this.seenSeals.get(hex(block.digest())) ?? [];
    const quorumSize = this.sim.initialQuorum;
    if (genuine.length > 0) {
      const short = block.withSeals(genuine.slice(0, Math.min(genuine.length, quorumSize - 1)));
      this.sendAll({ kind: 'newBlock', block: short });
    }
  }
}

/** Replaces the signature of a `[payload, signature]` message. */
function swapSignature(data: Uint8Array, signature: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(data);
  copy.set(signature, copy.length - 65);
  return copy;
}

/** The validator addresses a simulation with this seed and size will use, by node index. */
export function simulationAddresses(seed: number, validators: number): Uint8Array[] {
  return Array.from({ length: validators }, (_, i) => addressOf(derivedKey(seed, i)));
}

export class Simulation {
  readonly clock = new VirtualClock(START_MS);
  readonly schedule: QbftSchedule;
  readonly genesis: ReturnType<typeof fakeGenesis>;
  /** Every address the schedule names as validator contract: the fake contract answers at all of them. */
  readonly contractAddresses: Uint8Array[];
  readonly nodes: SimNode[] = [];
  readonly network: SimNetwork;
  readonly executionDelayMs: number;
  private readonly violations: string[] = [];
  /** height → block hash → nodes that imported it. */
  private readonly imported = new Map<bigint, Map<string, number[]>>();

  constructor(readonly config: SimulationConfig) {
    const keys = Array.from({ length: config.validators }, (_, i) => derivedKey(config.seed, i));
    const validators = keys.map(addressOf).sort(compareAddresses);
    this.contractAddresses = [
      ...(config.contractAddress ? [config.contractAddress] : []),
      ...(config.transitions ?? []).flatMap((tr) => (tr.validatorContractAddress ? [tr.validatorContractAddress] : [])),
    ];
    const genesisTimestamp = BigInt(Math.floor(START_MS / 1000));
    this.genesis = fakeGenesis({
      timestamp: genesisTimestamp,
      validators: config.contractAddress ? [] : validators,
      contractValidators: validators,
    });
    this.schedule = new QbftSchedule(
      {
        blockPeriodSeconds: config.blockPeriodSeconds ?? 1,
        epochLength: config.epochLength ?? 30000,
        requestTimeoutSeconds: config.requestTimeoutSeconds ?? 1,
        emptyBlockPeriodSeconds: config.emptyBlockPeriodSeconds ?? 0,
        blockPeriodMilliseconds: 0,
        blockReward: 0n,
        ...(config.contractAddress ? { validatorContractAddress: config.contractAddress } : {}),
        gossipedHistoryLimit: GOSSIPED_HISTORY_LIMIT,
        messageQueueLimit: config.messageQueueLimit ?? 1000,
        duplicateMessageLimit: 100,
        futureMessagesLimit: 1000,
        futureMessagesMaxDistance: 10,
      },
      config.transitions ?? [],
    );
    this.executionDelayMs = config.executionDelayMs ?? 5;
    this.network = new SimNetwork(
      this.clock,
      config.seed,
      { ...DEFAULT_NETWORK, ...config.network },
      config.partitions ?? [],
      (from, to, envelope) => this.nodes[to]?.receive(from, envelope),
    );
    for (let i = 0; i < config.validators; i++) this.nodes.push(new SimNode(i, keys[i]!, this, config.behaviours?.[i] ?? 'honest'));
    if (config.adversary) {
      const adversary = new Adversary(this, config.adversary);
      this.network.tap = (_from, envelope) => adversary.overhear(envelope);
    }
  }

  /** Addresses of the simulated validators by node index. */
  get addresses(): Uint8Array[] {
    return this.nodes.map((n) => n.signer.address);
  }

  payloadFor(node: number, height: bigint, round: number): Uint8Array[] {
    if (this.config.payload) return this.config.payload(node, height, round);
    return [new TextEncoder().encode(`tx by n${node} at ${height}/${round}`)];
  }

  /** Resolves with `work()` after a virtual delay. */
  after<T>(delayMs: number, work: () => T): Promise<T> {
    return new Promise((resolve, reject) => {
      this.clock.at(this.clock.now() + delayMs, () => {
        try {
          resolve(work());
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /** Runs `fn` at simulated time `ms` after the start. */
  at(ms: number, fn: () => void): void {
    this.clock.at(START_MS + ms, fn);
  }

  recordViolation(text: string): void {
    this.violations.push(text);
  }

  recordImport(node: SimNode, block: QbftBlock): void {
    const byHash = this.imported.get(block.number) ?? new Map<string, number[]>();
    const key = hex(block.hash());
    byHash.set(key, [...(byHash.get(key) ?? []), node.index]);
    this.imported.set(block.number, byHash);
    if (byHash.size > 1) this.violations.push(`fork at height ${block.number}: ${[...byHash.keys()].map((h) => h.slice(0, 12)).join(' vs ')}`);
  }

  /** Quorum of the initial validator set. */
  get initialQuorum(): number {
    return quorum(this.config.validators);
  }

  async run(): Promise<SimulationReport> {
    for (const crash of this.config.crashes ?? []) {
      const node = this.nodes[crash.node]!;
      if (crash.atMs <= 0) node.crashed = true;
      else this.at(crash.atMs, () => node.crash());
      if (crash.restartAtMs !== undefined) this.at(crash.restartAtMs, () => this.restart(node));
    }
    for (const node of this.nodes) if (!node.crashed) node.start();
    const target = this.config.targetHeight;
    const honestRunning = () => this.nodes.filter((n) => !n.crashed && n.behaviour === 'honest');
    await this.clock.runUntil(START_MS + this.config.durationMs, target === undefined ? undefined : () => honestRunning().every((n) => n.head >= target));
    // Work still waiting on the virtual clock will never finish: stop without waiting for it.
    for (const node of this.nodes) void node.runner.stop();
    return this.report();
  }

  private restart(node: SimNode): void {
    node.crashed = false;
    const index = this.nodes.indexOf(node);
    const fresh = new SimNode(index, node.signer.key, this, node.behaviour);
    // The restarted node keeps its chain: replay it into the fresh node.
    for (let n = 1n; n <= node.chain.headNumber; n++) fresh.chain.append(node.chain.blockAt(n)!);
    this.nodes[index] = fresh;
    fresh.start();
  }

  private report(): SimulationReport {
    const honest = this.nodes.filter((n) => !n.crashed && n.behaviour === 'honest');
    const heads = this.nodes.map((n) => n.head);
    const roundChanges = this.nodes.flatMap((n) => n.rounds.filter((r) => r.round > 0));
    const longest = this.nodes.reduce((a, b) => (b.head > a.head ? b : a));
    const chain: string[] = [];
    for (let n = 0n; n <= longest.head; n++) chain.push(hex(longest.chain.blockAt(n)!.hash()));
    return {
      heads,
      minHonestHead: honest.length > 0 ? honest.map((n) => n.head).reduce((a, b) => (a < b ? a : b)) : 0n,
      maxHead: longest.head,
      roundChanges,
      heightsWithRoundChanges: [...new Set(roundChanges.map((r) => r.height))].sort((a, b) => (a < b ? -1 : 1)),
      safetyViolations: [...this.violations],
      importErrors: this.nodes.flatMap((n) => n.importErrors),
      refusedBlocks: this.nodes.reduce((sum, n) => sum + n.refusedBlocks, 0),
      rejectedMessages: this.nodes.reduce((sum, n) => sum + n.rejectedMessages, 0),
      messagesSent: this.network.sent,
      messagesLost: this.network.lost,
      traces: this.nodes.map((n) => [...n.trace]),
      chain,
      simulatedMs: this.clock.now() - START_MS,
      timersFired: this.clock.fired,
    };
  }
}
