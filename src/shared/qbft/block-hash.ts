/**
 * QBFT header hashing (qbft-and-p2p.md §2.5) on a header's raw RLP field values.
 *
 * All hashes are keccak(RLP(header fields)) with only the extraData field substituted by the
 * re-encoded structure: round 0 and no seals for the block hash, the given round and no seals for the
 * committed-seal hash (= the proposal digest). The genesis header (number 0) hashes unchanged.
 *
 * No ethereumjs here: the consensus thread hashes with this alone, and @ethereumjs/block and its
 * dependencies cost a thread ~12 MB (bench/node-memory.ts). ethereumjs Block and BlockHeader objects
 * whose hash() is the QBFT hash are made in `ethereumjs-blocks.ts`.
 */
import type { BlockHeader } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { decodeExtraData, encodeForCommittedSealHash, encodeForOnChainHash } from './extra-data.js';
import type { BftExtraData } from './extra-data.js';

/** Position of extraData in the RLP list of an Ethereum header. */
const EXTRA_DATA_INDEX = 12;
/** Position of the block number. */
const NUMBER_INDEX = 8;

/** A header given as an ethereumjs object or as its raw RLP field values. */
export type HeaderLike = BlockHeader | Uint8Array[];

function rawValues(header: HeaderLike): Uint8Array[] {
  return Array.isArray(header) ? header : header.raw();
}

function hashWithExtraData(values: Uint8Array[], extraData: Uint8Array): Uint8Array {
  const substituted = values.slice();
  substituted[EXTRA_DATA_INDEX] = extraData;
  return keccak_256(RLP.encode(substituted));
}

function isGenesisValues(values: Uint8Array[]): boolean {
  // Numbers are minimal scalars, so block 0 is the empty string.
  return values[NUMBER_INDEX].length === 0;
}

/** keccak(RLP(header)) with no substitution: the hash of a genesis header. */
export function plainHeaderHash(header: HeaderLike): Uint8Array {
  return keccak_256(RLP.encode(rawValues(header)));
}

/**
 * The block hash: extraData re-encoded with round 0 and no seals; genesis unchanged.
 * `extraData` may be passed when the caller has already decoded it.
 */
export function qbftOnChainHash(header: HeaderLike, extraData?: BftExtraData): Uint8Array {
  const values = rawValues(header);
  if (isGenesisValues(values)) return keccak_256(RLP.encode(values));
  const decoded = extraData ?? decodeExtraData(values[EXTRA_DATA_INDEX]);
  return hashWithExtraData(values, encodeForOnChainHash(decoded));
}

/** What commit seals sign for `round`, and the digest carried in Prepare/Commit messages. */
export function qbftCommittedSealHash(header: HeaderLike, round: number, extraData?: BftExtraData): Uint8Array {
  const values = rawValues(header);
  const decoded = extraData ?? decodeExtraData(values[EXTRA_DATA_INDEX]);
  return hashWithExtraData(values, encodeForCommittedSealHash(decoded, round));
}
