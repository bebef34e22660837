/**
 * Full sync over eth/68: learns how far each peer's chain reaches (its Status best hash, NewBlock and
 * NewBlockHashes announcements), and while some peer is ahead fetches the next headers and bodies
 * from it and hands the blocks to the chain, which checks them as `blocks import` does (QBFT: the
 * commit seals against the validators it recorded). A validator that missed a round, or a node that
 * joins a running network, catches up this way; QBFT then carries on from the new head. A peer whose
 * chain leaves ours below our head and outweighs it (Besu's fork choice, total difficulty: on QBFT,
 * where every block weighs 1, the longer chain) is followed back to the common ancestor and its branch
 * imported from there, which makes the chain switch branches (a re-org).
 * Pure logic: requests go out through `SyncIo`, time comes from the caller's ticks.
 */
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { RLP } from '@ethereumjs/rlp';
import { bytesToBigInt, equalsBytes } from '@ethereumjs/util';
import { errorMessage } from '../shared/util/errors.js';
import type { ChainHeadFacts } from './p2p-service.js';

/** eth/68 message codes (relative to the eth protocol's offset). */
export const EthCode = {
  NewBlockHashes: 0x01,
  Transactions: 0x02,
  GetBlockHeaders: 0x03,
  BlockHeaders: 0x04,
  GetBlockBodies: 0x05,
  BlockBodies: 0x06,
  NewBlock: 0x07,
  NewPooledTransactionHashes: 0x08,
  GetPooledTransactions: 0x09,
  PooledTransactions: 0x0a,
  GetReceipts: 0x0f,
  Receipts: 0x10,
} as const;

/** Headers asked for per request: what Besu's full sync asks for at a time. */
export const HEADERS_PER_REQUEST = 64;

/** What the chain does for sync: the serving side answers peers, `importBlocks` stores theirs. */
export interface SyncChain {
  headers(query: { origin: bigint | Uint8Array; amount: number; skip: number; reverse: boolean }): Promise<Uint8Array[]>;
  bodies(hashes: Uint8Array[]): Promise<Uint8Array[]>;
  importBlocks(blocks: Uint8Array[]): Promise<{ imported: number; head: ChainHeadFacts; error?: string }>;
}

export interface SyncIo {
  /** Sends a request to a peer and resolves with the answer's payload (without the request id). */
  request(peer: string, code: number, payload: unknown[]): Promise<NestedUint8Array>;
  head(): ChainHeadFacts;
  /** The chain's block hash of a header (QBFT hashes the header without its commit seals). */
  blockHash(header: Uint8Array[]): Uint8Array;
  setHead(head: ChainHeadFacts): void;
  log(message: string, level?: 'debug' | 'info' | 'warn'): void;
}

/** What a peer's chain is known to reach: the number of its best block, and its total difficulty when told. */
interface PeerHead {
  number: bigint;
  /** From Status or NewBlock; unknown after a NewBlockHashes announcement of a later block. */
  totalDifficulty?: bigint;
}

/** A block of the chain by number and hash. */
interface BlockRef {
  number: bigint;
  hash: Uint8Array;
}

export class BlockSync {
  /** The best block each peer is known to have. */
  private readonly peerHeads = new Map<string, PeerHead>();
  private running = false;

  constructor(
    private readonly chain: SyncChain,
    private readonly io: SyncIo,
  ) {}

  /** A peer has block `number` (an announcement, or its Status best block), with the chain's total difficulty there when known. */
  notePeerHead(peer: string, number: bigint, totalDifficulty?: bigint): void {
    const known = this.peerHeads.get(peer);
    if (known === undefined || number > known.number) this.peerHeads.set(peer, totalDifficulty === undefined ? { number } : { number, totalDifficulty });
    else if (number === known.number && totalDifficulty !== undefined) known.totalDifficulty = totalDifficulty;
  }

  peerGone(peer: string): void {
    this.peerHeads.delete(peer);
  }

  /** The highest block any peer is known to have (eth_syncing's highestBlock). */
  get highestKnown(): bigint {
    let highest = this.io.head().number;
    for (const { number } of this.peerHeads.values()) if (number > highest) highest = number;
    return highest;
  }

  get syncing(): boolean {
    return this.running;
  }

  /** Learns the number of a peer's Status best block by asking for its header. */
  async learnPeerHead(peer: string, bestHash: Uint8Array, totalDifficulty?: bigint): Promise<void> {
    try {
      const headers = await this.io.request(peer, EthCode.GetBlockHeaders, [bestHash, 1, 0, 0]);
      const header = headers[0];
      if (!isHeader(header) || !equalsBytes(this.io.blockHash(header), bestHash)) return;
      this.notePeerHead(peer, numberOf(header), totalDifficulty);
    } catch (err) {
      this.io.log(`Could not read the best block of peer ${peer.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
    }
  }

  /**
   * One round of sync when some peer is ahead and no round runs; answers whether blocks were imported.
   * A peer is ahead when its chain is longer, or heavier (Besu's fork choice: total difficulty) though
   * not longer.
   */
  async step(): Promise<boolean> {
    if (this.running) return false;
    const head = this.io.head();
    let peer: string | undefined;
    let target: PeerHead | undefined;
    for (const [id, known] of this.peerHeads) {
      const ahead = known.number > head.number || (known.totalDifficulty !== undefined && known.totalDifficulty > head.totalDifficulty);
      if (ahead && (target === undefined || known.number > target.number)) [peer, target] = [id, known];
    }
    if (peer === undefined || target === undefined) return false;
    this.running = true;
    try {
      return await this.fetchAndImport(peer, head, target);
    } catch (err) {
      // A peer that times out or answers nonsense is not asked again until it announces a block.
      this.peerHeads.delete(peer);
      this.io.log(`Sync from peer ${peer.slice(0, 16)}… failed: ${errorMessage(err)}`, 'debug');
      return false;
    } finally {
      this.running = false;
    }
  }

  private async fetchAndImport(peer: string, head: ChainHeadFacts, target: PeerHead): Promise<boolean> {
    if (target.number > head.number) {
      const headers = await this.headersFrom(peer, head.number + 1n, target.number);
      if (headers.length === 0) {
        // The peer no longer has what it announced (or never had): forget the claim.
        this.settleClaim(peer, head);
        return false;
      }
      if (equalsBytes(parentHashOf(headers[0]!), head.hash)) return (await this.importRun(peer, headers, head)).imported > 0;
    }
    return this.importBranch(peer, head, target);
  }

  /**
   * The peer's chain leaves ours at or below our head: finds where (the common ancestor) and imports
   * the peer's branch from there. The chain stores the branch's blocks beside the canonical chain and
   * switches to it (a re-org) at the first block whose total difficulty exceeds our head's; a branch
   * that never does stays a side branch, and the peer is no longer taken as ahead.
   */
  private async importBranch(peer: string, head: ChainHeadFacts, target: PeerHead): Promise<boolean> {
    const ancestor = await this.commonAncestor(peer, target.number < head.number ? target.number : head.number);
    this.io.log(`Peer ${peer.slice(0, 16)}… is on another branch from block #${ancestor.number + 1n}: importing it (its head #${target.number})`);
    let parent = ancestor;
    let imported = 0;
    let current = head;
    while (parent.number < target.number) {
      const headers = await this.headersFrom(peer, parent.number + 1n, target.number);
      if (headers.length === 0) break;
      if (!equalsBytes(parentHashOf(headers[0]!), parent.hash)) throw new Error('headers do not link to the common ancestor');
      const run = await this.importRun(peer, headers, parent);
      imported += run.imported;
      current = run.head;
      if (run.refused) return imported > 0;
      parent = run.last;
    }
    if (!equalsBytes(current.hash, parent.hash)) {
      this.io.log(`Peer ${peer.slice(0, 16)}…'s branch does not outweigh ours: kept beside the canonical chain`, 'debug');
      this.settleClaim(peer, current);
    }
    return imported > 0;
  }

  /**
   * The newest block the peer's chain shares with ours at or below `top`: first among the `top`
   * window of headers, then by bisection below it (the genesis is always shared: Status checked it).
   */
  private async commonAncestor(peer: string, top: bigint): Promise<BlockRef> {
    const count = top + 1n < BigInt(HEADERS_PER_REQUEST) ? top + 1n : BigInt(HEADERS_PER_REQUEST);
    const theirs = await this.io.request(peer, EthCode.GetBlockHeaders, [top, Number(count), 0, 1]);
    const ours = await this.chain.headers({ origin: top, amount: Number(count), skip: 0, reverse: true });
    for (const [i, header] of theirs.entries()) {
      if (!isHeader(header) || numberOf(header) !== top - BigInt(i)) throw new Error('malformed or unordered headers');
      const hash = this.io.blockHash(header);
      const our = ours[i];
      if (our !== undefined && equalsBytes(this.io.blockHash(RLP.decode(our) as Uint8Array[]), hash)) return { number: top - BigInt(i), hash };
    }
    let shared = 0n;
    let differs = top + 1n - count;
    while (differs - shared > 1n) {
      const middle = (shared + differs) / 2n;
      if (await this.sameBlockAt(peer, middle)) shared = middle;
      else differs = middle;
    }
    const [genesisOrShared] = await this.chain.headers({ origin: shared, amount: 1, skip: 0, reverse: false });
    if (genesisOrShared === undefined) throw new Error(`our block #${shared} is missing`);
    return { number: shared, hash: this.io.blockHash(RLP.decode(genesisOrShared) as Uint8Array[]) };
  }

  private async sameBlockAt(peer: string, number: bigint): Promise<boolean> {
    const [theirs] = await this.io.request(peer, EthCode.GetBlockHeaders, [number, 1, 0, 0]);
    const [ours] = await this.chain.headers({ origin: number, amount: 1, skip: 0, reverse: false });
    if (!isHeader(theirs) || numberOf(theirs) !== number) throw new Error(`no header #${number} in the answer`);
    return ours !== undefined && equalsBytes(this.io.blockHash(RLP.decode(ours) as Uint8Array[]), this.io.blockHash(theirs));
  }

  /** Up to a request's worth of the peer's headers from `from` on (not past `last`), checked for order. */
  private async headersFrom(peer: string, from: bigint, last: bigint): Promise<Uint8Array[][]> {
    const amount = last - from + 1n < BigInt(HEADERS_PER_REQUEST) ? last - from + 1n : BigInt(HEADERS_PER_REQUEST);
    const headers = await this.io.request(peer, EthCode.GetBlockHeaders, [from, Number(amount), 0, 0]);
    return headers.map((header, i) => {
      if (!isHeader(header)) throw new Error('malformed header');
      if (numberOf(header) !== from + BigInt(i)) throw new Error('headers out of order');
      return header;
    });
  }

  /**
   * Fetches the bodies of `headers` (a run whose first block's parent is `parent`) and hands the
   * blocks to the chain. Answers what the chain imported and the block the run ends with.
   */
  private async importRun(
    peer: string,
    headers: Uint8Array[][],
    parent: BlockRef,
  ): Promise<{ imported: number; refused: boolean; head: ChainHeadFacts; last: BlockRef }> {
    const hashes: Uint8Array[] = [];
    let parentHash = parent.hash;
    for (const header of headers) {
      if (!equalsBytes(parentHashOf(header), parentHash)) throw new Error('headers do not link');
      parentHash = this.io.blockHash(header);
      hashes.push(parentHash);
    }
    const bodies: NestedUint8Array[] = [];
    while (bodies.length < hashes.length) {
      const answer = await this.io.request(peer, EthCode.GetBlockBodies, hashes.slice(bodies.length));
      if (answer.length === 0) throw new Error('no block bodies in the answer');
      for (const body of answer) {
        if (!Array.isArray(body)) throw new Error('malformed block body');
        bodies.push(body);
      }
    }
    const blocks = headers.map((header, i) => RLP.encode([header, ...(bodies[i] as NestedUint8Array)] as NestedUint8Array));
    const result = await this.chain.importBlocks(blocks);
    if (result.imported > 0) this.io.setHead(result.head);
    if (result.error !== undefined) {
      this.settleClaim(peer, result.head);
      this.io.log(`Block from peer ${peer.slice(0, 16)}… refused: ${result.error}`, 'warn');
    }
    const last = { number: numberOf(headers[headers.length - 1]!), hash: parentHash };
    return { imported: result.imported, refused: result.error !== undefined, head: result.head, last };
  }

  /** Takes the peer as no further ahead than `head` until it announces a later block. */
  private settleClaim(peer: string, head: ChainHeadFacts): void {
    this.peerHeads.set(peer, { number: head.number, totalDifficulty: head.totalDifficulty });
  }
}

/** The parent hash field (index 0) of a header in RLP list form. */
function parentHashOf(header: Uint8Array[]): Uint8Array {
  return header[0]!;
}

/** The number field (index 8) of a header in RLP list form. */
export function numberOf(header: NestedUint8Array): bigint {
  const field = header[8];
  if (!(field instanceof Uint8Array)) throw new Error('malformed header number');
  return bytesToBigInt(field);
}

/** A header in RLP list form: at least the 15 fields of Frontier, each a byte string. */
function isHeader(item: Uint8Array | NestedUint8Array | undefined): item is Uint8Array[] {
  return Array.isArray(item) && item.length >= 15 && item.every((field) => field instanceof Uint8Array);
}

