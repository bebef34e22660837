/**
 * QBFT header hashing (qbft-and-p2p.md §2.5) and ethereumjs block/header constructors whose `hash()`
 * is the QBFT on-chain hash.
 *
 * All hashes are keccak(RLP(header fields)) with only the extraData field substituted by the
 * re-encoded structure: round 0 and no seals for the block hash, the given round and no seals for the
 * committed-seal hash (= the proposal digest). The genesis header (number 0) hashes unchanged.
 */
import {
  Block,
  BlockHeader,
  createBlock,
  createBlockHeader,
  createBlockHeaderFromBytesArray,
  createBlockHeaderFromRLP,
} from '@ethereumjs/block';
import type { BlockBytes, BlockData, BlockOptions, HeaderData } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { blockFromBytesArray, blockFromRlp } from '../ethereum/block-decode.js';

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

/**
 * Make `header().hash()` return the QBFT on-chain hash, then freeze it. The header must have been
 * built with `freeze: false`. The hash is computed eagerly so malformed extraData fails here, at
 * construction, rather than at some later `hash()` call.
 */
function installQbftHash(header: BlockHeader): BlockHeader {
  const hash = qbftOnChainHash(header);
  header.hash = () => hash;
  Object.freeze(header);
  return header;
}

function installOnBlock(block: Block, freeze: boolean): Block {
  installQbftHash(block.header);
  for (const uncle of block.uncleHeaders) installQbftHash(uncle);
  if (freeze) Object.freeze(block);
  return block;
}

/**
 * Options every QBFT header needs: unfrozen so the hash can be replaced, and no ethereumjs
 * consensus-format check (difficulty 1, long extraData and the fixed mixHash fail the PoS rules).
 */
function qbftOptions(opts: BlockOptions): BlockOptions {
  return { ...opts, freeze: false, skipConsensusFormatValidation: true };
}

/** A frozen ethereumjs BlockHeader whose hash() is the QBFT on-chain hash. */
export function createQbftHeader(data: HeaderData, opts: BlockOptions = {}): BlockHeader {
  return installQbftHash(createBlockHeader(data, qbftOptions(opts)));
}

/** Header from raw RLP field values (e.g. from an eth BlockHeaders message). */
export function qbftHeaderFromValues(values: Uint8Array[], common: Common): BlockHeader {
  return installQbftHash(createBlockHeaderFromBytesArray(values, qbftOptions({ common, setHardfork: true })));
}

/** Header from its RLP encoding. */
export function qbftHeaderFromRlp(bytes: Uint8Array, common: Common): BlockHeader {
  return installQbftHash(createBlockHeaderFromRLP(bytes, qbftOptions({ common, setHardfork: true })));
}

/** A frozen ethereumjs Block whose hash() (and header.hash()) is the QBFT on-chain hash. */
export function createQbftBlock(data: BlockData, opts: BlockOptions = {}): Block {
  return installOnBlock(createBlock(data, qbftOptions(opts)), opts.freeze ?? true);
}

/** Block from raw RLP values [header, transactions, ommers, withdrawals?]. */
export function qbftBlockFromValues(values: BlockBytes, common: Common): Block {
  return installOnBlock(blockFromBytesArray(values, qbftOptions({ common, setHardfork: true })), true);
}

/**
 * Decode a (sealed) block from its RLP encoding. The fork rules are picked from the block's own
 * number and timestamp.
 */
export function qbftBlockFromRlp(bytes: Uint8Array, common: Common): Block {
  return installOnBlock(blockFromRlp(bytes, qbftOptions({ common, setHardfork: true })), true);
}
