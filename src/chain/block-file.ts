/**
 * A `blocks import` file: blocks as RLP lists written one after another (the format of Besu's and
 * geth's `export`/`import`, and of Besu's hive `testBlockchain.blocks`). Splitting needs only each
 * item's length prefix, so a whole file is cut into blocks without decoding any of them.
 */

/** A file that is not a sequence of whole RLP lists; `offset` is where the bad item starts. */
export class BlockFileError extends Error {
  constructor(
    readonly offset: number,
    readonly blockIndex: number,
    readonly reason: string,
  ) {
    super(`block at position ${blockIndex} of the file (byte offset ${offset}): ${reason}`);
  }
}

/** Where one encoded block sits in the file. */
export interface BlockSlice {
  /** Position of the block in the file, counting from 0. */
  index: number;
  offset: number;
  bytes: Uint8Array;
}

/**
 * The length of the RLP list starting at `offset` (prefix included), or a reason it is not one.
 * Only lists can be blocks: a string item at top level is as malformed as a cut-off list.
 */
function listLengthAt(data: Uint8Array, offset: number): number | string {
  const first = data[offset]!;
  if (first < 0xc0) return `expected an RLP list, found a string item (prefix 0x${first.toString(16).padStart(2, '0')})`;
  if (first <= 0xf7) return 1 + (first - 0xc0);
  const lengthOfLength = first - 0xf7;
  if (offset + 1 + lengthOfLength > data.length) return 'truncated RLP list prefix';
  if (data[offset + 1] === 0) return 'non-canonical RLP list length (leading zero)';
  let length = 0;
  for (let i = 0; i < lengthOfLength; i++) length = length * 256 + data[offset + 1 + i]!;
  if (length < 56) return 'non-canonical RLP list length (long form for a short list)';
  return 1 + lengthOfLength + length;
}

/**
 * Cuts `data` into its top-level RLP lists. Throws {@link BlockFileError} at the first item that is
 * not a list or does not end within the file, so that a truncated file is reported, not guessed at.
 */
export function* splitBlocks(data: Uint8Array): Generator<BlockSlice> {
  let offset = 0;
  let index = 0;
  while (offset < data.length) {
    const length = listLengthAt(data, offset);
    if (typeof length === 'string') throw new BlockFileError(offset, index, length);
    if (offset + length > data.length) {
      throw new BlockFileError(
        offset,
        index,
        `truncated RLP: the block needs ${length} bytes but the file ends after ${data.length - offset}`,
      );
    }
    yield { index, offset, bytes: data.subarray(offset, offset + length) };
    offset += length;
    index++;
  }
}

/** How many whole blocks a file holds before its end or its first malformed item (for progress). */
export function countWholeBlocks(data: Uint8Array): number {
  let count = 0;
  try {
    for (const _slice of splitBlocks(data)) count++;
  } catch (err) {
    if (!(err instanceof BlockFileError)) throw err;
  }
  return count;
}
