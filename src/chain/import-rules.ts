/**
 * The checks a block from outside must pass before it is executed (execution itself then checks
 * state root, receipts root, bloom and gas used: see Chain.importBlock). They follow Besu's mainnet
 * header validators: ethash-era rules for blocks with a difficulty, post-merge rules for blocks
 * without, and the body rules (transaction and ommer roots, withdrawals, blob gas) for every block.
 *
 * Pure functions of the block, its parent and a few ancestors: no I/O, so each rule is testable
 * on its own.
 */
import type { Block, BlockHeader } from '@ethereumjs/block';
import { isBlob4844Tx } from '@ethereumjs/tx';
import { KECCAK256_RLP_ARRAY, bytesToHex, equalsBytes } from '@ethereumjs/util';
import { orderedTrieRoot } from '../shared/ethereum/ordered-trie.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import type { Chain } from './chain.js';
import type { SealedBlockCheck } from './block-validation-qbft.js';

/** A block refused before execution; `reason` says which rule in words an operator can act on. */
export class InvalidBlockError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface ImportRuleOptions {
  /** How blocks are sealed: ethash-era rules only apply to a chain that was mined. */
  consensus: 'ethash' | 'qbft';
  /** Besu's `ethash.fixeddifficulty` (dev networks): every mined block has this difficulty. */
  fixedDifficulty?: bigint;
  /**
   * Checks the ethash seal of a mined header; absent when seals are not checked
   * (`--skip-pow-validation-enabled`). Throws InvalidBlockError for a bad seal.
   */
  verifySeal?: (header: BlockHeader) => void;
  /** Hashes of the canonical ancestors of the block within ommer depth (parent first). */
  recentAncestors: readonly Uint8Array[];
  /**
   * Besu's `terminalTotalDifficulty` of an ethash chain: a block whose parent's total difficulty
   * reaches it is a proof-of-stake block, one whose parent's does not is a mined block.
   */
  terminalTotalDifficulty?: bigint;
  /** The parent's total difficulty, which the TTD rule compares (absent: the rule is not checked). */
  parentTotalDifficulty?: bigint;
}

/** The rules of a chain, without the per-block facts (ancestor window, parent TD) the importer adds. */
export type ChainImportRules = Omit<ImportRuleOptions, 'recentAncestors' | 'parentTotalDifficulty'>;

/** How many ancestors ommer validation looks at (depth 1..6 plus the ommer's parent). */
export const OMMER_WINDOW = 7;

/** Besu's `MAXIMUM_UNCLE_GENERATION`: an ommer is at most six generations below the block. */
const MAX_OMMER_DEPTH = 6n;
const MAX_OMMERS = 2;
const MAX_EXTRA_DATA_BYTES = 32;

function fail(reason: string): never {
  throw new InvalidBlockError(reason);
}

/**
 * Every header rule against the parent. A block with a difficulty is an ethash block; one without
 * is a post-merge (proof-of-stake style) block, which Besu accepts for Shanghai/Cancun blocks even
 * on a chain without a terminal total difficulty.
 */
/** Everything a block from elsewhere is checked with besides execution: header rules and, on QBFT, the seals. */
export interface ImportChecks {
  rules: ChainImportRules;
  checkSealedBlock?: SealedBlockCheck;
}

/**
 * The checks of blocks imported from elsewhere (`blocks import`, full sync). QBFT blocks carry their
 * proof of finality: every block's header rules and commit seals are checked.
 */
export async function importChecksFor(chain: Chain, genesis: Genesis, skipPowValidation: boolean): Promise<ImportChecks> {
  const rules = await importRulesFor(genesis, skipPowValidation);
  if (genesis.consensus !== 'qbft') return { rules };
  const { qbftSealedBlockCheck } = await import('./block-validation-qbft.js');
  return { rules, checkSealedBlock: qbftSealedBlockCheck(chain, genesis) };
}

/** The header rules of blocks imported from elsewhere for a genesis. */
async function importRulesFor(genesis: Genesis, skipPowValidation: boolean): Promise<ChainImportRules> {
  if (genesis.consensus === 'qbft') return { consensus: 'qbft' };
  const rules: ChainImportRules = { consensus: 'ethash' };
  if (genesis.ethash?.fixedDifficulty !== undefined) rules.fixedDifficulty = genesis.ethash.fixedDifficulty;
  if (genesis.config.terminalTotalDifficulty !== undefined) rules.terminalTotalDifficulty = genesis.config.terminalTotalDifficulty;
  if (!skipPowValidation) {
    const { verifyEthashSeal } = await import('./ethash.js');
    rules.verifySeal = verifyEthashSeal;
  }
  return rules;
}

export function validateHeader(header: BlockHeader, parent: BlockHeader, options: ImportRuleOptions): void {
  // The parent link itself is checked by the importer, which knows the chain's hashing rules.
  if (header.number !== parent.number + 1n) fail(`block number ${header.number} does not follow parent number ${parent.number}`);
  if (header.timestamp <= parent.timestamp) {
    fail(`timestamp ${header.timestamp} is not after the parent's timestamp ${parent.timestamp}`);
  }
  if (header.gasUsed > header.gasLimit) fail(`gas used ${header.gasUsed} exceeds the gas limit ${header.gasLimit}`);
  try {
    header.validateGasLimit(parent);
  } catch (err) {
    fail(firstLine(err));
  }
  validateBaseFee(header, parent);
  validateBlobGasFields(header, parent);

  if (options.consensus === 'qbft') return;
  if (header.extraData.length > MAX_EXTRA_DATA_BYTES) {
    fail(`extra data is ${header.extraData.length} bytes, more than ${MAX_EXTRA_DATA_BYTES}`);
  }
  validateTerminalTotalDifficulty(header, options);
  if (header.difficulty === 0n) {
    if (!header.nonce.every((byte) => byte === 0)) fail('a post-merge block must have a zero nonce');
    if (!equalsBytes(header.uncleHash, KECCAK256_RLP_ARRAY)) fail('a post-merge block must not have ommers');
    return;
  }
  if (parent.difficulty === 0n && parent.number > 0n) fail('a mined block cannot follow a post-merge block');
  const expected = options.fixedDifficulty ?? header.ethashCanonicalDifficulty(parent);
  if (header.difficulty !== expected) fail(`difficulty ${header.difficulty} is not the expected ${expected}`);
  options.verifySeal?.(header);
}

/** EIP-3675: which side of the merge a block is on follows from its parent's total difficulty. */
function validateTerminalTotalDifficulty(header: BlockHeader, options: ImportRuleOptions): void {
  const { terminalTotalDifficulty: ttd, parentTotalDifficulty: parentTd } = options;
  if (ttd === undefined || parentTd === undefined) return;
  if (parentTd >= ttd && header.difficulty !== 0n) {
    fail(
      `a proof-of-work block (difficulty ${header.difficulty}) cannot follow the terminal total difficulty ${ttd}: ` +
        `the parent's total difficulty ${parentTd} reached it, so this block must be a proof-of-stake block`,
    );
  }
  if (parentTd < ttd && header.difficulty === 0n) {
    fail(`a proof-of-stake block cannot come before the terminal total difficulty ${ttd}: the parent's total difficulty is ${parentTd}`);
  }
}

function validateBaseFee(header: BlockHeader, parent: BlockHeader): void {
  if (!header.common.isActivatedEIP(1559)) {
    if (header.baseFeePerGas !== undefined) fail('base fee present before London');
    return;
  }
  if (header.baseFeePerGas === undefined) fail('base fee missing after London');
  const expected = parent.common.isActivatedEIP(1559) ? parent.calcNextBaseFee() : BigInt(header.common.param('initialBaseFee'));
  if (header.baseFeePerGas !== expected) fail(`base fee ${header.baseFeePerGas} is not the expected ${expected}`);
}

function validateBlobGasFields(header: BlockHeader, parent: BlockHeader): void {
  if (!header.common.isActivatedEIP(4844)) return;
  if (header.excessBlobGas === undefined || header.blobGasUsed === undefined) fail('blob gas fields missing after Cancun');
  const expected = parent.excessBlobGas === undefined ? 0n : parent.calcNextExcessBlobGas(header.common);
  if (header.excessBlobGas !== expected) fail(`excess blob gas ${header.excessBlobGas} is not the expected ${expected}`);
}

/**
 * The body against the header: transactions root, ommers (hash, count, depth, no duplicates, not an
 * ancestor, each a valid-looking mined header), withdrawals root, and blob gas totals. `encodedLength`:
 * the length of the RLP the block came in, when at hand (else the block is encoded again to measure it).
 */
export async function validateBody(block: Block, options: ImportRuleOptions, encodedLength?: number): Promise<void> {
  const header = block.header;
  for (const [index, tx] of block.transactions.entries()) {
    const errors = tx.getValidationErrors();
    if (errors.length > 0) fail(`transaction ${index} is invalid: ${errors.join(', ')}`);
  }
  if (!equalsBytes(orderedTrieRoot(block.transactions.map((tx) => tx.serialize())), header.transactionsTrie)) {
    fail('transactions root does not match the transactions');
  }
  if (!block.uncleHashIsValid()) fail('ommers hash does not match the ommers');
  validateOmmers(block, options.recentAncestors);
  if (header.common.isActivatedEIP(4895)) {
    if (block.withdrawals === undefined) fail('withdrawals missing after Shanghai');
    if (!(await block.withdrawalsTrieIsValid())) fail('withdrawals root does not match the withdrawals');
  } else if (block.withdrawals !== undefined && block.withdrawals.length > 0) {
    fail('withdrawals present before Shanghai');
  }
  if (header.common.isActivatedEIP(7934)) {
    const size = encodedLength ?? block.serialize().length;
    const limit = Number(header.common.param('maxRlpBlockSize'));
    if (size > limit) fail(`block is ${size} bytes encoded, more than the ${limit} bytes EIP-7934 allows`);
  }
  if (header.common.isActivatedEIP(4844)) {
    const perBlob = header.common.param('blobGasPerBlob');
    let blobGasUsed = 0n;
    const blobGasPrice = header.getBlobGasPrice();
    for (const tx of block.transactions) {
      if (!isBlob4844Tx(tx)) continue;
      if (tx.maxFeePerBlobGas < blobGasPrice) fail(`blob transaction ${bytesToHex(tx.hash())} pays less than the blob gas price ${blobGasPrice}`);
      blobGasUsed += BigInt(tx.blobVersionedHashes.length) * perBlob;
    }
    const limit = header.common.getBlobGasSchedule().maxBlobGasPerBlock;
    if (blobGasUsed > limit) fail(`blob gas ${blobGasUsed} exceeds the block limit ${limit}`);
    if (header.blobGasUsed !== blobGasUsed) fail(`blob gas used ${header.blobGasUsed} is not the transactions' ${blobGasUsed}`);
  } else if (block.transactions.some(isBlob4844Tx)) {
    fail('blob transaction before Cancun');
  }
}

function validateOmmers(block: Block, recentAncestors: readonly Uint8Array[]): void {
  const ommers = block.uncleHeaders;
  if (ommers.length === 0) return;
  if (ommers.length > MAX_OMMERS) fail(`${ommers.length} ommers, more than ${MAX_OMMERS}`);
  const seen = new Set<string>();
  for (const ommer of ommers) {
    const hash = bytesToHex(ommer.hash());
    if (seen.has(hash)) fail(`ommer ${hash} included twice`);
    seen.add(hash);
    const depth = block.header.number - ommer.number;
    if (depth < 1n || depth > MAX_OMMER_DEPTH) fail(`ommer ${hash} is ${depth} generations away (1..${MAX_OMMER_DEPTH} allowed)`);
    if (recentAncestors.some((ancestor) => bytesToHex(ancestor) === hash)) fail(`ommer ${hash} is an ancestor of the block`);
    // The ommer's parent must be one of the block's recent ancestors (it is a sibling of one of them).
    const parentIndex = Number(block.header.number - ommer.number);
    const expectedParent = recentAncestors[parentIndex];
    if (expectedParent !== undefined && !equalsBytes(expectedParent, ommer.parentHash)) {
      fail(`ommer ${hash} does not branch off the canonical chain`);
    }
  }
}

/** The first line of an ethereumjs error, without the block dump it appends. */
export function firstLine(err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  // ethereumjs appends " (<vm or block description>)", e.g. "(vm hf=cancun -> block number=34 hash=...)".
  const dump = message.search(/ \((?:vm |block |tx |hf=)[^()]*(?:\([^()]*\)[^()]*)*\)$/);
  return (dump < 0 ? message : message.slice(0, dump)).trim();
}
