/**
 * Reading one item of an RLP list without decoding the others: a stored block of 2,000 transactions
 * decodes in tens of milliseconds, while the header or one transaction of it is found by skipping
 * over the items before it (their length prefixes alone).
 */

/** Where an encoded item lies: its payload from `payloadStart`, the whole item up to `end`. */
interface RlpSpan {
  payloadStart: number;
  end: number;
  list: boolean;
}

function invalid(what: string): Error {
  return new Error(`invalid RLP: ${what}`);
}

function spanAt(bytes: Uint8Array, offset: number): RlpSpan {
  if (offset >= bytes.length) throw invalid('item past the end of the input');
  const first = bytes[offset]!;
  if (first < 0x80) return { payloadStart: offset, end: offset + 1, list: false };
  const list = first >= 0xc0;
  const short = list ? first - 0xc0 : first - 0x80;
  let payloadStart: number;
  let length: number;
  if (short <= 55) {
    payloadStart = offset + 1;
    length = short;
  } else {
    const lengthOfLength = short - 55;
    payloadStart = offset + 1 + lengthOfLength;
    if (payloadStart > bytes.length) throw invalid('length prefix past the end of the input');
    length = 0;
    for (let i = offset + 1; i < payloadStart; i++) length = length * 256 + bytes[i]!;
  }
  const end = payloadStart + length;
  if (end > bytes.length) throw invalid('item longer than the input');
  return { payloadStart, end, list };
}

/** The list `encoded` starts with; its items lie between `payloadStart` and `end`. */
function listSpan(encoded: Uint8Array): RlpSpan {
  const span = spanAt(encoded, 0);
  if (!span.list) throw invalid('a list was expected');
  return span;
}

/**
 * Item `index` of the list `encoded` encodes, still encoded (a view into `encoded`), or undefined when
 * the list has fewer items.
 */
export function rlpListItem(encoded: Uint8Array, index: number): Uint8Array | undefined {
  const { payloadStart, end } = listSpan(encoded);
  let offset = payloadStart;
  for (let i = 0; offset < end; i++) {
    const item = spanAt(encoded, offset);
    if (item.end > end) throw invalid('item overruns its list');
    if (i === index) return encoded.subarray(offset, item.end);
    offset = item.end;
  }
  return undefined;
}

/** Every item of the list `encoded` encodes, each still encoded (views into `encoded`). */
export function rlpListItems(encoded: Uint8Array): Uint8Array[] {
  const { payloadStart, end } = listSpan(encoded);
  const items: Uint8Array[] = [];
  for (let offset = payloadStart; offset < end; ) {
    const item = spanAt(encoded, offset);
    if (item.end > end) throw invalid('item overruns its list');
    items.push(encoded.subarray(offset, item.end));
    offset = item.end;
  }
  return items;
}

/** How many items the list `encoded` encodes has. */
export function rlpListLength(encoded: Uint8Array): number {
  const { payloadStart, end } = listSpan(encoded);
  let count = 0;
  for (let offset = payloadStart; offset < end; count++) {
    const item = spanAt(encoded, offset);
    if (item.end > end) throw invalid('item overruns its list');
    offset = item.end;
  }
  return count;
}
