/**
 * What the chain tells the transports about each new head, for their subscriptions (newHeads, logs):
 * the blocks that joined the canonical chain, formatted once — the block with transaction hashes,
 * with full transactions only when a transport asked for them, and every log with its address and
 * topics for matching — and the logs of blocks that left it, with `removed: true`. The same event goes
 * to every interested transport; matching it against subscriptions is the transports' work, so the
 * chain's cost per block does not depend on how many subscriptions there are.
 *
 * Publication runs after the block is stored and announced, one head at a time in order; a transport
 * that subscribed to nothing costs nothing, and with no transport interested nothing is read.
 */
import type { Block } from '@ethereumjs/block';
import { bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { CanonicalBlocksEvent, ChainSubscriptionInterest, NewHeadEvent, PublishedBlock, PublishedLog } from '../shared/actors/messages.js';
import type { StoredReceipt } from '../shared/ethereum/chain-records.js';
import { formatBlock, formatFilterLog } from '../shared/rpc/format.js';
import { errorMessage } from '../shared/util/errors.js';
import type { ChainStore } from './chain-store.js';

export type PublicationStore = Pick<ChainStore, 'getBlock' | 'getBlockSize' | 'getReceipts' | 'getTotalDifficulty'>;

const NO_INTEREST: ChainSubscriptionInterest = { newHeads: false, newHeadsWithTransactions: false, logs: false };

/** What one publication needs, the union of the interested transports' wishes. */
function union(interests: Iterable<ChainSubscriptionInterest>): ChainSubscriptionInterest {
  const all = { ...NO_INTEREST };
  for (const interest of interests) {
    all.newHeads ||= interest.newHeads;
    all.newHeadsWithTransactions ||= interest.newHeadsWithTransactions;
    all.logs ||= interest.logs;
  }
  return all;
}

function wantsAnything(interest: ChainSubscriptionInterest): boolean {
  return interest.newHeads || interest.newHeadsWithTransactions || interest.logs;
}

export class BlockPublisher {
  private readonly interests = new Map<number, ChainSubscriptionInterest>();
  private queue: Promise<void> = Promise.resolve();

  /**
   * `emit(transport, event)` sends to transport number `transport` (the index of its channel).
   * `warn` reports a block that could not be published.
   */
  constructor(
    private readonly store: PublicationStore,
    private readonly emit: (transport: number, event: CanonicalBlocksEvent) => void,
    private readonly warn: (message: string) => void,
  ) {}

  /** What transport `transport`'s subscriptions need from now on. */
  setInterest(transport: number, interest: ChainSubscriptionInterest): void {
    if (wantsAnything(interest)) this.interests.set(transport, interest);
    else this.interests.delete(transport);
  }

  /** Queues the publication of a new head; heads are published one at a time, in order. */
  publish(event: NewHeadEvent): void {
    if (this.interests.size === 0) return;
    this.queue = this.queue.then(() =>
      this.publishNow(event).catch((err: unknown) => this.warn(`Could not publish block ${bytesToHex(event.head.hash)} to subscriptions: ${errorMessage(err)}`)),
    );
  }

  /** Resolves once every queued publication has gone out. */
  idle(): Promise<void> {
    return this.queue;
  }

  private async publishNow(event: NewHeadEvent): Promise<void> {
    // Read at publication time: a subscription made while earlier heads were published still gets this one.
    const targets = [...this.interests];
    if (targets.length === 0) return;
    const wanted = union(this.interests.values());
    const removed: PublishedBlock[] = [];
    for (const hash of event.removedBlocks) {
      const block = await this.blockOf(hash);
      removed.push({ number: block.header.number, logs: wanted.logs ? await this.logsOf(block, hash, true) : [] });
    }
    const added: PublishedBlock[] = [];
    for (const hash of event.addedBlocks) {
      // The head's total difficulty comes with the event; other added blocks' from the store.
      const isHead = equalsBytes(hash, event.head.hash);
      added.push(await this.publishedBlock(await this.blockOf(hash), hash, wanted, isHead ? event.head.totalDifficulty : undefined));
    }
    const published: CanonicalBlocksEvent = { removed, added };
    for (const [transport] of targets) this.emit(transport, published);
  }

  private async blockOf(hash: Uint8Array): Promise<Block> {
    const block = await this.store.getBlock(hash);
    if (block === undefined) throw new Error(`block ${bytesToHex(hash)} is not stored`);
    return block;
  }

  private async publishedBlock(block: Block, hash: Uint8Array, wanted: ChainSubscriptionInterest, knownTotalDifficulty?: bigint): Promise<PublishedBlock> {
    const published: PublishedBlock = { number: block.header.number, logs: wanted.logs ? await this.logsOf(block, hash, false) : [] };
    if (!wanted.newHeads && !wanted.newHeadsWithTransactions) return published;
    const totalDifficulty = knownTotalDifficulty ?? (await this.store.getTotalDifficulty(hash)) ?? 0n;
    const size = (await this.store.getBlockSize(hash)) ?? block.serialize().length;
    if (wanted.newHeads) published.header = JSON.stringify(formatBlock(block, { fullTransactions: false, hash, totalDifficulty, size }));
    if (wanted.newHeadsWithTransactions) {
      published.headerWithTransactions = JSON.stringify(formatBlock(block, { fullTransactions: true, hash, totalDifficulty, size }));
    }
    return published;
  }

  private async logsOf(block: Block, hash: Uint8Array, removed: boolean): Promise<PublishedLog[]> {
    const receipts: StoredReceipt[] = (await this.store.getReceipts(hash)) ?? [];
    const logs: PublishedLog[] = [];
    let logIndex = 0;
    receipts.forEach((receipt, txIndex) => {
      const txHash = block.transactions[txIndex]!.hash();
      for (const log of receipt.logs) {
        const location = {
          blockHash: hash,
          blockNumber: block.header.number,
          blockTimestamp: block.header.timestamp,
          txHash,
          txIndex,
          logIndex: logIndex++,
          removed,
        };
        logs.push({ address: log[0], topics: log[1], json: JSON.stringify(formatFilterLog(log, location)) });
      }
    });
    return logs;
  }
}
