/**
 * The log index: follows the chain's canonical blocks into its own store (index-store.ts) and answers
 * which blocks of a range may hold a log matching addresses and topics without reading every block.
 *
 * Updates come from the chain: each new head's added blocks (applied at once when they attach to the
 * index's head), else a catch-up that finds where the index and the chain's canonical chain part
 * (after a crash, a re-org the events missed, a deleted store: nothing), takes the index back there
 * and reads the chain's blocks up to its head. Updates run one at a time, in order.
 *
 * Queries read one view: they wait until the index has reached the head the node has published (what
 * eth_blockNumber answers), then hold a read lock that keeps updates out until they are done.
 */
import { bytesToHex, equalsBytes } from '../shared/util/bytes.js';
import type { CanonicalLogsEvent, IndexedBlock } from '../shared/actors/messages.js';
import type { TopicFilter } from '../shared/rpc/params.js';
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { errorMessage } from '../shared/util/errors.js';
import { stemTextsOf, type BlockLogs, type IndexHead, type IndexStore } from './index-store.js';
import { addressStem, topicStem } from './index-schema.js';
import { ReadWriteLock } from './read-write-lock.js';

/** What the index asks of the chain (the logindex↔chain channel). */
export interface ChainLogSource {
  head(): Promise<IndexHead>;
  /** Canonical blocks `from..to` with their logs, stopping at the chain's head. */
  canonicalLogs(from: bigint, to: bigint): Promise<IndexedBlock[]>;
  /** Canonical hashes `from..to`, stopping at the chain's head. */
  canonicalHashes(from: bigint, to: bigint): Promise<Uint8Array[]>;
  /** Any block the chain holds, canonical or not. */
  blockLogs(hash: Uint8Array): Promise<IndexedBlock | null>;
}

export interface LogIndexOptions {
  source: ChainLogSource;
  /** The head the node has published (shared memory); null before the first one. */
  publishedHead(): IndexHead | null;
  log: { info(message: string): void; warn(message: string): void };
  /** How long a query waits for the index to reach the published head (default 10 s). */
  catchUpWaitMs?: number;
}

/** Blocks read from the chain per request while catching up. */
const CATCH_UP_BATCH = 256n;
/** Hashes compared per request while looking for where the index and the chain part. */
const ANCESTOR_BATCH = 64n;
/** A catch-up that keeps meeting re-orgs gives up after this many rounds; the next event starts over. */
const CATCH_UP_ROUNDS = 32;

/** What a log query needs of one view of the index. */
export interface IndexView {
  /** The highest indexed block; undefined for an empty index. */
  readonly head: IndexHead | undefined;
  hashAt(number: bigint): Promise<Uint8Array | undefined>;
  numberOf(hash: Uint8Array): Promise<bigint | undefined>;
  blockLogs(number: bigint): Promise<BlockLogs | undefined>;
  /** Numbers of the blocks of `from..to` that may hold a matching log, in order. */
  candidateBlocks(addresses: readonly Uint8Array[], topics: readonly TopicFilter[], from: bigint, to: bigint): Promise<bigint[]>;
  /** A block the index does not hold (off the canonical chain), from the chain. */
  blockFromChain(hash: Uint8Array): Promise<IndexedBlock | null>;
}

/** A log has at most four topics (LOG0..LOG4). */
const MAX_TOPICS = 4;
/** A range at most this long whose blocks are all in memory is matched there, without reading the database. */
const IN_MEMORY_RANGE = 1024n;

export class LogIndex {
  private updates: Promise<void> = Promise.resolve();
  private readonly lock = new ReadWriteLock();
  /** Woken at every change of the index's head. */
  private headChanged: { promise: Promise<void>; wake: () => void } = wakeable();
  /** Set at shutdown: updates not started are dropped, a catch-up stops after its current batch. */
  private stopped = false;
  readonly view: IndexView;

  constructor(
    private readonly store: IndexStore,
    private readonly options: LogIndexOptions,
  ) {
    this.view = {
      get head() {
        return store.head;
      },
      hashAt: (number) => store.hashAt(number),
      numberOf: (hash) => store.numberOf(hash),
      blockLogs: (number) => store.blockLogs(number),
      candidateBlocks: (addresses, topics, from, to) => this.candidateBlocks(addresses, topics, from, to),
      blockFromChain: (hash) => options.source.blockLogs(hash),
    };
  }

  get head(): IndexHead | undefined {
    return this.store.head;
  }

  /** Brings the index to the chain's head; resolves when that first catch-up is done. */
  start(): Promise<void> {
    return this.enqueue(() => this.catchUp());
  }

  /** The chain's blocks of a new head. */
  onCanonicalLogs(event: CanonicalLogsEvent): Promise<void> {
    return this.enqueue(() => this.applyAdded(event.added));
  }

  /** Resolves once every update received so far is applied. */
  idle(): Promise<void> {
    return this.updates;
  }

  /** Stops taking updates; resolves once the one in progress has stopped. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.updates;
  }

  /** Runs `query` on one view of the index, once the index holds the head the node has published. */
  async read<T>(query: (view: IndexView) => Promise<T>): Promise<T> {
    await this.reachPublishedHead();
    return this.lock.read(() => query(this.view));
  }

  private enqueue(update: () => Promise<void>): Promise<void> {
    this.updates = this.updates.then(() => (this.stopped ? undefined : update())).catch((err: unknown) => this.options.log.warn(`Log index update failed: ${errorMessage(err)}`));
    return this.updates;
  }

  private async reachPublishedHead(): Promise<void> {
    const deadline = Date.now() + (this.options.catchUpWaitMs ?? 10_000);
    for (;;) {
      const published = this.options.publishedHead();
      const head = this.store.head;
      const reached =
        published === null ||
        (head !== undefined && (head.number > published.number || (head.number === published.number && equalsBytes(head.hash, published.hash))));
      if (reached) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new RpcError(RpcErrors.LOG_INDEX_BEHIND, `indexed up to #${head?.number ?? -1n}, chain head #${published.number}`);
      const waiting = this.headChanged.promise;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([waiting, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  }

  private async changeHead(change: () => Promise<void>): Promise<void> {
    await this.lock.write(change);
    const { wake } = this.headChanged;
    this.headChanged = wakeable();
    wake();
  }

  private async applyAdded(added: readonly IndexedBlock[]): Promise<void> {
    let first = 0;
    while (first < added.length && (await this.holds(added[first]!))) first++;
    const rest = added.slice(first);
    if (rest.length === 0) return;
    const parentNumber = rest[0]!.number - 1n;
    const parentHash = parentNumber < 0n ? undefined : await this.store.hashAt(parentNumber);
    if (parentNumber >= 0n && (parentHash === undefined || !equalsBytes(parentHash, rest[0]!.parentHash))) {
      // The index is behind (or on another branch) where this head attaches: read what it misses.
      return this.catchUp();
    }
    await this.changeHead(async () => {
      await this.store.rewindTo(parentNumber);
      await this.store.append(rest);
    });
  }

  private async holds(block: IndexedBlock): Promise<boolean> {
    const hash = await this.store.hashAt(block.number);
    return hash !== undefined && equalsBytes(hash, block.hash);
  }

  /** Takes the index back to where it meets the chain's canonical chain, then reads blocks up to the chain's head. */
  private async catchUp(): Promise<void> {
    const started = Date.now();
    const startNumber = this.store.nextNumber;
    for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
      const target = await this.options.source.head();
      const ancestor = await this.commonAncestor(target.number);
      const head = this.store.head;
      if (head !== undefined && ancestor < head.number) {
        this.options.log.info(`Log index: ${head.number - ancestor} block(s) above #${ancestor} are no longer canonical, taking them off`);
        await this.changeHead(() => this.store.rewindTo(ancestor));
      }
      if (await this.readUpTo(target.number)) {
        const read = this.store.nextNumber - startNumber;
        if (read > CATCH_UP_BATCH) this.options.log.info(`Log index: caught up with the chain at #${target.number} (${read} blocks read in ${Date.now() - started} ms)`);
        return;
      }
    }
    throw new Error(`could not catch up with the chain in ${CATCH_UP_ROUNDS} rounds (it kept re-organising)`);
  }

  /** Reads canonical blocks up to `target`; false when the chain's canonical chain moved away meanwhile. */
  private async readUpTo(target: bigint): Promise<boolean> {
    while (this.store.nextNumber <= target && !this.stopped) {
      const from = this.store.nextNumber;
      const to = from + CATCH_UP_BATCH - 1n < target ? from + CATCH_UP_BATCH - 1n : target;
      const blocks = await this.options.source.canonicalLogs(from, to);
      const attached = attachedPrefix(this.store.head, blocks);
      if (attached.length > 0) await this.changeHead(() => this.store.append(attached));
      if (attached.length < blocks.length || blocks.length === 0) return false;
    }
    return true;
  }

  /** The highest block number where the index and the chain hold the same block; -1 when none. */
  private async commonAncestor(chainHead: bigint): Promise<bigint> {
    const head = this.store.head;
    if (head === undefined) return -1n;
    let top = head.number < chainHead ? head.number : chainHead;
    while (top >= 0n) {
      const from = top - ANCESTOR_BATCH + 1n > 0n ? top - ANCESTOR_BATCH + 1n : 0n;
      const theirs = await this.options.source.canonicalHashes(from, top);
      for (let n = top; n >= from; n--) {
        const ours = await this.store.hashAt(n);
        const their = theirs[Number(n - from)];
        if (ours !== undefined && their !== undefined && equalsBytes(ours, their)) return n;
      }
      top = from - 1n;
    }
    return -1n;
  }

  /**
   * The blocks of `from..to` whose index entries name every constrained part of the filter: one of the
   * addresses, and at each topic position with a list, one of its topics. Empty lists and null positions
   * constrain nothing the index can use; matching the logs themselves decides.
   */
  private async candidateBlocks(addresses: readonly Uint8Array[], topics: readonly TopicFilter[], from: bigint, to: bigint): Promise<bigint[]> {
    if (from > to) return [];
    // Each group: the stems of which a matching block has at least one.
    const groups: Uint8Array[][] = [];
    if (addresses.length > 0) groups.push(addresses.map(addressStem));
    for (let position = 0; position < topics.length; position++) {
      const wanted = topics[position];
      if (wanted === null || wanted === undefined) continue;
      if (position >= MAX_TOPICS) return [];
      if (wanted.length > 0) groups.push(wanted.map((topic) => topicStem(position, topic)));
    }
    return this.candidatesInMemory(groups, from, to) ?? this.candidatesInStore(groups, from, to);
  }

  /** The candidates of a short range whose blocks are all in memory; undefined otherwise. */
  private candidatesInMemory(groups: readonly Uint8Array[][], from: bigint, to: bigint): bigint[] | undefined {
    if (to - from >= IN_MEMORY_RANGE) return undefined;
    const blocks: BlockLogs[] = [];
    for (let n = from; n <= to; n++) {
      const block = this.store.cachedBlock(n);
      if (block === undefined) return undefined;
      blocks.push(block);
    }
    const wanted = groups.map((group) => group.map((stem) => bytesToHex(stem)));
    return blocks
      .filter((block) => {
        if (block.logs.length === 0) return false;
        const stems = stemTextsOf(block);
        return wanted.every((group) => group.some((stem) => stems.has(stem)));
      })
      .map((block) => block.number);
  }

  private async candidatesInStore(groups: readonly Uint8Array[][], from: bigint, to: bigint): Promise<bigint[]> {
    if (groups.length === 0) return this.store.blocksWithLogs(from, to);
    let found: Set<bigint> | undefined;
    for (const group of groups) {
      const union = new Set<bigint>();
      for (const numbers of await Promise.all(group.map((stem) => this.store.blocksWithStem(stem, from, to)))) {
        for (const number of numbers) if (found === undefined || found.has(number)) union.add(number);
      }
      found = union;
      if (found.size === 0) return [];
    }
    return [...found!].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** The leading blocks of `blocks` that follow `head` and each other. */
function attachedPrefix(head: IndexHead | undefined, blocks: readonly IndexedBlock[]): IndexedBlock[] {
  const attached: IndexedBlock[] = [];
  let parent = head;
  for (const block of blocks) {
    if (parent !== undefined && (block.number !== parent.number + 1n || !equalsBytes(block.parentHash, parent.hash))) break;
    attached.push(block);
    parent = { number: block.number, hash: block.hash };
  }
  return attached;
}

function wakeable(): { promise: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const promise = new Promise<void>((resolve) => (wake = resolve));
  return { promise, wake };
}

export function describeHead(head: IndexHead | undefined): string {
  return head === undefined ? 'empty' : `#${head.number} ${bytesToHex(head.hash)}`;
}
