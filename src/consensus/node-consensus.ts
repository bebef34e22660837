/**
 * QBFT in the node: the state machine and runner of src/consensus/qbft on real time, with the chain
 * and pool actors behind the ports. The consensus worker only turns mailboxes into `NodeChainPorts`.
 *
 * Block work: a block this node proposes is built by the chain actor, which holds it; once a quorum
 * has committed a block, the chain stores it (`importCommitted`), reusing its own execution when it is
 * the block it holds. Messages go to validator peers through the p2p actor; a sole validator (quorum
 * 1) finalises alone.
 */
import type { Genesis } from '../shared/ethereum/genesis.js';
import type { BlockSelection, BuildRequest, BuiltBlockInfo, HeadInfo, PoolSelection, PoolTxForBlock, PrebuildRequest, RejectedTx } from '../shared/actors/messages.js';
import { BlockPrebuilder } from './block-prebuilder.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import { QbftBlock } from '../shared/qbft/block.js';
import { QbftController } from './controller.js';
import type { BuildBlockRequest, ConsensusEvent, ParentInfo } from './core-types.js';
import { bytesEqual } from '../shared/qbft/header-rules.js';
import type { QbftMessage } from './messages.js';
import { createQbftRpcHandlers } from './rpc-handlers.js';
import type { QbftMethodHandlers } from './rpc-handlers.js';
import { QbftRunner } from './runner.js';
import type { QbftPorts, Scheduler } from './runner.js';
import { QbftSchedule } from '../shared/qbft/schedule.js';
import { ValidatorTracker } from '../shared/qbft/validators.js';
import type { HeaderSummary } from '../shared/qbft/validators.js';

/** What consensus asks of the chain and the pool. */
export interface NodeChainPorts {
  head(): Promise<HeadInfo>;
  selectTransactions(req: BlockSelection): Promise<PoolSelection>;
  /** Executes transactions into the block a later `build` with the same time and coinbase finishes; answers how many it holds. */
  prebuild(req: PrebuildRequest): Promise<number>;
  /** Builds on the head and holds the block (dropping any held before); answers with its RLP. */
  build(req: BuildRequest): Promise<BuiltBlockInfo>;
  /** Drops the held block and puts the building state back at the head. */
  discardBuilt(): Promise<void>;
  /** Stores a committed block: the held one without executing it again, any other with execution. */
  importCommitted(rlp: Uint8Array): Promise<void>;
  /** Checks and executes a block another validator proposed, without storing it. */
  validateBlock(rlp: Uint8Array): Promise<{ valid: boolean; reason?: string }>;
  /** Tells the pool which candidates block building left out, and why. */
  reportRejected(rejected: RejectedTx[]): Promise<void>;
  headers(from: bigint, to: bigint): Promise<HeaderSummary[]>;
  headerByHash(hash: Uint8Array): Promise<HeaderSummary | null>;
  /** Read-only call on the state after block `blockNumber`. */
  call(blockNumber: bigint, to: Uint8Array, data: Uint8Array): Promise<Uint8Array>;
}

/** Sends consensus messages to validator peers (none until devp2p exists). */
export interface ConsensusNetwork {
  broadcast(message: QbftMessage): void;
  gossip(message: QbftMessage, origin: string | undefined): void;
}

export interface NodeConsensusConfig {
  nodeKey: Uint8Array;
  vanity: Uint8Array;
  genesis: Genesis;
  /** Share of the block period the transaction loop may use (Besu: 75%). */
  txSelectionShare: number;
  maxTransactionsPerBlock: number;
  /** `--Xqbft-enable-early-round-change` (default off). */
  earlyRoundChange?: boolean;
}

export type LogFn = (message: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;

export class NodeConsensus {
  readonly schedule: QbftSchedule;
  readonly tracker: ValidatorTracker;
  readonly controller: QbftController;
  readonly runner: QbftRunner;
  readonly rpc: MethodHandlers<'consensus'>;
  private readonly prebuilder: BlockPrebuilder;
  private head: HeadInfo | undefined;
  private lastValidatorState: string | undefined;

  constructor(
    private readonly config: NodeConsensusConfig,
    private readonly chain: NodeChainPorts,
    private readonly network: ConsensusNetwork,
    scheduler: Scheduler,
    private readonly log: LogFn,
  ) {
    this.schedule = QbftSchedule.fromGenesis(config.genesis);
    this.tracker = new ValidatorTracker(this.schedule, {
      headers: (from, to) => chain.headers(from, to),
      callContract: (blockNumber, contract, data) => chain.call(blockNumber, contract, data),
    });
    const fixed = this.schedule.fixed;
    this.controller = new QbftController({
      nodeKey: config.nodeKey,
      vanity: config.vanity,
      requestTimeoutSeconds: fixed.requestTimeoutSeconds,
      duplicateMessageLimit: fixed.duplicateMessageLimit,
      futureMessagesLimit: fixed.futureMessagesLimit,
      futureMessagesMaxDistance: fixed.futureMessagesMaxDistance,
      earlyRoundChange: config.earlyRoundChange ?? false,
    });
    this.prebuilder = new BlockPrebuilder(chain, scheduler, this.controller.address, () => this.selection(), (err) =>
      this.log(`QBFT: executing transactions ahead of the block timer failed: ${err instanceof Error ? err.message : String(err)}`, 'debug'),
    );
    this.runner = new QbftRunner(this.controller, this.ports(), scheduler, { messageQueueLimit: fixed.messageQueueLimit });
    this.rpc = {
      ...this.qbftRpc(chain),
      eth_mining: () => !this.runner.isPaused,
      miner_start: async () => {
        if (this.head) this.runner.resume(parentInfo(this.head));
        return true;
      },
      miner_stop: async () => {
        await this.runner.pause();
        await this.prebuilder.stop();
        await this.chain.discardBuilt();
        return true;
      },
    };
  }

  private qbftRpc(chain: NodeChainPorts): QbftMethodHandlers {
    return createQbftRpcHandlers({
      tracker: this.tracker,
      votes: this.controller.votes,
      chain: {
        headNumber: () => this.head?.number ?? 0n,
        headerByNumber: async (number) => (await chain.headers(number, number))[0],
        headerByHash: async (hash) => (await chain.headerByHash(hash)) ?? undefined,
        headers: (from, to) => chain.headers(from, to),
      },
    });
  }

  async start(): Promise<void> {
    this.onNewHead(await this.chain.head());
  }

  /**
   * Every new chain head, whoever imported it. After a re-org, `forkedAt` is the number of the last
   * block both branches share: the validator sets and votes cached above it belong to the old branch.
   */
  onNewHead(head: HeadInfo, forkedAt?: bigint): void {
    if (forkedAt !== undefined) this.tracker.forgetAbove(forkedAt);
    this.head = head;
    this.runner.onNewHead(parentInfo(head));
  }

  /** Stops timers and waits for a block in progress to be imported or dropped. */
  async stop(): Promise<void> {
    await this.runner.stop();
    await this.prebuilder.stop();
  }

  private ports(): QbftPorts {
    return {
      buildBlock: (request) =>
        this.timed(this.build(request), (block) => `built block ${request.height} round ${request.round} (${block.transactionCount} tx)`),
      // The header rules were checked by the state machine; the chain checks the rest and executes.
      validateBlock: (block) =>
        this.timed(this.chain.validateBlock(block.encode()), (outcome) => `validated block ${block.number} (${block.transactionCount} tx): ${outcome.valid ? 'valid' : outcome.reason}`),
      importBlock: (block) => this.timed(this.chain.importCommitted(block.encode()), () => `stored committed block ${block.number} (${block.transactionCount} tx)`),
      broadcast: (message) => this.network.broadcast(message),
      gossip: (message, origin) => this.network.gossip(message, origin),
      heightContext: async (head) => {
        const context = await this.tracker.heightContext(head);
        this.reportRole(context.height, context.validators);
        void this.prebuilder.startHeight(context);
        return context;
      },
      onEvent: (event) => this.logEvent(event),
      onError: (what, err) => this.log(`QBFT: failed ${what}: ${err instanceof Error ? err.message : String(err)}`, 'warn'),
    };
  }

  /** A DEBUG line with how long the block work took: where a slow height spends its time. */
  private async timed<T>(work: Promise<T>, describe: (result: T) => string): Promise<T> {
    const started = performance.now();
    const result = await work;
    this.log(`QBFT ${describe(result)} in ${Math.round(performance.now() - started)} ms`, 'debug');
    return result;
  }

  private async build(request: BuildBlockRequest): Promise<QbftBlock> {
    // What the chain executed ahead of the timer stays in its block; what it is doing now finishes first.
    const handover = await this.prebuilder.stop();
    const head = this.head;
    if (!head || !bytesEqual(head.hash, request.parentHash)) throw new Error('the head moved before the block could be built');
    const period = this.schedule.settingsFor(request.height, request.timestamp).blockPeriodSeconds;
    const selection = this.selection();
    const maxBuildMs = period * 1000 * this.config.txSelectionShare;
    const buildFrom = (transactions: PoolTxForBlock[]) =>
      this.chain.build({
        timestamp: request.timestamp,
        coinbase: request.coinbase,
        extraData: request.extraData,
        maxBuildMs,
        maxTransactions: selection.maxCount,
        transactions,
      });
    const ahead =
      handover && handover.timestamp === request.timestamp && bytesEqual(handover.parentHash, request.parentHash) && bytesEqual(request.coinbase, this.controller.address)
        ? handover
        : undefined;
    let built: BuiltBlockInfo | undefined;
    let caughtUp: { executed: number; rounds: number } | undefined;
    if (ahead) {
      // The chain's open block takes what it was not handed yet, then the build only seals it.
      caughtUp = await this.prebuilder.catchUp(ahead, maxBuildMs);
      if (caughtUp) built = await buildFrom([]);
      if (!built || built.executedAhead !== caughtUp?.executed) {
        // The chain no longer held the block it ran them into: build it again from the whole pool.
        await this.chain.discardBuilt();
        built = undefined;
      }
    }
    built ??= await buildFrom((await this.chain.selectTransactions(selection)).transactions);
    if (built.rejected.length > 0) await this.chain.reportRejected(built.rejected);
    if (ahead && caughtUp && built.executedAhead > 0) {
      this.log(`QBFT: ${ahead.executed} of block ${request.height}'s ${built.txCount} transactions ran ahead of its timer, the rest in ${caughtUp.rounds} round(s) after it`, 'debug');
    }
    return QbftBlock.fromRlp(built.rlp);
  }

  /** What block building asks the pool for, on the current head. */
  private selection(): BlockSelection {
    const head = this.head;
    return {
      maxCount: this.config.maxTransactionsPerBlock,
      gasLimit: head?.gasLimit ?? 0n,
      ...(head?.nextBaseFeePerGas === undefined ? {} : { baseFee: head.nextBaseFeePerGas }),
    };
  }

  private reportRole(height: bigint, validators: Uint8Array[]): void {
    const isValidator = validators.some((v) => bytesEqual(v, this.controller.address));
    const state = !isValidator ? 'not-a-validator' : validators.length === 1 ? 'sole' : `one-of-${validators.length}`;
    if (state === this.lastValidatorState) return;
    this.lastValidatorState = state;
    if (state === 'not-a-validator') this.log(`This node is not a validator at block ${height}: it does not take part in QBFT rounds`);
    else if (state === 'sole') this.log(`This node is the only validator at block ${height}: it finalises blocks alone`);
    else this.log(`This node is one of ${validators.length} validators at block ${height}: blocks need a quorum of their commits`, 'warn');
  }

  private logEvent(event: ConsensusEvent): void {
    switch (event.type) {
      case 'roundStarted':
        if (event.round > 0) {
          this.log(`QBFT round change: block ${event.height} round ${event.round} (timeout ${event.timeoutMs / 1000} s)`);
        }
        return;
      case 'committed':
        this.log(`QBFT committed block ${event.height} in round ${event.round} with ${event.seals} seal(s)`, 'debug');
        return;
      case 'messageRejected':
        this.log(`QBFT message 0x${event.code.toString(16)} refused: ${event.reason}`, 'debug');
        return;
      case 'emptyBlockSkipped':
        this.log(`QBFT: no transactions for block ${event.height}, waiting for the empty-block period`, 'debug');
        return;
      case 'messageQueueFull':
        this.log(`QBFT: more than ${event.limit} messages waiting, dropping new ones (${event.dropped} dropped so far)`, 'warn');
        return;
      case 'proposed':
        return;
    }
  }
}

export function parentInfo(head: HeadInfo): ParentInfo {
  return { number: head.number, hash: head.hash, timestamp: head.timestamp, coinbase: head.coinbase, gasLimit: head.gasLimit };
}

/** Real time for the node. */
export const systemClock: Scheduler = {
  now: () => Date.now(),
  at(atMs, fn) {
    const timer = setTimeout(fn, Math.max(0, atMs - Date.now()));
    return () => clearTimeout(timer);
  },
};
