/**
 * The chain actor's core: what it answers on each of its channels and whom it tells about a new head.
 * No ports here — workers/chain.worker.ts opens the channels and hands them these handler tables.
 */
import { RLP } from '@ethereumjs/rlp';
import { Address, bytesToHex } from '@ethereumjs/util';
import type { ChannelHandlers } from '../shared/actors/channel.js';
import type { ConsensusChain, LogIndexChain, P2pChain, ReaderChain, TransportChain, TxPoolChain } from '../shared/actors/channels.js';
import type { CanonicalBlocksEvent, CanonicalLogsEvent, HeadInfo, NewHeadEvent } from '../shared/actors/messages.js';
import type { KnownSenderKeys } from './block-validation.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { serveMethodsAsJsonText } from '../shared/rpc/dispatch.js';
import type { JsonTextServer } from '../shared/rpc/dispatch.js';
import type { Logger } from '../shared/util/log.js';
import { bodiesFor, headersFor, importSyncedBlocks } from './block-serving.js';
import { BlockPublisher } from './block-publisher.js';
import { LogFeed } from './log-feed.js';
import type { Chain } from './chain.js';
import { importChecksFor } from './import-rules.js';
import type { ImportChecks } from './import-rules.js';
import { callOnState, headerSummaries, headerSummaryByHash } from './qbft-queries.js';
import { ChainRpc } from './rpc/chain-rpc.js';
import type { ChainRpcOptions } from './rpc/chain-rpc.js';
import type { BulkReads } from './rpc/bulk-reads.js';

export interface ChainActorOptions {
  rpc: Omit<ChainRpcOptions, 'pendingNonce'>;
  genesis: Genesis;
  /** The pool's next nonce for an address, for eth_getTransactionCount at `pending`. */
  pendingNonce(address: Uint8Array): Promise<bigint | null>;
  /** Told of every new head, once, after it is stored. */
  onNewHead(event: NewHeadEvent): void;
  /** Sender keys the pool already recovered, by transaction hash (null where unknown); see `Chain.validateBlock`. */
  knownSenderKeys?: KnownSenderKeys;
  /** Sends new canonical blocks to transport number `transport` (the index of its channel) for its subscriptions. */
  publishToTransport?(transport: number, event: CanonicalBlocksEvent): void;
  /** Sends each new head's added blocks with their logs to the log index. */
  publishLogs?(event: CanonicalLogsEvent): void;
  log: Logger;
}

/**
 * `bytes` in a buffer of its own, or null: a value RocksDB handed back may be a view of a larger
 * buffer, which posting to another thread would copy whole.
 */
function ownBytes(bytes: Uint8Array | undefined): Uint8Array | null {
  if (bytes === undefined) return null;
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

export class ChainActor {
  readonly txpool: ChannelHandlers<TxPoolChain, 'chain'>;
  readonly consensus: ChannelHandlers<ConsensusChain, 'chain'>;
  readonly p2p: ChannelHandlers<P2pChain, 'chain'>;
  /** What every state reader thread asks (src/reader/). */
  readonly reader: ChannelHandlers<ReaderChain, 'chain'>;
  readonly logIndex: ChannelHandlers<LogIndexChain, 'chain'>;
  /** The checks of blocks from peers, made on first use: `blocks import`'s. */
  private syncChecks: Promise<ImportChecks> | undefined;
  private readonly serveRpc: JsonTextServer;
  private readonly bulkReads: BulkReads;
  private readonly publisher: BlockPublisher;
  private readonly logFeed: LogFeed;

  constructor(
    private readonly chain: Chain,
    private readonly options: ChainActorOptions,
  ) {
    const rpc = new ChainRpc(chain, { ...options.rpc, pendingNonce: options.pendingNonce });
    this.serveRpc = serveMethodsAsJsonText('chain', rpc.handlers);
    this.reader = {
      stateValues: ({ keys }) => Promise.all(keys.map(async (key) => ownBytes(await chain.stateValue(key)))),
      block: async ({ ref }) => {
        const block = await rpc.blocks.blockByRef(ref);
        if (!block) return null;
        // A call needs the header only: the body goes as empty lists (the header's hash is the block's).
        return { hash: block.hash(), rlp: RLP.encode([block.header.raw(), [], [], ...(block.withdrawals === undefined ? [] : [[]])]) };
      },
      canonicalHash: async ({ number }) => (await chain.store.getCanonicalHash(number)) ?? null,
    };
    this.bulkReads = rpc.bulkReads;
    this.publisher = new BlockPublisher(chain.store, (transport, event) => options.publishToTransport?.(transport, event), (message) =>
      options.log.warn(message),
    );
    this.logFeed = new LogFeed(chain.store, (event) => options.publishLogs?.(event), (message) => options.log.warn(message));
    this.logIndex = { head: () => chain.getHead(), ...this.logFeed.handlers };
    this.txpool = {
      head: () => chain.getHead(),
      accounts: async ({ addresses }) => {
        const head = chain.getHead();
        const accounts = await chain.accountSnapshots(
          head.stateRoot,
          addresses.map((bytes) => new Address(bytes)),
        );
        return { head, accounts };
      },
    };
    this.consensus = {
      head: () => chain.getHead(),
      prebuild: async (request) => ({ included: await chain.prebuild(request) }),
      build: async (request) => {
        const built = await chain.buildBlock(request);
        return {
          number: built.block.header.number,
          hash: built.hash,
          rlp: built.rlp,
          txCount: built.block.transactions.length,
          executedAhead: built.executedAhead,
          gasUsed: built.block.header.gasUsed,
          rejected: built.rejected,
        };
      },
      discardBuilt: async () => {
        await chain.discardBuilt();
        return null;
      },
      importCommitted: async ({ rlp }) => {
        const event = await chain.importCommitted(rlp);
        if (event === undefined) {
          // Stored already (full sync was first) and announced then.
          const header = chain.spec.decodeHeaderOfBlock(rlp);
          return { number: header.number, hash: header.hash() };
        }
        this.announce(event);
        return { number: event.head.number, hash: event.head.hash };
      },
      // Only QBFT consensus asks: its blocks follow the QBFT rules (consensus checked the header already).
      validateProposal: ({ rlp }) => chain.validateBlock(rlp, { consensus: 'qbft' }, options.knownSenderKeys),
      headers: ({ from, to }) => headerSummaries(chain, from, to),
      headerByHash: ({ hash }) => headerSummaryByHash(chain, hash),
      call: ({ blockNumber, to, data }) => callOnState(chain, blockNumber, to, data),
    };
    this.p2p = {
      head: () => chain.getHead(),
      headers: (query) => headersFor(chain, query),
      bodies: ({ hashes }) => bodiesFor(chain, hashes),
      importSynced: async ({ blocks }) => {
        this.syncChecks ??= importChecksFor(chain, options.genesis, false);
        return importSyncedBlocks(chain, blocks, await this.syncChecks, (event) => this.announce(event));
      },
    };
  }

  head(): HeadInfo {
    return this.chain.getHead();
  }

  /** What transport number `index` may ask: its JSON-RPC calls, bulk reads (GraphQL), and what its subscriptions need. */
  transportHandlers(index: number): ChannelHandlers<TransportChain, 'chain'> {
    return {
      rpc: ({ method, params }) => this.serveRpc(method, params),
      ...this.bulkReads,
      subscriptionInterest: (interest) => {
        this.publisher.setInterest(index, interest);
        return null;
      },
    };
  }

  /** Resolves once the heads announced so far have been published to the transports and the log index. */
  async publicationsDone(): Promise<void> {
    await Promise.all([this.publisher.idle(), this.logFeed.idle()]);
  }

  private announce(event: NewHeadEvent): void {
    this.options.onNewHead(event);
    if (event.removedBlocks.length > 0) {
      const ancestor = event.head.number - BigInt(event.addedBlocks.length);
      this.options.log.info(
        `Chain re-org: ${event.removedBlocks.length} block(s) above #${ancestor} left the canonical chain (head was ${bytesToHex(event.removedBlocks[0]!)}), ${event.addedBlocks.length} joined`,
      );
    }
    this.logFeed.publish(event);
    this.publisher.publish(event);
    this.options.log.info(`Imported #${event.head.number} / ${event.includedTxHashes.length} tx / ${bytesToHex(event.head.hash)}`);
  }
}
