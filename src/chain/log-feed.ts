/**
 * What the chain tells the log index (src/logindex/): after each new head, the blocks that joined the
 * canonical chain with their logs, read from the block and receipt caches the import has just filled;
 * and on the index's request, canonical blocks or hashes of a range (its catch-up) and any stored
 * block (a `blockHash` query for a block off the canonical chain). Feeds go out one head at a time, in
 * order, after the head is stored and announced.
 */
import type { Block } from '@ethereumjs/block';
import { bytesToHex } from '@ethereumjs/util';
import type { ChannelHandlers } from '../shared/actors/channel.js';
import type { LogIndexChain } from '../shared/actors/channels.js';
import type { BlockLog, CanonicalLogsEvent, IndexedBlock, NewHeadEvent } from '../shared/actors/messages.js';
import { errorMessage } from '../shared/util/errors.js';
import type { ChainStore } from './chain-store.js';

export type LogFeedStore = Pick<ChainStore, 'getBlock' | 'getReceipts' | 'getCanonicalHash'>;

export class LogFeed {
  private queue: Promise<void> = Promise.resolve();
  /** What the log index may ask. */
  readonly handlers: Omit<ChannelHandlers<LogIndexChain, 'chain'>, 'head'>;

  constructor(
    private readonly store: LogFeedStore,
    private readonly emit: (event: CanonicalLogsEvent) => void,
    private readonly warn: (message: string) => void,
  ) {
    this.handlers = {
      canonicalLogs: async ({ from, to }) => {
        const blocks: IndexedBlock[] = [];
        for (let n = from; n <= to; n++) {
          const hash = await store.getCanonicalHash(n);
          if (hash === undefined) break;
          blocks.push(await this.indexedBlock(hash));
        }
        return blocks;
      },
      canonicalHashes: async ({ from, to }) => {
        const hashes: Uint8Array[] = [];
        for (let n = from; n <= to; n++) {
          const hash = await store.getCanonicalHash(n);
          if (hash === undefined) break;
          hashes.push(hash);
        }
        return hashes;
      },
      blockLogs: async ({ hash }) => ((await store.getBlock(hash)) === undefined ? null : this.indexedBlock(hash)),
    };
  }

  /**
   * Queues the feed of a new head. A block that cannot be read is left out: the index sees the gap at
   * the next head and reads what it misses.
   */
  publish(event: NewHeadEvent): void {
    this.queue = this.queue.then(async () => {
      try {
        const added: IndexedBlock[] = [];
        for (const hash of event.addedBlocks) added.push(await this.indexedBlock(hash));
        this.emit({ added });
      } catch (err) {
        this.warn(`Could not send block ${bytesToHex(event.head.hash)} to the log index: ${errorMessage(err)}`);
      }
    });
  }

  /** Resolves once every queued feed has gone out. */
  idle(): Promise<void> {
    return this.queue;
  }

  private async indexedBlock(hash: Uint8Array): Promise<IndexedBlock> {
    const block = await this.store.getBlock(hash);
    if (block === undefined) throw new Error(`block ${bytesToHex(hash)} is not stored`);
    const receipts = (await this.store.getReceipts(hash)) ?? [];
    const logs: BlockLog[] = [];
    receipts.forEach((receipt, txIndex) => {
      for (const log of receipt.logs) logs.push({ log, txIndex });
    });
    return {
      number: block.header.number,
      hash,
      parentHash: block.header.parentHash,
      timestamp: block.header.timestamp,
      txHashes: logs.length === 0 ? [] : transactionHashes(block),
      logs,
    };
  }
}

function transactionHashes(block: Block): Uint8Array[] {
  return block.transactions.map((tx) => tx.hash());
}
