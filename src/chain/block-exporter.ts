/**
 * `blocks export`: canonical blocks of a range written one after another as RLP, the format
 * `blocks import` reads (block-file.ts). The bytes are those stored, so a block comes out exactly as
 * it was imported or built, without being decoded and encoded again.
 */

/** What the exporter reads of a chain. */
export interface ExportSource {
  readonly head: bigint;
  canonicalBlockRlp(blockNumber: bigint): Promise<Uint8Array | undefined>;
}

/** Besu's range: from `start` (inclusive) to `end` (exclusive); no `end` means through the chain head. */
export interface ExportRange {
  readonly start: bigint;
  readonly end?: bigint;
}

export interface ExportSummary {
  readonly exported: number;
  readonly bytes: number;
  readonly first: bigint;
  /** The last block written. */
  readonly last: bigint;
}

/** A range the chain cannot serve at all. */
export class ExportRangeError extends Error {}

/** The blocks `range` names on a chain whose head is `head`: [first, end), cut at the head. */
export interface ExportPlan {
  readonly first: bigint;
  readonly end: bigint;
  /** The requested end when it lay beyond the chain head (Besu exports what there is and warns). */
  readonly cutAtHead?: bigint;
}

/** Checks `range` against the chain before anything is written. */
export function planExport(head: bigint, range: ExportRange): ExportPlan {
  if (range.start > head) throw new ExportRangeError(`Start block ${range.start} is beyond the chain head #${head}: there is nothing to export`);
  const requestedEnd = range.end ?? head + 1n;
  if (requestedEnd <= head + 1n) return { first: range.start, end: requestedEnd };
  return { first: range.start, end: head + 1n, cutAtHead: requestedEnd };
}

/** Writes the planned blocks in order through `write`; resolves when the last one is written. */
export async function exportBlocks(source: ExportSource, plan: ExportPlan, write: (rlp: Uint8Array) => void): Promise<ExportSummary> {
  let bytes = 0;
  for (let number = plan.first; number < plan.end; number++) {
    const rlp = await source.canonicalBlockRlp(number);
    // The canonical index holds every number up to the head: a gap is a damaged database.
    if (rlp === undefined) throw new Error(`The database has no canonical block #${number} below its head #${source.head}`);
    write(rlp);
    bytes += rlp.length;
  }
  return { exported: Number(plan.end - plan.first), bytes, first: plan.first, last: plan.end - 1n };
}
