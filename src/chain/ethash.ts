/**
 * Ethash proof-of-work verification ("light" mode: from the per-epoch cache, without the full DAG),
 * for importing ethash-era blocks without `--skip-pow-validation-enabled`. Follows the Ethash spec
 * (Yellow Paper appendix J): cache from the epoch seed, dataset items computed on demand, hashimoto
 * over the header's seal hash and nonce.
 *
 * The 16 MiB cache of an epoch takes a million Keccak-512 hashes to build: with hash-wasm's
 * WebAssembly Keccak 0.9 s here where @noble/hashes' JavaScript took 5.8 s; the last two are kept.
 */
import type { BlockHeader } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { bytesToHex, equalsBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import keccakBuild from 'hash-wasm/dist/keccak.umd.min.js';
import { InvalidBlockError } from './import-rules.js';

const EPOCH_LENGTH = 30_000n;
const WORD_BYTES = 4;
const HASH_BYTES = 64;
const MIX_BYTES = 128;
const CACHE_BYTES_INIT = 2 ** 24;
const CACHE_BYTES_GROWTH = 2 ** 17;
const DATASET_BYTES_INIT = 2 ** 30;
const DATASET_BYTES_GROWTH = 2 ** 23;
const CACHE_ROUNDS = 3;
const DATASET_PARENTS = 256;
const ACCESSES = 64;
const HASH_WORDS = HASH_BYTES / WORD_BYTES; // 16
const MIX_WORDS = MIX_BYTES / WORD_BYTES; // 32
const TWO_POW_256 = 2n ** 256n;

const keccak512Hasher = await keccakBuild.createKeccak(512);

function keccak_512(data: Uint8Array): Uint8Array {
  keccak512Hasher.init();
  keccak512Hasher.update(data);
  return keccak512Hasher.digest('binary');
}

function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

export function cacheSize(epoch: number): number {
  let size = CACHE_BYTES_INIT + CACHE_BYTES_GROWTH * epoch - HASH_BYTES;
  while (!isPrime(size / HASH_BYTES)) size -= 2 * HASH_BYTES;
  return size;
}

export function datasetSize(epoch: number): number {
  let size = DATASET_BYTES_INIT + DATASET_BYTES_GROWTH * epoch - MIX_BYTES;
  while (!isPrime(size / MIX_BYTES)) size -= 2 * MIX_BYTES;
  return size;
}

export function epochSeed(epoch: number): Uint8Array {
  let seed: Uint8Array = new Uint8Array(32);
  for (let i = 0; i < epoch; i++) seed = keccak_256(seed);
  return seed;
}

function fnv(a: number, b: number): number {
  return (Math.imul(a, 0x01000193) ^ b) >>> 0;
}

/** The epoch cache as 32-bit little-endian words, `cacheSize / 64` items of 16 words. */
export function makeCache(epoch: number): Uint32Array {
  const items = cacheSize(epoch) / HASH_BYTES;
  const bytes = new Uint8Array(items * HASH_BYTES);
  bytes.set(keccak_512(epochSeed(epoch)), 0);
  for (let i = 1; i < items; i++) {
    bytes.set(keccak_512(bytes.subarray((i - 1) * HASH_BYTES, i * HASH_BYTES)), i * HASH_BYTES);
  }
  const words = new Uint32Array(bytes.buffer);
  const mixed = new Uint8Array(HASH_BYTES);
  const mixedWords = new Uint32Array(mixed.buffer);
  for (let round = 0; round < CACHE_ROUNDS; round++) {
    for (let i = 0; i < items; i++) {
      const v = words[i * HASH_WORDS]! % items;
      const previous = ((i - 1 + items) % items) * HASH_WORDS;
      for (let w = 0; w < HASH_WORDS; w++) mixedWords[w] = words[previous + w]! ^ words[v * HASH_WORDS + w]!;
      bytes.set(keccak_512(mixed), i * HASH_BYTES);
    }
  }
  return words;
}

/** Dataset item `index` (16 words) computed from the cache. */
function datasetItem(cache: Uint32Array, index: number, out: Uint32Array, outOffset: number): void {
  const items = cache.length / HASH_WORDS;
  const mix = new Uint32Array(HASH_WORDS);
  const start = (index % items) * HASH_WORDS;
  for (let w = 0; w < HASH_WORDS; w++) mix[w] = cache[start + w]!;
  mix[0] = (mix[0]! ^ index) >>> 0;
  let mixBytes = keccak_512(new Uint8Array(mix.buffer));
  let mixWords = new Uint32Array(mixBytes.buffer, mixBytes.byteOffset, HASH_WORDS);
  const work = new Uint32Array(mixWords);
  for (let j = 0; j < DATASET_PARENTS; j++) {
    const parent = (fnv(index ^ j, work[j % HASH_WORDS]!) % items) * HASH_WORDS;
    for (let w = 0; w < HASH_WORDS; w++) work[w] = fnv(work[w]!, cache[parent + w]!);
  }
  mixBytes = keccak_512(new Uint8Array(work.buffer));
  mixWords = new Uint32Array(mixBytes.buffer, mixBytes.byteOffset, HASH_WORDS);
  out.set(mixWords, outOffset);
}

/** Hashimoto-light: the mix digest and the PoW result for a seal hash and nonce. */
export function hashimotoLight(
  cache: Uint32Array,
  fullSize: number,
  sealHash: Uint8Array,
  nonce: Uint8Array,
): { mixHash: Uint8Array; result: Uint8Array } {
  const pages = fullSize / MIX_BYTES;
  const seedInput = new Uint8Array(40);
  seedInput.set(sealHash, 0);
  // The nonce enters as a little-endian 64-bit number; the header stores it big-endian.
  for (let i = 0; i < 8; i++) seedInput[32 + i] = nonce[7 - i]!;
  const seed = keccak_512(seedInput);
  const seedWords = new Uint32Array(seed.buffer, seed.byteOffset, HASH_WORDS);
  const mix = new Uint32Array(MIX_WORDS);
  for (let w = 0; w < MIX_WORDS; w++) mix[w] = seedWords[w % HASH_WORDS]!;
  const page = new Uint32Array(MIX_WORDS);
  for (let i = 0; i < ACCESSES; i++) {
    const p = (fnv(i ^ seedWords[0]!, mix[i % MIX_WORDS]!) % pages) * 2;
    datasetItem(cache, p, page, 0);
    datasetItem(cache, p + 1, page, HASH_WORDS);
    for (let w = 0; w < MIX_WORDS; w++) mix[w] = fnv(mix[w]!, page[w]!);
  }
  const compressed = new Uint32Array(MIX_WORDS / 4);
  for (let w = 0; w < MIX_WORDS; w += 4) {
    compressed[w / 4] = fnv(fnv(fnv(mix[w]!, mix[w + 1]!), mix[w + 2]!), mix[w + 3]!);
  }
  const mixHash = new Uint8Array(compressed.buffer);
  const final = new Uint8Array(HASH_BYTES + 32);
  final.set(seed, 0);
  final.set(mixHash, HASH_BYTES);
  return { mixHash, result: keccak_256(final) };
}

/** The hash a miner seals: the header without its mix hash and nonce. */
export function sealHash(header: BlockHeader): Uint8Array {
  const fields = header.raw();
  // mixHash and nonce are fields 13 and 14 of every header layout.
  return keccak_256(RLP.encode([...fields.slice(0, 13), ...fields.slice(15)]));
}

const caches = new Map<number, Uint32Array>();
const KEPT_CACHES = 2;

function cacheFor(epoch: number): Uint32Array {
  let cache = caches.get(epoch);
  if (cache === undefined) {
    cache = makeCache(epoch);
    caches.set(epoch, cache);
    if (caches.size > KEPT_CACHES) caches.delete(caches.keys().next().value as number);
  }
  return cache;
}

/** Throws InvalidBlockError unless the header's mix hash and nonce are a valid ethash seal. */
export function verifyEthashSeal(header: BlockHeader): void {
  if (header.difficulty === 0n) throw new InvalidBlockError('a mined block must have a difficulty');
  const epoch = Number(header.number / EPOCH_LENGTH);
  const { mixHash, result } = hashimotoLight(cacheFor(epoch), datasetSize(epoch), sealHash(header), header.nonce);
  if (!equalsBytes(mixHash, header.mixHash)) {
    throw new InvalidBlockError(`invalid ethash seal: mix hash ${bytesToHex(header.mixHash)} is not the computed ${bytesToHex(mixHash)}`);
  }
  const target = TWO_POW_256 / header.difficulty;
  if (BigInt(bytesToHex(result)) > target) throw new InvalidBlockError('invalid ethash seal: the proof of work does not meet the difficulty');
}
