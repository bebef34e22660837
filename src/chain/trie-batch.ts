import { RLP } from '@ethereumjs/rlp';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { encodeRlp } from '../shared/ethereum/rlp-encode.js';

/**
 * One pass of a block's writes into a Merkle-Patricia trie of fixed-length (hashed) keys, as the
 * account trie and the storage tries are. ethereumjs' trie applies writes one `put` at a time: each
 * walks from the root, decodes every node on its path, then re-encodes, re-hashes and stores that
 * whole path, so a block of 2,000 transfers hashed the top of the trie 2,000 times and left ~5 dead
 * nodes per write in the database. Here the sorted writes descend together: each node on their paths
 * is read once, each node of the new trie is encoded and hashed once, and only the nodes the new root
 * reaches are stored. The result is the same trie (a trie's shape depends only on its contents).
 */

/** Where the trie's nodes are, by the keccak of their encoding. */
export interface TrieNodeStore {
  get(hash: Uint8Array): Promise<Uint8Array | undefined>;
  put(hash: Uint8Array, encoded: Uint8Array): Promise<void>;
}

export interface TrieWrite {
  /** The key as the trie holds it (already hashed); every key of one trie has the same length. */
  key: Uint8Array;
  /** The value to store; undefined deletes the key. */
  value: Uint8Array | undefined;
}

const LEAF = 0;
const EXTENSION = 1;
const BRANCH = 2;
/** A subtree of the old trie that no write touches: its reference (a hash, or an embedded node) is kept. */
const STORED = 3;

interface Leaf {
  t: typeof LEAF;
  path: Uint8Array;
  value: Uint8Array;
}
interface Extension {
  t: typeof EXTENSION;
  path: Uint8Array;
  child: Child;
}
interface Branch {
  t: typeof BRANCH;
  children: (Child | undefined)[];
}
interface Stored {
  t: typeof STORED;
  ref: Uint8Array | NestedUint8Array;
}
type TrieNode = Leaf | Extension | Branch;
type Child = TrieNode | Stored;

interface Entry {
  nibbles: Uint8Array;
  value: Uint8Array | undefined;
}

const EMPTY = new Uint8Array(0);

/**
 * Applies `writes` (keys unique, in any order) to the trie whose root is `root` and returns the new
 * root; the new nodes are put in `store` (none is deleted: nodes are shared between roots).
 */
export async function applyTrieWrites(
  nodes: TrieNodes,
  root: Uint8Array,
  writes: readonly TrieWrite[],
  keccak: (data: Uint8Array) => Uint8Array,
): Promise<Uint8Array> {
  if (writes.length === 0) return root;
  const entries: Entry[] = writes.map((write) => ({ nibbles: toNibbles(write.key), value: write.value }));
  entries.sort((a, b) => compareNibbles(a.nibbles, b.nibbles));
  const keyLength = entries[0]!.nibbles.length;
  for (let i = 0; i < entries.length; i++) {
    if (entries[i]!.nibbles.length !== keyLength) throw new Error('trie keys of different lengths');
    if (i > 0 && compareNibbles(entries[i - 1]!.nibbles, entries[i]!.nibbles) === 0) throw new Error('the same trie key written twice');
  }
  const emptyRoot = nodes.emptyRoot;
  const update = new TrieUpdate(nodes, entries);
  const start: Child | undefined = equal(root, emptyRoot) ? undefined : { t: STORED, ref: root };
  const updated = await update.apply(start, 0, 0, entries.length);
  if (updated === undefined) return emptyRoot;
  if (updated.t === STORED) return root;
  const puts: [Uint8Array, Uint8Array][] = [];
  const encoded = encodeRlp(rawOf(updated, puts, keccak));
  // The root is stored by hash even when its encoding is short enough to be embedded.
  const newRoot = keccak(encoded);
  puts.push([newRoot, encoded]);
  for (const [hash, value] of puts) await nodes.store.put(hash, value);
  return newRoot;
}

/** The value under `key` (hashed, as the trie holds it) in the trie whose root is `root`; undefined when absent. */
export async function readTrieValue(nodes: TrieNodes, root: Uint8Array, key: Uint8Array): Promise<Uint8Array | undefined> {
  if (equal(root, nodes.emptyRoot)) return undefined;
  const nibbles = toNibbles(key);
  let child: Child | undefined = { t: STORED, ref: root };
  for (let depth = 0; child !== undefined; ) {
    const found = nodes.resolve(child);
    const node = found instanceof Promise ? await found : found;
    if (node.t === BRANCH) {
      child = node.children[nibbles[depth++]!];
      continue;
    }
    if (!startsWithAt(nibbles, depth, node.path)) return undefined;
    depth += node.path.length;
    if (node.t === LEAF) return depth === nibbles.length ? node.value : undefined;
    child = node.child;
  }
  return undefined;
}

/**
 * Decoded trie nodes by hash, read through `store`. Nodes are content-addressed and never changed in
 * place here (an update makes new nodes), so a decoded node stays valid for as long as it is kept;
 * keeping the most recently used saves decoding the top of the trie again on every read and commit.
 * They are kept in two generations of up to half the limit each: a node found in the older one moves
 * to the recent one, and when the recent one is full it becomes the older one (the older is dropped).
 * A hit on a recent node is then one map lookup, where moving it to the end of one ordered map took a
 * delete and an insert; a node that is known answers without a promise.
 */
export class TrieNodes {
  readonly emptyRoot: Uint8Array;
  private recent = new Map<string, TrieNode>();
  private older = new Map<string, TrieNode>();

  constructor(
    readonly store: TrieNodeStore,
    keccak: (data: Uint8Array) => Uint8Array,
    private readonly limit: number,
  ) {
    this.emptyRoot = keccak(RLP.encode(EMPTY));
  }

  /** The node `child` refers to: at once when it is embedded or kept, else once read from the store. */
  resolve(child: Child): TrieNode | Promise<TrieNode> {
    if (child.t !== STORED) return child;
    if (Array.isArray(child.ref)) return decodeNode(child.ref);
    const hash = child.ref as Uint8Array;
    const key = Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('latin1');
    const recent = this.recent.get(key);
    if (recent !== undefined) return recent;
    const older = this.older.get(key);
    if (older !== undefined) {
      this.older.delete(key);
      this.keep(key, older);
      return older;
    }
    return this.read(hash, key);
  }

  /** How many decoded nodes are kept (at most the limit). */
  get size(): number {
    return this.recent.size + this.older.size;
  }

  private async read(hash: Uint8Array, key: string): Promise<TrieNode> {
    const encoded = await this.store.get(hash);
    if (encoded === undefined) throw new Error('Missing node in DB');
    const node = decodeNode(RLP.decode(encoded) as NestedUint8Array);
    this.keep(key, node);
    return node;
  }

  private keep(key: string, node: TrieNode): void {
    this.recent.set(key, node);
    if (this.recent.size >= Math.max(1, this.limit >> 1)) {
      this.older = this.recent;
      this.recent = new Map();
    }
  }
}

class TrieUpdate {
  constructor(
    private readonly nodes: TrieNodes,
    private readonly entries: Entry[],
  ) {}

  /** The subtree `child` at nibble `depth` with entries `lo..hi` (all under this subtree's path) applied. */
  async apply(child: Child | undefined, depth: number, lo: number, hi: number): Promise<Child | undefined> {
    if (lo === hi) return child;
    if (child === undefined) return build(this.entries.slice(lo, hi).filter((e) => e.value !== undefined), depth);
    const found = this.nodes.resolve(child);
    const node = found instanceof Promise ? await found : found;
    switch (node.t) {
      case LEAF: {
        // The leaf is one more entry under this path, unless a write of the same key replaces it.
        const nibbles = concatNibbles(this.entries[lo]!.nibbles.subarray(0, depth), node.path);
        const merged: Entry[] = [];
        let leafPending = true;
        for (let i = lo; i < hi; i++) {
          const entry = this.entries[i]!;
          if (leafPending) {
            const order = compareNibbles(nibbles, entry.nibbles);
            if (order <= 0) {
              leafPending = false;
              if (order < 0) merged.push({ nibbles, value: node.value });
            }
          }
          if (entry.value !== undefined) merged.push(entry);
        }
        if (leafPending) merged.push({ nibbles, value: node.value });
        return build(merged, depth);
      }
      case EXTENSION: {
        const path = node.path;
        let allThrough = true;
        for (let i = lo; i < hi && allThrough; i++) allThrough = startsWithAt(this.entries[i]!.nibbles, depth, path);
        if (allThrough) return this.prefixed(path, await this.apply(node.child, depth + path.length, lo, hi));
        // Some writes leave the extension's path: it becomes a branch at its first nibble.
        const children: (Child | undefined)[] = new Array(16).fill(undefined);
        children[path[0]!] = path.length === 1 ? node.child : { t: EXTENSION, path: path.subarray(1), child: node.child };
        return this.applyBranch(children, depth, lo, hi);
      }
      case BRANCH:
        return this.applyBranch(node.children.slice(), depth, lo, hi);
    }
  }

  private async applyBranch(children: (Child | undefined)[], depth: number, lo: number, hi: number): Promise<Child | undefined> {
    for (let i = lo; i < hi; ) {
      const nibble = this.entries[i]!.nibbles[depth]!;
      let j = i + 1;
      while (j < hi && this.entries[j]!.nibbles[depth] === nibble) j++;
      children[nibble] = await this.apply(children[nibble], depth + 1, i, j);
      i = j;
    }
    let only = -1;
    for (let n = 0; n < 16; n++) {
      if (children[n] === undefined) continue;
      if (only !== -1) return { t: BRANCH, children };
      only = n;
    }
    if (only === -1) return undefined;
    // A branch left with one child is no branch: its nibble joins the child's path.
    return this.prefixed(Uint8Array.of(only), children[only]);
  }

  /** `child` reached through `path`: a leaf or extension takes the path in front of its own. */
  private async prefixed(path: Uint8Array, child: Child | undefined): Promise<Child | undefined> {
    if (child === undefined || path.length === 0) return child;
    const found = this.nodes.resolve(child);
    const node = found instanceof Promise ? await found : found;
    if (node.t === LEAF) return { t: LEAF, path: concatNibbles(path, node.path), value: node.value };
    if (node.t === EXTENSION) return { t: EXTENSION, path: concatNibbles(path, node.path), child: node.child };
    return { t: EXTENSION, path, child };
  }

}

/** A new subtree at `depth` holding `entries` (sorted, all values present). */
function build(entries: Entry[], depth: number): TrieNode | undefined {
  if (entries.length === 0) return undefined;
  if (entries.length === 1) return { t: LEAF, path: entries[0]!.nibbles.subarray(depth), value: entries[0]!.value! };
  const first = entries[0]!.nibbles;
  const last = entries[entries.length - 1]!.nibbles;
  let shared = 0;
  while (depth + shared < first.length && first[depth + shared] === last[depth + shared]) shared++;
  const at = depth + shared;
  const children: (Child | undefined)[] = new Array(16).fill(undefined);
  for (let i = 0; i < entries.length; ) {
    const nibble = entries[i]!.nibbles[at]!;
    let j = i + 1;
    while (j < entries.length && entries[j]!.nibbles[at] === nibble) j++;
    children[nibble] = build(entries.slice(i, j), at + 1);
    i = j;
  }
  const branch: Branch = { t: BRANCH, children };
  return shared === 0 ? branch : { t: EXTENSION, path: first.subarray(depth, at), child: branch };
}

/** The node's raw (RLP list) form; new children of 32 bytes or more are hashed and queued in `puts`. */
function rawOf(node: TrieNode, puts: [Uint8Array, Uint8Array][], keccak: (data: Uint8Array) => Uint8Array): NestedUint8Array {
  switch (node.t) {
    case LEAF:
      return [compactPath(node.path, true), node.value];
    case EXTENSION:
      return [compactPath(node.path, false), refOf(node.child, puts, keccak)];
    case BRANCH: {
      const raw: (Uint8Array | NestedUint8Array)[] = node.children.map((child) => (child === undefined ? EMPTY : refOf(child, puts, keccak)));
      raw.push(EMPTY);
      return raw as NestedUint8Array;
    }
  }
}

function refOf(child: Child, puts: [Uint8Array, Uint8Array][], keccak: (data: Uint8Array) => Uint8Array): Uint8Array | NestedUint8Array {
  if (child.t === STORED) return child.ref;
  const raw = rawOf(child, puts, keccak);
  const encoded = encodeRlp(raw);
  // Nodes shorter than a hash are embedded in their parent, not stored.
  if (encoded.length < 32) return raw;
  const hash = keccak(encoded);
  puts.push([hash, encoded]);
  return hash;
}

function decodeNode(raw: NestedUint8Array): TrieNode {
  if (raw.length === 17) {
    const value = raw[16];
    if (!(value instanceof Uint8Array) || value.length !== 0) throw new Error('a branch node with a value in a trie of fixed-length keys');
    const children: (Child | undefined)[] = new Array(16);
    for (let n = 0; n < 16; n++) {
      const ref = raw[n]!;
      children[n] = ref instanceof Uint8Array && ref.length === 0 ? undefined : { t: STORED, ref };
    }
    return { t: BRANCH, children };
  }
  if (raw.length === 2 && raw[0] instanceof Uint8Array) {
    const compact = raw[0];
    const flag = compact[0]! >> 4;
    const odd = (flag & 1) === 1;
    const path = new Uint8Array((compact.length - 1) * 2 + (odd ? 1 : 0));
    let at = 0;
    if (odd) path[at++] = compact[0]! & 0x0f;
    for (let i = 1; i < compact.length; i++) {
      path[at++] = compact[i]! >> 4;
      path[at++] = compact[i]! & 0x0f;
    }
    if ((flag & 2) === 2) {
      if (!(raw[1] instanceof Uint8Array)) throw new Error('a leaf node whose value is a list');
      return { t: LEAF, path, value: raw[1] };
    }
    return { t: EXTENSION, path, child: { t: STORED, ref: raw[1]! } };
  }
  throw new Error(`not a trie node (a list of ${raw.length} items)`);
}

/** The hex-prefix encoding of a path (Yellow Paper, appendix C). */
function compactPath(path: Uint8Array, leaf: boolean): Uint8Array {
  const odd = path.length % 2;
  const out = new Uint8Array(1 + (path.length >> 1));
  const flag = (leaf ? 2 : 0) + odd;
  let at = 0;
  if (odd) {
    out[0] = (flag << 4) | path[0]!;
    at = 1;
  } else {
    out[0] = flag << 4;
  }
  for (let i = 1; at < path.length; i++, at += 2) out[i] = (path[at]! << 4) | path[at + 1]!;
  return out;
}

function toNibbles(key: Uint8Array): Uint8Array {
  const nibbles = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    nibbles[2 * i] = key[i]! >> 4;
    nibbles[2 * i + 1] = key[i]! & 0x0f;
  }
  return nibbles;
}

function compareNibbles(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function startsWithAt(nibbles: Uint8Array, at: number, prefix: Uint8Array): boolean {
  for (let i = 0; i < prefix.length; i++) if (nibbles[at + i] !== prefix[i]) return false;
  return true;
}

function concatNibbles(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
