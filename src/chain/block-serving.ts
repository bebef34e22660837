/**
 * What the chain gives and takes for devp2p block sync: canonical headers and bodies as eth/68
 * GetBlockHeaders / GetBlockBodies ask for them, and a batch of blocks from a peer imported through
 * the same checks as `blocks import` (header and body rules, QBFT commit seals, execution).
 */
import { RLP } from '@ethereumjs/rlp';
import { equalsBytes } from '@ethereumjs/util';
import { errorMessage } from '../shared/util/errors.js';
import type { Input } from '@ethereumjs/rlp';
import type { HeaderQuery, NewHeadEvent, SyncImportResult } from '../shared/actors/messages.js';
import type { Chain } from './chain.js';
import { importBlocks } from './block-importer.js';
import type { ImportChecks } from './import-rules.js';

/** Besu's defaults for the largest answers it serves (`--Xeth-max-headers`-style limits). */
export const MAX_HEADERS_SERVED = 192;
export const MAX_BODIES_SERVED = 128;

/** RLP of the canonical headers the query names, stopping at the first one the chain lacks. */
export async function headersFor(chain: Chain, query: HeaderQuery): Promise<Uint8Array[]> {
  let start: bigint;
  if (typeof query.origin === 'bigint') {
    start = query.origin;
  } else {
    const block = await chain.store.getBlock(query.origin);
    if (!block) return [];
    const canonical = await chain.store.getCanonicalHash(block.header.number);
    // Only the canonical chain is served: a side block's descendants by number would be another chain's.
    if (!canonical || !equalsBytes(canonical, query.origin)) return query.amount === 1 ? [block.header.serialize()] : [];
    start = block.header.number;
  }
  const amount = Math.min(Math.max(query.amount, 0), MAX_HEADERS_SERVED);
  const step = BigInt(query.skip + 1) * (query.reverse ? -1n : 1n);
  const head = chain.getHead().number;
  const headers: Uint8Array[] = [];
  for (let i = 0, number = start; i < amount && number >= 0n && number <= head; i++, number += step) {
    const block = await chain.store.getBlockByNumber(number);
    if (!block) break;
    headers.push(block.header.serialize());
  }
  return headers;
}

/** RLP of each known block's body ([transactions, ommers, withdrawals?]); unknown hashes are left out. */
export async function bodiesFor(chain: Chain, hashes: Uint8Array[]): Promise<Uint8Array[]> {
  const bodies: Uint8Array[] = [];
  for (const hash of hashes.slice(0, MAX_BODIES_SERVED)) {
    const block = await chain.store.getBlock(hash);
    if (block) bodies.push(RLP.encode(block.raw().slice(1) as Input));
  }
  return bodies;
}

/**
 * Imports blocks from a peer in order, as `blocks import` does: on the head, or on a stored block of
 * another branch, which becomes the canonical chain once it outweighs the head (a re-org, announced
 * like any new head). Blocks already stored are skipped. Stops at the first bad block and keeps the
 * ones before it.
 */
export async function importSyncedBlocks(
  chain: Chain,
  blocks: Uint8Array[],
  checks: ImportChecks,
  onImported: (event: NewHeadEvent) => void,
): Promise<SyncImportResult> {
  let imported = 0;
  try {
    await importBlocks(
      chain,
      blocks.map((bytes, index) => ({ index, offset: 0, bytes })),
      {
        ...checks,
        total: blocks.length,
        onImported: (event) => {
          imported++;
          onImported(event);
        },
        onForkBlock: () => imported++,
      },
    );
    return { imported, head: chain.getHead() };
  } catch (err) {
    // An ImportFailure's message names the block and the reason.
    return { imported, head: chain.getHead(), error: errorMessage(err) };
  }
}
