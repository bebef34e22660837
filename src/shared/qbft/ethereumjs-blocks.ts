/**
 * ethereumjs Block and BlockHeader objects whose `hash()` is the QBFT on-chain hash (block-hash.ts),
 * for the threads that execute, import or serve blocks with ethereumjs.
 */
import { Block, BlockHeader, createBlock, createBlockHeader, createBlockHeaderFromBytesArray, createBlockHeaderFromRLP } from '@ethereumjs/block';
import type { BlockBytes, BlockData, BlockOptions, HeaderData } from '@ethereumjs/block';
import type { Common } from '@ethereumjs/common';
import { blockFromBytesArray, blockFromRlp } from '../ethereum/block-decode.js';

import { qbftOnChainHash } from './block-hash.js';

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
