/**
 * The typed params each registered method's owner receives, and the small parsers several methods
 * share. Domain files (`*-methods.ts`) hold the registry entries; see MethodSpec in ../registry.ts.
 *
 * Param order matters for errors: Besu parses params left to right except for block-or-hash
 * methods, whose block param is parsed first (see accountAtBlock).
 */
import { RpcError, RpcErrors } from '../errors.js';
import type { RpcErrorObject } from '../types.js';
import type { LogLevel } from '../../util/log.js';
import type { PendingTxFilter } from '../pending-filter.js';
import type { Enode } from '../../ethereum/enode.js';
import {
  parseAddress,
  parseBlockRef,
  parseBlockTag,
  parseBoolean,
  parseHash,
  type AccountOverride,
  type BlockRef,
  type BlockTag,
  type CallRequest,
  type LogFilter,
} from '../params.js';

export type AccountAtBlockParams = { address: Uint8Array; block: BlockRef };
export type StorageAtParams = { address: Uint8Array; position: bigint; block: BlockRef };
export type BlockByNumberParams = { block: BlockTag; fullTransactions: boolean };
export type BlockByHashParams = { hash: Uint8Array; fullTransactions: boolean };
export type TransactionHashParams = { hash: Uint8Array };
export type RawTransactionParams = { raw: Uint8Array };
export type CallParams = { call: CallRequest; block: BlockRef; stateOverrides?: AccountOverride[] };
export type EstimateGasParams = { call: CallRequest; block: BlockTag; stateOverrides?: AccountOverride[] };
export type Sha3Params = { data: Uint8Array };

export type BlockHashParams = { hash: Uint8Array };
export type BlockTagParams = { block: BlockTag };
export type BlockRefParams = { block: BlockRef };
export type TxByBlockHashAndIndexParams = { hash: Uint8Array; index: number };
export type TxByBlockNumberAndIndexParams = { block: BlockTag; index: number };
export type FeeHistoryParams = { blockCount: number; newestBlock: BlockTag; rewardPercentiles?: number[] };
export type ProofParams = { address: Uint8Array; storageKeys: Uint8Array[]; block: BlockRef };
export type AccessListParams = { call: CallRequest; block: BlockTag };
export type LogFilterParams = { filter: LogFilter };
export type FilterIdParams = { id: string };
export type RawByHashParams = { hash: Uint8Array };
export type TraceTransactionParams = { hash: Uint8Array; options: TraceOptions };
export type BlockOverrides = {
  number?: bigint;
  time?: bigint;
  gasLimit?: bigint;
  feeRecipient?: Uint8Array;
  prevRandao?: Uint8Array;
  baseFeePerGas?: bigint;
  /** What BLOBBASEFEE reads and blob gas costs in the block (its excess blob gas is not changed). */
  blobBaseFee?: bigint;
  /** Credited after the block's calls, as a consensus client's withdrawals are (amounts in gwei). */
  withdrawals?: WithdrawalOverride[];
};
export type WithdrawalOverride = { index: bigint; validatorIndex: bigint; address: Uint8Array; amount: bigint };
export type BlockStateCall = {
  blockOverrides?: BlockOverrides;
  stateOverrides?: AccountOverride[];
  calls: CallRequest[];
};
export type SimulateRequest = {
  blockStateCalls: BlockStateCall[];
  validation: boolean;
  traceTransfers: boolean;
  returnFullTransactions: boolean;
};
export type SimulateParams = { request: SimulateRequest; block: BlockRef };
export type TraceBlockByNumberParams = { block: BlockTag; options: TraceOptions };
export type TraceBlockByHashParams = { hash: Uint8Array; options: TraceOptions };
export type TraceBlockRlpParams = { rlp: Uint8Array; options: TraceOptions };
export type TraceCallParams = { call: CallRequest; block: BlockRef; options: TraceOptions };
export type TraceOptions = { disableStorage: boolean; disableMemory: boolean; disableStack: boolean };
export type PendingTransactionsParams = { limit?: number; filters: PendingTxFilter[] };
export type EnodeParams = { enode: Enode };
export type LogLevelParams = { level: LogLevel };

export type ValidatorVoteParams = { address: Uint8Array; add: boolean };
export type ValidatorAddressParams = { address: Uint8Array };
export type ValidatorsByBlockNumberParams = { block: BlockTag };
export type ValidatorsByBlockHashParams = { hash: Uint8Array };
/** Both ends optional: `from` defaults to head - 100, `to` (exclusive) to the head. */
export type SignerMetricsParams = { from?: BlockTag; to?: BlockTag };

export const noParams = (): null => null;

/**
 * Besu parses the block param of block-or-hash methods before anything else, so a request with no
 * params at all reports the block param ("Invalid block param (block not found)").
 */
export function accountAtBlock(raw: readonly unknown[]): AccountAtBlockParams {
  const block = parseBlockRef(raw[1]);
  return { address: parseAddress(raw[0]), block };
}

export const blockHashOnly =
  (err: RpcErrorObject = RpcErrors.INVALID_BLOCK_HASH_PARAMS) =>
  (raw: readonly unknown[]): BlockHashParams => ({ hash: parseHash(raw[0], err) });

export const blockTagOnly =
  (err: RpcErrorObject = RpcErrors.INVALID_BLOCK_PARAMS) =>
  (raw: readonly unknown[]): BlockTagParams => ({ block: parseBlockTag(raw[0], err) });

/** debug_traceTransaction's options object: the struct-log tracer's switches (Besu's defaults: all on). */
export function parseTraceOptions(raw: unknown): TraceOptions {
  const options: TraceOptions = { disableStorage: false, disableMemory: false, disableStack: false };
  if (raw === undefined || raw === null) return options;
  const err = RpcErrors.INVALID_TRANSACTION_TRACE_PARAMS;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new RpcError(err);
  const record = raw as Record<string, unknown>;
  for (const key of ['disableStorage', 'disableMemory', 'disableStack'] as const) {
    if (record[key] !== undefined && record[key] !== null) options[key] = parseBoolean(record[key], err);
  }
  return options;
}

export function optionalBlockTag(raw: unknown): BlockTag | undefined {
  return raw === undefined || raw === null ? undefined : parseBlockTag(raw, RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
}
