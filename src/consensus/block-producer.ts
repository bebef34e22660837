import type { HeadInfo } from '../chain/chain.js';
import type { PoolTxForBlock } from '../actors/protocols.js';
import { decodeExtraData, encodeExtraData } from './qbft/extra-data.js';
import { addressOf, compareAddresses, proposerFor, quorum, signCommitSeal } from './qbft/seal.js';

/** The clock and timer the producer runs on: real time in the node, virtual time in tests. */
export interface Clock {
  now(): number;
  /** Calls `fn` at absolute time `atMs`; returns a cancel function. */
  at(atMs: number, fn: () => void): () => void;
}

/** What producing a block needs from the other actors. */
export interface ProducerPorts {
  selectTransactions(req: { maxCount: number; gasLimit: bigint; baseFee?: bigint }): Promise<PoolTxForBlock[]>;
  build(req: {
    timestamp: bigint;
    coinbase: Uint8Array;
    extraData: Uint8Array;
    maxBuildMs: number;
    transactions: PoolTxForBlock[];
  }): Promise<{ number: bigint; hash: Uint8Array; txCount: number; rejected: Uint8Array[] }>;
  importBuilt(hash: Uint8Array, sealedExtraData: Uint8Array): Promise<void>;
  discardBuilt(): Promise<void>;
  dropTransactions(hashes: Uint8Array[]): Promise<void>;
}

export interface ProducerConfig {
  nodeKey: Uint8Array;
  blockPeriodSeconds: number;
  /** Share of the block period the transaction loop may use (Besu: 75%). */
  txSelectionShare: number;
  vanity: Uint8Array;
  maxTransactionsPerBlock: number;
}

export type ProducerRole = 'sole-validator' | 'one-of-many' | 'not-a-validator';

/**
 * Decides when this node proposes and drives build → seal → import for it. The decision (am I the
 * proposer of the next height, and when) is kept apart from the mechanics (ask the pool, ask the
 * chain to build, sign, ask the chain to import), so that multi-validator QBFT rounds can replace the
 * decision without touching the mechanics.
 *
 * For now a block is final once this node has sealed it only when it is the sole validator (quorum 1);
 * with more validators it waits for the round protocol over devp2p.
 */
export class BlockProducer {
  private readonly address: Uint8Array;
  private cancelTimer: (() => void) | undefined;
  private inProgress: Promise<void> | undefined;
  private stopped = false;
  private lastRole: ProducerRole | undefined;

  constructor(
    private readonly config: ProducerConfig,
    private readonly ports: ProducerPorts,
    private readonly clock: Clock,
    private readonly onEvent: (message: string, level?: 'info' | 'warn' | 'error') => void = () => undefined,
  ) {
    this.address = addressOf(config.nodeKey);
  }

  /** Called whenever the head changes: plans the next proposal on top of it. */
  onNewHead(head: HeadInfo): void {
    if (this.stopped) return;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const role = this.roleAt(head);
    if (role !== this.lastRole) {
      this.lastRole = role;
      if (role === 'one-of-many') this.onEvent('This node is one of several validators: it waits for QBFT rounds with its peers', 'warn');
      if (role === 'not-a-validator') this.onEvent('This node is not a validator: it does not propose blocks');
    }
    if (role !== 'sole-validator') return;
    const proposeAt = Number(head.timestamp + BigInt(this.config.blockPeriodSeconds)) * 1000;
    this.cancelTimer = this.clock.at(proposeAt, () => {
      this.cancelTimer = undefined;
      this.inProgress = this.produce(head).finally(() => (this.inProgress = undefined));
    });
  }

  /** Stops planning and waits for a block in progress to be imported or discarded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    await this.inProgress;
  }

  /** Whether this node may finalise the block after `head` on its own, given the header's validator set. */
  roleAt(head: HeadInfo): ProducerRole {
    const { validators } = decodeExtraData(head.extraData);
    const sorted = [...validators].sort(compareAddresses);
    if (!sorted.some((v) => compareAddresses(v, this.address) === 0)) return 'not-a-validator';
    if (quorum(sorted.length) > 1) return 'one-of-many';
    const proposer = proposerFor(sorted, head.coinbase, 0);
    return compareAddresses(proposer, this.address) === 0 ? 'sole-validator' : 'not-a-validator';
  }

  private async produce(parent: HeadInfo): Promise<void> {
    const { validators } = decodeExtraData(parent.extraData);
    const sortedValidators = [...validators].sort(compareAddresses);
    // Round-0 timestamp: now rounded half-up, never earlier than the period allows.
    const earliest = parent.timestamp + BigInt(this.config.blockPeriodSeconds);
    const rounded = BigInt(Math.round(this.clock.now() / 1000));
    const timestamp = rounded > earliest ? rounded : earliest;
    const unsealed = { vanity: this.config.vanity, validators: sortedValidators, round: 0, seals: [] as Uint8Array[] };
    try {
      const transactions = await this.ports.selectTransactions({
        maxCount: this.config.maxTransactionsPerBlock,
        gasLimit: parent.gasLimit,
        baseFee: parent.nextBaseFeePerGas,
      });
      const built = await this.ports.build({
        timestamp,
        coinbase: this.address,
        extraData: encodeExtraData(unsealed),
        maxBuildMs: this.config.blockPeriodSeconds * 1000 * this.config.txSelectionShare,
        transactions,
      });
      if (built.rejected.length > 0) await this.ports.dropTransactions(built.rejected);
      // At round 0 the committed-seal hash equals the on-chain block hash the chain computed.
      const seal = signCommitSeal(built.hash, this.config.nodeKey);
      await this.ports.importBuilt(built.hash, encodeExtraData({ ...unsealed, seals: [seal] }));
    } catch (err) {
      this.onEvent(`Block production on #${parent.number} failed: ${err instanceof Error ? err.message : String(err)}`, 'error');
      await this.ports.discardBuilt().catch(() => undefined);
      // Try again one period later on the same parent, unless a new head arrives first.
      if (!this.stopped) {
        this.cancelTimer = this.clock.at(this.clock.now() + this.config.blockPeriodSeconds * 1000, () => {
          this.cancelTimer = undefined;
          this.inProgress = this.produce(parent).finally(() => (this.inProgress = undefined));
        });
      }
    }
  }
}

/** Real time for the node. */
export const systemClock: Clock = {
  now: () => Date.now(),
  at(atMs, fn) {
    const timer = setTimeout(fn, Math.max(0, atMs - Date.now()));
    return () => clearTimeout(timer);
  },
};
