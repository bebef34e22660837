/**
 * The QBFT header rule set (qbft-and-p2p.md §1 "Complete QBFT header rule set", §2.6, §3.3, §7).
 *
 * Applied to proposed blocks in "light" mode (everything but the commit seals, which a proposal does
 * not have yet) and to sealed blocks arriving from elsewhere with the seals. Execution (state root,
 * receipts) is not a header rule: the chain checks it.
 */
import { QbftBlock, HeaderField } from './block.js';
import { compareAddresses, quorum, recoverSealSigner } from './seal.js';
import type { ValidatorSelectionMode } from './schedule.js';

export const QBFT_MIX_HASH = Uint8Array.from(Buffer.from('63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365', 'hex'));
export const EMPTY_LIST_HASH = Uint8Array.from(Buffer.from('1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347', 'hex'));

const MIN_GAS_LIMIT = 5000n;
const MAX_GAS_LIMIT = (1n << 63n) - 1n;

/** What the rules need to know about the parent and the block's height. */
export interface HeaderRuleContext {
  parent: { number: bigint; hash: Uint8Array; timestamp: bigint; gasLimit: bigint };
  /** validators(h), sorted ascending. */
  validators: readonly Uint8Array[];
  mode: ValidatorSelectionMode;
  blockPeriodSeconds: number;
  blockPeriodMilliseconds: number;
  /** Local time, for the "not more than 1 s in the future" rule. */
  nowMs: number;
  /** London activation block, when after genesis (EIP-1559 doubles the gas limit there). */
  londonBlock?: bigint;
}

/** EIP-1559 elasticity multiplier: at the London block the limit doubles so the gas target stays put. */
const ELASTICITY_MULTIPLIER = 2n;

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function includesAddress(list: readonly Uint8Array[], address: Uint8Array): boolean {
  return list.some((a) => bytesEqual(a, address));
}

/**
 * Checks the header rules; returns why the block breaks one, or undefined when it keeps them all.
 * `checkSeals` adds the commit-seal rule (sealed blocks only).
 */
export function checkHeaderRules(block: QbftBlock, ctx: HeaderRuleContext, checkSeals: boolean): string | undefined {
  const { parent } = ctx;
  if (block.number !== parent.number + 1n) return `number ${block.number} does not follow parent ${parent.number}`;
  if (!bytesEqual(block.parentHash, parent.hash)) return 'parent hash is not the parent block';
  const gasLimit = block.scalar(HeaderField.gasLimit);
  if (block.scalar(HeaderField.gasUsed) > gasLimit) return 'gas used exceeds the gas limit';
  if (gasLimit < MIN_GAS_LIMIT || gasLimit > MAX_GAS_LIMIT) return `gas limit ${gasLimit} out of range`;
  // Besu's GasLimitRangeAndDeltaValidationRule with the London fee market (BFT rule sets pass it too):
  // at the fork block the parent's limit times the elasticity is the reference, for the delta and its bound.
  const parentGasLimit = ctx.londonBlock !== undefined && block.number === ctx.londonBlock ? parent.gasLimit * ELASTICITY_MULTIPLIER : parent.gasLimit;
  const delta = gasLimit > parentGasLimit ? gasLimit - parentGasLimit : parentGasLimit - gasLimit;
  if (delta >= parentGasLimit / 1024n) return `gas limit moved by ${delta} from ${parentGasLimit}, the bound is below ${parentGasLimit / 1024n}`;
  if (block.timestamp * 1000n > BigInt(Math.floor(ctx.nowMs)) + 1000n) return 'timestamp is more than 1 s in the future';
  if (!bytesEqual(block.field(HeaderField.mixHash), QBFT_MIX_HASH)) return 'mixHash is not the QBFT constant';
  if (block.scalar(HeaderField.difficulty) !== 1n) return 'difficulty is not 1';
  if (!bytesEqual(block.field(HeaderField.ommersHash), EMPTY_LIST_HASH)) return 'ommers hash is not the empty list hash';
  if (block.bodyListLength(1) > 0) return 'a QBFT block has no ommers';

  const extra = block.extraData;
  if (ctx.mode === 'contract') {
    if (extra.validators.length > 0) return 'a contract-mode block lists no validators';
    if (extra.vote) return 'a contract-mode block carries no vote';
  } else {
    if (extra.validators.length !== ctx.validators.length) return 'validators in extraData are not the validator set';
    for (let i = 0; i < ctx.validators.length; i++) {
      if (!bytesEqual(extra.validators[i]!, ctx.validators[i]!)) return 'validators in extraData are not the validator set';
    }
  }
  if (!includesAddress(ctx.validators, block.coinbase)) return 'coinbase is not a validator';
  if (checkSeals) {
    const reason = checkCommitSeals(block, ctx.validators);
    if (reason) return reason;
  }
  const periodRuleApplies = ctx.blockPeriodMilliseconds === 0 || ctx.blockPeriodMilliseconds >= 1000;
  if (periodRuleApplies && block.timestamp < parent.timestamp + BigInt(ctx.blockPeriodSeconds)) {
    return 'timestamp is earlier than the parent plus the block period';
  }
  return undefined;
}

/**
 * The commit-seal rule: each seal recovers, over the committed-seal hash at the header's own round,
 * to a distinct validator, and there are at least quorum of them.
 */
export function checkCommitSeals(block: QbftBlock, validators: readonly Uint8Array[]): string | undefined {
  const digest = block.digest();
  const signers: Uint8Array[] = [];
  for (const seal of block.extraData.seals) {
    let signer: Uint8Array;
    try {
      signer = recoverSealSigner(digest, seal);
    } catch {
      return 'a commit seal does not recover';
    }
    if (!includesAddress(validators, signer)) return 'a commit seal is not from a validator';
    if (includesAddress(signers, signer)) return 'two commit seals from one validator';
    signers.push(signer);
  }
  if (signers.length < quorum(validators.length)) return `${signers.length} commit seals, quorum is ${quorum(validators.length)}`;
  return undefined;
}

export function sortAddresses(list: readonly Uint8Array[]): Uint8Array[] {
  return [...list].sort(compareAddresses);
}
