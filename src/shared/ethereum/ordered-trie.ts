/**
 * The root of a block's transactions or receipts trie (keys RLP(0), RLP(1), …), computed in one pass
 * over the sorted keys: each node is encoded and hashed once. Building it with `@ethereumjs/mpt` puts
 * re-hashes the path from the root on every insertion — for a block of 2,000 transfers that was most of
 * the chain thread's keccak time.
 */
import { RLP } from '@ethereumjs/rlp';
import { KECCAK256_RLP } from '@ethereumjs/util';
import { keccak256 as keccak_256 } from './keccak.js';
import { encodeRlp } from './rlp-encode.js';

/** A node as RLP input: a list of items, each bytes or an embedded node. */
type NodeInput = Uint8Array | NodeInput[];
interface Entry {
  key: Uint8Array; // nibbles
  value: Uint8Array;
}

const EMPTY = new Uint8Array(0);

/** The trie root of `values[i]` under key RLP(i). */
export function orderedTrieRoot(values: readonly Uint8Array[]): Uint8Array {
  return trieRoot(values.map((value, index) => ({ key: RLP.encode(index), value })));
}

/** The root of the (unsecured: keys not hashed) Merkle Patricia trie holding `entries`, whose keys differ. */
export function trieRoot(entries: readonly { key: Uint8Array; value: Uint8Array }[]): Uint8Array {
  if (entries.length === 0) return KECCAK256_RLP;
  const sorted = entries.map(({ key, value }) => ({ key: nibblesOf(key), value })).sort((a, b) => compare(a.key, b.key));
  return keccak_256(encodeRlp(nodeOf(sorted, 0, sorted.length, 0)));
}

/** The node holding entries [from, to) (sorted), whose keys agree on their first `depth` nibbles. */
function nodeOf(entries: Entry[], from: number, to: number, depth: number): NodeInput {
  const first = entries[from]!;
  if (to - from === 1) return [compactNibbles(first.key.subarray(depth), true), first.value];
  // Sorted: the prefix the first and the last share is shared by all between.
  const last = entries[to - 1]!;
  let shared = 0;
  while (depth + shared < first.key.length && depth + shared < last.key.length && first.key[depth + shared] === last.key[depth + shared]) shared++;
  if (shared > 0) {
    return [compactNibbles(first.key.subarray(depth, depth + shared), false), reference(nodeOf(entries, from, to, depth + shared))];
  }
  const branch: NodeInput[] = new Array<NodeInput>(17).fill(EMPTY);
  let at = from;
  // A key that ends here sorts first and is the branch's value.
  if (first.key.length === depth) {
    branch[16] = first.value;
    at++;
  }
  while (at < to) {
    const nibble = entries[at]!.key[depth]!;
    let end = at + 1;
    while (end < to && entries[end]!.key[depth] === nibble) end++;
    branch[nibble] = reference(nodeOf(entries, at, end, depth + 1));
    at = end;
  }
  return branch;
}

/** How a parent refers to a child: embedded when its encoding is under 32 bytes, else by its hash. */
function reference(node: NodeInput): NodeInput {
  const encoded = encodeRlp(node);
  return encoded.length < 32 ? node : keccak_256(encoded);
}

/** Hex-prefix encoding of a nibble path (yellow paper appendix C). */
function compactNibbles(nibbles: Uint8Array, leaf: boolean): Uint8Array {
  const odd = nibbles.length % 2;
  const out = new Uint8Array(Math.floor(nibbles.length / 2) + 1);
  const flag = (leaf ? 2 : 0) + odd;
  out[0] = odd ? (flag << 4) | nibbles[0]! : flag << 4;
  for (let i = odd, j = 1; i < nibbles.length; i += 2, j++) out[j] = (nibbles[i]! << 4) | nibbles[i + 1]!;
  return out;
}

function nibblesOf(bytes: Uint8Array): Uint8Array {
  const nibbles = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    nibbles[2 * i] = bytes[i]! >> 4;
    nibbles[2 * i + 1] = bytes[i]! & 0x0f;
  }
  return nibbles;
}

function compare(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
