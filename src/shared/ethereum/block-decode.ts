/**
 * Decoding blocks with their transactions on the shared transaction Common (tx-common.ts).
 *
 * ethereumjs' createBlockFromBytesArray gives every transaction a copy of the header's Common into
 * which it merges the transaction parameters: a ~6 kB parameter table per transaction, rebuilt each
 * time. A 300-transaction block held in a cache kept ~2 MB of them alive, and decoding it (with sender
 * recovery) took ~35 % longer. These constructors do what ethereumjs' do, with the one pre-merged
 * Common of the block's chain id and fork for every transaction.
 */
import { Block, createBlockHeaderFromBytesArray } from '@ethereumjs/block';
import type { BlockBytes, BlockHeader, BlockOptions } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { createTxFromBlockBodyData } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { createWithdrawal, EthereumJSErrorWithoutCode } from '@ethereumjs/util';
import type { WithdrawalBytes } from '@ethereumjs/util';
import { keccak256 } from './keccak.js';
import { rlpListItem } from './rlp-walk.js';
import { txCommonFor } from './tx-common.js';

/** createBlockFromBytesArray with shared transaction Commons. */
export function blockFromBytesArray(values: BlockBytes, opts: BlockOptions): Block {
  if (values.length > 5) throw EthereumJSErrorWithoutCode(`invalid block: ${values.length} values, at most 5 expected`);
  const [headerData, txsData, unclesData, ...tail] = values;
  const header = createBlockHeaderFromBytesArray(headerData, opts);
  const common = header.common;
  const withdrawalsData = common.isActivatedEIP(4895) ? (tail[0] as WithdrawalBytes[] | undefined) : undefined;
  if (common.isActivatedEIP(4895) && !Array.isArray(withdrawalsData)) {
    throw EthereumJSErrorWithoutCode('Invalid serialized block input: EIP-4895 is active, and no withdrawals were provided as array');
  }
  const txCommon = txCommonFor(common.chainId(), common.hardfork());
  // One options object for the block's transactions, not one literal per transaction. Frozen
  // whatever the block's option (QBFT blocks are decoded unfrozen for their header's sake): ethereumjs
  // keeps a transaction's hash and recovered sender only on a frozen one, and recomputed both (a
  // serialisation and keccak, a signature recovery) at every hash() and getSenderAddress() call.
  const txOpts = { ...opts, common: txCommon, freeze: true } as const;
  const transactions: TypedTransaction[] = (txsData ?? []).map((txData) => txFromBodyItem(txData, txOpts));
  // As ethereumjs: ommers take the header's Common and never compute their difficulty from a parent.
  const uncleOpts: BlockOptions = { ...opts, common, calcDifficultyFromHeader: undefined, ...(opts.setHardfork !== undefined ? { setHardfork: true } : {}) };
  const uncleHeaders = (unclesData ?? []).map((uncle) => createBlockHeaderFromBytesArray(uncle, uncleOpts));
  const withdrawals = withdrawalsData?.map(([index, validatorIndex, address, amount]) => createWithdrawal({ index, validatorIndex, address, amount }));
  return new Block(header, transactions, uncleHeaders, withdrawals, opts);
}

/** createBlockFromRLP with shared transaction Commons. */
export function blockFromRlp(serialized: Uint8Array, opts: BlockOptions): Block {
  if (opts.common?.isActivatedEIP(7934) === true) {
    const maxRlpBlockSize = Number(opts.common.param('maxRlpBlockSize'));
    if (serialized.length > maxRlpBlockSize) throw EthereumJSErrorWithoutCode(`Block size exceeds limit: ${serialized.length} > ${maxRlpBlockSize}`);
  }
  // A copy, as ethereumjs makes: the decoded fields are views into it, never into the caller's buffer.
  const values = RLP.decode(Uint8Array.from(serialized));
  if (!Array.isArray(values)) throw EthereumJSErrorWithoutCode('Invalid serialized block input. Must be array');
  return blockFromBytesArray(values as BlockBytes, opts);
}

/**
 * The header fields of an encoded block, decoding nothing else of it (rlp-walk.ts). They are copied
 * out of `rlp`: a header kept in a cache does not keep the block's bytes alive.
 */
export function headerValuesOfBlockRlp(rlp: Uint8Array): Uint8Array[] {
  const item = rlpListItem(rlp, 0);
  const values = item === undefined ? undefined : RLP.decode(item.slice());
  if (!Array.isArray(values)) throw EthereumJSErrorWithoutCode('invalid block encoding: not a list starting with a header');
  return values as Uint8Array[];
}

/**
 * Transaction `index` of an encoded block whose header is `header`, decoded alone and copied out of
 * `rlp`, as blockFromBytesArray decodes the block's transactions; undefined when the block has fewer.
 */
export function transactionOfBlockRlp(rlp: Uint8Array, header: BlockHeader, index: number): TypedTransaction | undefined {
  const transactions = rlpListItem(rlp, 1);
  if (transactions === undefined) throw EthereumJSErrorWithoutCode('invalid block encoding: no transaction list');
  const item = rlpListItem(transactions, index);
  if (item === undefined) return undefined;
  const txData = RLP.decode(item.slice()) as Uint8Array | Uint8Array[];
  return txFromBodyItem(txData, { common: txCommonFor(header.common.chainId(), header.common.hardfork()), freeze: true });
}

/**
 * A block-body transaction item decoded, with its hash pinned: the keccak of the item as it came (a
 * typed transaction's bytes, a legacy one's list encoded again). ethereumjs' `hash()` re-encodes the
 * transaction from its fields to hash it, ~30 µs each: listing the hashes of a 2,600-transaction block
 * read from the database took ~80 ms. The item is the transaction's canonical encoding (decoding
 * refuses non-canonical RLP and numbers with leading zeros), so both hashes are the same.
 */
function txFromBodyItem(txData: Uint8Array | Uint8Array[], opts: BlockOptions & { freeze: true }): TypedTransaction {
  const tx = createTxFromBlockBodyData(txData, opts);
  (tx.cache as { hash?: Uint8Array }).hash = keccak256(txData instanceof Uint8Array ? txData : RLP.encode(txData));
  return tx;
}
