/**
 * A block's writes applied in one pass (src/chain/trie-batch.ts) give the trie @ethereumjs/mpt makes
 * by putting and deleting the same keys one at a time: the same root, and nodes in the store from
 * which the library reads every key back.
 */
import test from 'ava';
import { createMPT } from '@ethereumjs/mpt';
import { MapDB, bytesToHex, randomBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { TrieNodes, applyTrieWrites, readTrieValue } from '../../src/chain/trie-batch.js';
import type { TrieNodeStore, TrieWrite } from '../../src/chain/trie-batch.js';

/** One node database both tries use, keyed as the library keys it (unprefixed hex). */
function sharedStore(): { db: MapDB<string, Uint8Array>; store: TrieNodes; puts: () => number } {
  const db = new MapDB<string, Uint8Array>();
  let puts = 0;
  const store: TrieNodeStore = {
    get: async (hash) => db.get(bytesToHex(hash).slice(2)),
    put: async (hash, encoded) => {
      puts++;
      await db.put(bytesToHex(hash).slice(2), encoded);
    },
  };
  return { db, store: new TrieNodes(store, keccak_256, 64), puts: () => puts };
}

/** Keys that share long prefixes (down to the last nibble: leaves short enough to be embedded) and random ones. */
function keyMaker(): () => Uint8Array {
  const base = randomBytes(32);
  let n = 0;
  return () => {
    n++;
    if (n % 3 === 0) return randomBytes(32);
    const key = base.slice();
    key[31] = (n * 37) & 0xff;
    if (n % 3 === 1) key[30] = (n * 11) & 0xff;
    return key;
  };
}

const valueOf = (i: number) => randomBytes([1, 2, 5, 31, 32, 70, 110][i % 7]!);

async function checkRound(t: import('ava').ExecutionContext, initial: number, batches: number, batchSize: number): Promise<void> {
  const { db, store } = sharedStore();
  const reference = await createMPT({ db, valueEncoding: 'view' });
  const contents = new Map<string, Uint8Array>();
  const nextKey = keyMaker();
  let root = reference.root();
  const firstWrites = new Map<string, TrieWrite>();
  for (let i = 0; i < initial; i++) {
    const key = nextKey();
    firstWrites.set(bytesToHex(key), { key, value: valueOf(i) });
  }
  const rounds: TrieWrite[][] = [[...firstWrites.values()]];
  for (let b = 0; b < batches; b++) {
    const writes = new Map<string, TrieWrite>();
    const known = [...contents.keys()];
    for (let i = 0; i < batchSize; i++) {
      const pick = Math.random();
      const key = pick < 0.4 && known.length > 0 ? hexKey(known[Math.floor(Math.random() * known.length)]!) : pick < 0.5 ? randomBytes(32) : nextKey();
      writes.set(bytesToHex(key), { key, value: Math.random() < 0.35 ? undefined : valueOf(i) });
    }
    rounds.push([...writes.values()]);
  }
  for (const writes of rounds) {
    for (const { key, value } of writes) {
      if (value === undefined) {
        await reference.del(key);
        contents.delete(bytesToHex(key));
      } else {
        await reference.put(key, value);
        contents.set(bytesToHex(key), value);
      }
    }
    root = await applyTrieWrites(store, root, writes, keccak_256);
    t.is(bytesToHex(root), bytesToHex(reference.root()));
    const reader = await createMPT({ db, valueEncoding: 'view', root });
    for (const [key, value] of contents) {
      t.deepEqual(await reader.get(hexKey(key)), value);
      t.deepEqual(await readTrieValue(store, root, hexKey(key)), value);
    }
    // Absent keys: near present ones (paths that end inside a leaf or an extension) and random ones.
    for (let i = 0; i < 10; i++) {
      const absent = i % 2 === 0 ? nextKey() : randomBytes(32);
      if (!contents.has(bytesToHex(absent))) t.is(await readTrieValue(store, root, absent), undefined);
    }
  }
}

function hexKey(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
}

for (const [initial, batches, batchSize] of [
  [0, 3, 1],
  [1, 4, 1],
  [2, 4, 2],
  [5, 6, 4],
  [40, 6, 30],
  [300, 5, 200],
  [2000, 3, 900],
] as const) {
  test(`${initial} keys, then ${batches} batches of ${batchSize} puts and deletes: same roots as one write at a time`, async (t) => {
    for (let round = 0; round < (initial > 100 ? 2 : 5); round++) await checkRound(t, initial, batches, batchSize);
  });
}

test('deleting every key gives the empty trie; no writes keep the root', async (t) => {
  const { store } = sharedStore();
  const empty = (await createMPT()).root();
  const keys = Array.from({ length: 50 }, () => randomBytes(32));
  const root = await applyTrieWrites(store, empty, keys.map((key, i) => ({ key, value: valueOf(i) })), keccak_256);
  t.notDeepEqual(root, empty);
  t.is(await applyTrieWrites(store, root, [], keccak_256), root);
  t.deepEqual(await applyTrieWrites(store, root, keys.map((key) => ({ key, value: undefined })), keccak_256), empty);
});

test('only the nodes of the new trie are stored', async (t) => {
  const { store, puts } = sharedStore();
  const empty = (await createMPT()).root();
  // Two keys under one branch: the root branch and two leaves (each over 32 bytes) — three nodes.
  const a = new Uint8Array(32).fill(0x11);
  const b = new Uint8Array(32).fill(0x22);
  await applyTrieWrites(store, empty, [{ key: a, value: randomBytes(40) }, { key: b, value: randomBytes(40) }], keccak_256);
  t.is(puts(), 3);
});

test('a key written twice in one batch, or keys of two lengths, are refused', async (t) => {
  const { store } = sharedStore();
  const empty = (await createMPT()).root();
  const key = randomBytes(32);
  await t.throwsAsync(applyTrieWrites(store, empty, [{ key, value: valueOf(1) }, { key, value: valueOf(2) }], keccak_256), { message: /twice/ });
  await t.throwsAsync(applyTrieWrites(store, empty, [{ key, value: valueOf(1) }, { key: randomBytes(20), value: valueOf(2) }], keccak_256), {
    message: /lengths/,
  });
});

test('decoded nodes: at most the limit are kept, a node read again is not read from the store while kept, and reads stay right after eviction', async (t) => {
  const db = new MapDB<string, Uint8Array>();
  let gets = 0;
  const backing: TrieNodeStore = {
    get: async (hash) => {
      gets++;
      return db.get(bytesToHex(hash).slice(2));
    },
    put: async (hash, encoded) => db.put(bytesToHex(hash).slice(2), encoded),
  };
  const nodes = new TrieNodes(backing, keccak_256, 8);
  const empty = (await createMPT()).root();
  // Fixed keys: the kept nodes are two generations of half the limit, so a path is kept whole only when
  // it has at most 4 stored nodes, which random keys exceeded now and then (a third shared nibble).
  const keys = Array.from({ length: 300 }, (_, i) => keccak_256(new TextEncoder().encode(`trie-batch-key-${i}`)));
  const values = keys.map((_, i) => valueOf(i));
  const root = await applyTrieWrites(nodes, empty, keys.map((key, i) => ({ key, value: values[i] })), keccak_256);
  // A fresh cache over the same store: every node comes from the store once, until evicted.
  const fresh = new TrieNodes(backing, keccak_256, 8);
  gets = 0;
  t.deepEqual(await readTrieValue(fresh, root, keys[0]!), values[0]);
  const firstRead = gets;
  t.true(firstRead >= 2 && firstRead <= 4, `the root and the nodes below it were read (${firstRead}), at most a generation`);
  t.deepEqual(await readTrieValue(fresh, root, keys[0]!), values[0]);
  t.is(gets, firstRead, 'read again, the path came from the kept nodes');
  for (const [i, key] of keys.entries()) t.deepEqual(await readTrieValue(fresh, root, key), values[i], `key ${i}`);
  t.true(fresh.size <= 8, `kept ${fresh.size}`);
  t.is(await readTrieValue(fresh, root, randomBytes(32)), undefined);
});
