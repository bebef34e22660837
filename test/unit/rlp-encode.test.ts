import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { RlpEncoded, encodeRlp, type RlpInput } from '../../src/shared/ethereum/rlp-encode.js';

/** A deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function randomValue(next: () => number, depth: number): RlpInput {
  if (depth === 0 || next() < 0.5) {
    // Lengths around every boundary: empty, single bytes below and above 0x80, 55/56, and long.
    const lengths = [0, 1, 1, 2, 31, 32, 55, 56, 57, 255, 256, 1024, 70_000];
    const length = lengths[Math.floor(next() * lengths.length)]!;
    return Uint8Array.from({ length }, () => Math.floor(next() * 256));
  }
  return Array.from({ length: Math.floor(next() * 6) }, () => randomValue(next, depth - 1));
}

test('the same bytes as @ethereumjs/rlp for byte strings and lists at every length boundary', (t) => {
  const next = random(7);
  for (let i = 0; i < 400; i++) {
    const value = randomValue(next, 4);
    t.deepEqual(encodeRlp(value), RLP.encode(value as Parameters<typeof RLP.encode>[0]), `value ${i}`);
  }
  t.deepEqual(encodeRlp(Uint8Array.of(0x7f)), Uint8Array.of(0x7f));
  t.deepEqual(encodeRlp(Uint8Array.of(0x80)), Uint8Array.of(0x81, 0x80));
  t.deepEqual(encodeRlp([]), Uint8Array.of(0xc0));
  const long = [new Uint8Array(60)];
  t.deepEqual(encodeRlp(long).subarray(0, 3), Uint8Array.of(0xf8, 62, 0xb8));
});

test('an item given already encoded is written as it is: the same bytes as the value it encodes', (t) => {
  const next = random(11);
  for (let i = 0; i < 200; i++) {
    const items = Array.from({ length: 1 + Math.floor(next() * 4) }, () => randomValue(next, 3));
    const asEncoded = items.map((item, k) => (k % 2 === 0 ? new RlpEncoded(encodeRlp(item)) : item));
    t.deepEqual(encodeRlp(asEncoded), RLP.encode(items as Parameters<typeof RLP.encode>[0]), `list ${i}`);
  }
});
