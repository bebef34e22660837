/**
 * The one-pass trie root of block transactions and receipts (src/shared/ethereum/ordered-trie.ts)
 * equals what @ethereumjs/mpt computes by inserting the same entries, for every shape of trie.
 */
import test from 'ava';
import { createMPT } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { bytesToHex, randomBytes } from '@ethereumjs/util';
import { orderedTrieRoot, trieRoot } from '../../src/shared/ethereum/ordered-trie.js';

async function mptRoot(entries: { key: Uint8Array; value: Uint8Array }[]): Promise<`0x${string}`> {
  const trie = await createMPT();
  for (const { key, value } of entries) await trie.put(key, value);
  return bytesToHex(trie.root());
}

/** Values of mixed sizes: under 32 bytes the leaves are embedded in their parents, over it they are hashed. */
const value = (i: number) => randomBytes([1, 5, 20, 31, 32, 33, 100, 600][i % 8]!);

for (const count of [0, 1, 2, 3, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 3000]) {
  test(`orderedTrieRoot of ${count} values is the trie root of RLP(i) → value`, async (t) => {
    const values = Array.from({ length: count }, (_, i) => value(i));
    t.is(bytesToHex(orderedTrieRoot(values)), await mptRoot(values.map((v, i) => ({ key: RLP.encode(i), value: v }))));
  });
}

test('trieRoot of arbitrary keys, including keys that are prefixes of others and shared long prefixes', async (t) => {
  for (let round = 0; round < 20; round++) {
    const keys = new Map<string, Uint8Array>();
    const prefix = randomBytes(3);
    for (let i = 0; i < 1 + (round * 7) % 60; i++) {
      const length = 1 + ((i * 5 + round) % 6);
      const key = i % 3 === 0 ? Uint8Array.from([...prefix, ...randomBytes(length)]) : randomBytes(length);
      keys.set(bytesToHex(key), key);
      if (i % 4 === 0) keys.set(bytesToHex(key.subarray(0, 1)), key.subarray(0, 1));
    }
    const entries = [...keys.values()].map((key, i) => ({ key, value: value(i + round) }));
    t.is(bytesToHex(trieRoot(entries)), await mptRoot(entries), `round ${round}`);
  }
});
