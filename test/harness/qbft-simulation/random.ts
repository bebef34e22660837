/**
 * Seeded randomness for simulations. Network conditions draw from a hash of the seed and the message
 * itself, so one message's fate never depends on how many other messages were sent before it: an
 * adversary's extra traffic cannot shift what happens to honest traffic.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

const encoder = new TextEncoder();

/** A number in [0, 1) determined by the parts. */
export function hashUnit(...parts: (string | number | bigint | Uint8Array)[]): number {
  const chunks = parts.map((p) => (p instanceof Uint8Array ? p : encoder.encode(String(p) + '|')));
  const total = chunks.reduce((sum, c) => sum + c.length, 0);
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  const digest = keccak_256(joined);
  const value = ((digest[0]! << 24) | (digest[1]! << 16) | (digest[2]! << 8) | digest[3]!) >>> 0;
  return value / 2 ** 32;
}

/** A 32-byte private key derived from a seed and an index. */
export function derivedKey(seed: number, index: number): Uint8Array {
  return keccak_256(encoder.encode(`basalt-sim-key|${seed}|${index}`));
}
