/**
 * RLP encoding in two passes — sizes first, then one buffer written once — for the large values a
 * block makes (its receipts: 2,000 ERC-20 receipts are ~1 MB of nested lists). @ethereumjs/rlp encodes
 * each list by concatenating its encoded items, copying every byte once per nesting level and
 * allocating an array per item: 16–45 ms for those receipts, on the chain thread, after the block timer.
 * The output is byte for byte what `RLP.encode` gives (test/unit/rlp-encode.test.ts).
 */
export type RlpInput = Uint8Array | RlpEncoded | readonly RlpInput[];

/**
 * An item that is RLP-encoded already (a block's transaction list, taken from the bytes it came in),
 * written as it is: wrapping it costs a copy, not a decode and a re-encode.
 */
export class RlpEncoded {
  constructor(readonly encoded: Uint8Array) {}
}

export function encodeRlp(value: RlpInput, typePrefix?: number): Uint8Array {
  // An EIP-2718 type byte before the encoding (a typed receipt), written into the same buffer.
  const start = typePrefix === undefined ? 0 : 1;
  const sizes: ListSizes = { payloads: [], next: 0 };
  const out = new Uint8Array(start + measure(value, sizes));
  if (typePrefix !== undefined) out[0] = typePrefix;
  const end = write(value, out, start, sizes);
  if (end !== out.length) throw new Error(`RLP encoding wrote ${end} of ${out.length} bytes`);
  return out;
}

/**
 * Each list's payload length, in the order both passes meet the lists (a list before its items): the
 * writing pass takes them from here instead of measuring each list again at every level above it.
 */
interface ListSizes {
  payloads: number[];
  next: number;
}

function measure(value: RlpInput, sizes: ListSizes): number {
  if (value instanceof RlpEncoded) return value.encoded.length;
  if (value instanceof Uint8Array) {
    if (value.length === 1 && value[0]! < 0x80) return 1;
    return headerLength(value.length) + value.length;
  }
  const slot = sizes.payloads.length;
  sizes.payloads.push(0);
  let payload = 0;
  for (const item of value as readonly RlpInput[]) payload += measure(item, sizes);
  sizes.payloads[slot] = payload;
  return headerLength(payload) + payload;
}

function headerLength(length: number): number {
  return length <= 55 ? 1 : 1 + byteCount(length);
}

function byteCount(n: number): number {
  let count = 0;
  for (let v = n; v > 0; v = Math.floor(v / 256)) count++;
  return count;
}

function writeHeader(out: Uint8Array, offset: number, length: number, shortBase: number): number {
  if (length <= 55) {
    out[offset] = shortBase + length;
    return offset + 1;
  }
  const count = byteCount(length);
  out[offset] = shortBase + 55 + count;
  for (let i = count, v = length; i > 0; i--, v = Math.floor(v / 256)) out[offset + i] = v % 256;
  return offset + 1 + count;
}

function write(value: RlpInput, out: Uint8Array, offset: number, sizes: ListSizes): number {
  if (value instanceof RlpEncoded) {
    out.set(value.encoded, offset);
    return offset + value.encoded.length;
  }
  if (value instanceof Uint8Array) {
    if (value.length === 1 && value[0]! < 0x80) {
      out[offset] = value[0]!;
      return offset + 1;
    }
    const at = writeHeader(out, offset, value.length, 0x80);
    out.set(value, at);
    return at + value.length;
  }
  let at = writeHeader(out, offset, sizes.payloads[sizes.next++]!, 0xc0);
  for (const item of value as readonly RlpInput[]) at = write(item, out, at, sizes);
  return at;
}
