/**
 * Full sync over eth/68: learns how far each peer's chain reaches (its Status best hash, NewBlock and
 * NewBlockHashes announcements), and while some peer is ahead fetches the next headers and bodies
 * from it and hands the blocks to the chain, which checks them as `blocks import` does (QBFT: the
 * commit seals against the validators it recorded). A validator that missed a round, or a node that
 * joins a running network, catches up this way; QBFT then carries on from the new head.
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

export class BlockSync {
  /** The highest block number each peer is known to have. */
  private readonly peerHeads = new Map<string, bigint>();
  private running = false;

  constructor(
    private readonly chain: SyncChain,
    private readonly io: SyncIo,
  ) {}

  /** A peer has block `number` (an announcement, or its Status best block). */
  notePeerHead(peer: string, number: bigint): void {
    if (number > (this.peerHeads.get(peer) ?? -1n)) this.peerHeads.set(peer, number);
  }

  peerGone(peer: string): void {
    this.peerHeads.delete(peer);
  }

  /** The highest block any peer is known to have (eth_syncing's highestBlock). */
  get highestKnown(): bigint {
    let highest = this.io.head().number;
    for (const number of this.peerHeads.values()) if (number > highest) highest = number;
    return highest;
  }

  get syncing(): boolean {
    return this.running;
  }

  /** Learns the number of a peer's Status best block by asking for its header. */
  async learnPeerHead(peer: string, bestHash: Uint8Array): Promise<void> {
    try {
      const headers = await this.io.request(peer, EthCode.GetBlockHeaders, [bestHash, 1, 0, 0]);
      const header = headers[0];
      if (!isHeader(header) || !equalsBytes(this.io.blockHash(header), bestHash)) return;
      this.notePeerHead(peer, numberOf(header));
    } catch (err) {
      this.io.log(`Could not read the best block of peer ${peer.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
    }
  }

  /** One round of sync when some peer is ahead and no round runs; answers whether blocks were imported. */
  async step(): Promise<boolean> {
    if (this.running) return false;
    const head = this.io.head();
    let peer: string | undefined;
    let best = head.number;
    for (const [id, number] of this.peerHeads) {
      if (number > best) [peer, best] = [id, number];
    }
    if (peer === undefined) return false;
    this.running = true;
    try {
      return await this.fetchAndImport(peer, head, best);
    } catch (err) {
      // A peer that times out or answers nonsense is not asked again until it announces a block.
      this.peerHeads.delete(peer);
      this.io.log(`Sync from peer ${peer.slice(0, 16)}… failed: ${errorMessage(err)}`, 'debug');
      return false;
    } finally {
      this.running = false;
    }
  }

  private async fetchAndImport(peer: string, head: ChainHeadFacts, best: bigint): Promise<boolean> {
    const amount = Number(best - head.number < BigInt(HEADERS_PER_REQUEST) ? best - head.number : BigInt(HEADERS_PER_REQUEST));
    const headers = await this.io.request(peer, EthCode.GetBlockHeaders, [head.number + 1n, amount, 0, 0]);
    if (headers.length === 0) {
      // The peer no longer has what it announced (or never had): forget the claim.
      this.peerHeads.set(peer, head.number);
      return false;
    }
    const hashes: Uint8Array[] = [];
    let parentHash = head.hash;
    for (const [i, header] of headers.entries()) {
      if (!isHeader(header)) throw new Error('malformed header');
      if (numberOf(header) !== head.number + 1n + BigInt(i)) throw new Error('headers out of order');
      if (!(header[0] instanceof Uint8Array) || !equalsBytes(header[0], parentHash)) {
        if (i === 0) {
          // The peer's chain leaves ours below our head: QBFT finality rules out reorgs, so it is another chain.
          this.peerHeads.set(peer, head.number);
          this.io.log(`Peer ${peer.slice(0, 16)}… has block ${head.number + 1n} on another parent than our head`, 'warn');
          return false;
        }
        throw new Error('headers do not link');
      }
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
      this.peerHeads.set(peer, result.head.number);
      this.io.log(`Block from peer ${peer.slice(0, 16)}… refused: ${result.error}`, 'warn');
    }
    return result.imported > 0;
  }
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

