/**
 * Snappy's raw block format, which devp2p (p2p version >= 5) uses for every message after Hello.
 *
 * Decompression accepts everything a snappy encoder may write (literals and the three copy forms).
 * Compression uses a small greedy matcher (4-byte hash, one candidate per bucket): the messages
 * devp2p carries are short and mostly incompressible hashes and signatures, so a thorough matcher
 * would buy little. Any valid snappy stream is accepted by every decoder, Besu's included.
 */

/** Besu and devp2p refuse messages whose uncompressed size reaches 16 MiB. */
export const MAX_UNCOMPRESSED_LENGTH = 0xffffff;

export class SnappyError extends Error {}

export function snappyUncompressedLength(input: Uint8Array): number {
  return readVarint(input, 0).value;
}

export function snappyDecompress(input: Uint8Array, maxLength = MAX_UNCOMPRESSED_LENGTH): Uint8Array {
  const { value: length, next } = readVarint(input, 0);
  if (length >= maxLength) throw new SnappyError(`uncompressed length ${length} exceeds the limit`);
  const out = new Uint8Array(length);
  let outPos = 0;
  let pos = next;
  while (pos < input.length) {
    const tag = input[pos++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let literalLength = tag >>> 2;
      if (literalLength >= 60) {
        const extraBytes = literalLength - 59;
        if (pos + extraBytes > input.length) throw new SnappyError('truncated literal length');
        literalLength = 0;
        for (let i = 0; i < extraBytes; i++) literalLength |= input[pos + i]! << (8 * i);
        literalLength >>>= 0;
        pos += extraBytes;
      }
      literalLength += 1;
      if (pos + literalLength > input.length || outPos + literalLength > length) throw new SnappyError('literal overruns the block');
      out.set(input.subarray(pos, pos + literalLength), outPos);
      pos += literalLength;
      outPos += literalLength;
      continue;
    }
    let copyLength: number;
    let offset: number;
    if (kind === 1) {
      if (pos + 1 > input.length) throw new SnappyError('truncated copy');
      copyLength = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[pos]!;
      pos += 1;
    } else if (kind === 2) {
      if (pos + 2 > input.length) throw new SnappyError('truncated copy');
      copyLength = (tag >>> 2) + 1;
      offset = input[pos]! | (input[pos + 1]! << 8);
      pos += 2;
    } else {
      if (pos + 4 > input.length) throw new SnappyError('truncated copy');
      copyLength = (tag >>> 2) + 1;
      offset = (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > outPos || outPos + copyLength > length) throw new SnappyError('copy outside the block');
    // Byte by byte: a copy may overlap its own output (offset < length repeats a pattern).
    for (let i = 0; i < copyLength; i++, outPos++) out[outPos] = out[outPos - offset]!;
  }
  if (outPos !== length) throw new SnappyError('block shorter than its declared length');
  return out;
}

export function snappyCompress(input: Uint8Array): Uint8Array {
  const out: number[] = [];
  writeVarint(out, input.length);
  const table = new Map<number, number>();
  let literalStart = 0;
  let pos = 0;
  while (pos + 4 <= input.length) {
    const key = input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24);
    const candidate = table.get(key);
    table.set(key, pos);
    if (candidate === undefined || pos - candidate > 0xffff) {
      pos++;
      continue;
    }
    let matchLength = 4;
    while (pos + matchLength < input.length && input[candidate + matchLength] === input[pos + matchLength]) matchLength++;
    emitLiteral(out, input, literalStart, pos);
    emitCopy(out, pos - candidate, matchLength);
    pos += matchLength;
    literalStart = pos;
  }
  emitLiteral(out, input, literalStart, input.length);
  return Uint8Array.from(out);
}

function emitLiteral(out: number[], input: Uint8Array, from: number, to: number): void {
  const length = to - from;
  if (length === 0) return;
  const n = length - 1;
  if (n < 60) out.push(n << 2);
  else if (n < 0x100) out.push(60 << 2, n);
  else if (n < 0x10000) out.push(61 << 2, n & 0xff, n >>> 8);
  else if (n < 0x1000000) out.push(62 << 2, n & 0xff, (n >>> 8) & 0xff, n >>> 16);
  else out.push(63 << 2, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
  for (let i = from; i < to; i++) out.push(input[i]!);
}

/** Copies with a 2-byte offset, at most 64 bytes each. */
function emitCopy(out: number[], offset: number, length: number): void {
  while (length > 0) {
    // This form takes any length from 1 to 64, so a plain split works.
    const chunk = Math.min(length, 64);
    out.push(((chunk - 1) << 2) | 2, offset & 0xff, offset >>> 8);
    length -= chunk;
  }
}

function readVarint(input: Uint8Array, start: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  let pos = start;
  for (;;) {
    if (pos >= input.length || shift > 28) throw new SnappyError('bad length varint');
    const byte = input[pos++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: pos };
    shift += 7;
  }
}

function writeVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}
