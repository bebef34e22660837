/**
 * What each field of Besu's schema answers, from the records the actors send (query-data.ts), with
 * Besu's rules for absent values, block defaults and errors (its GraphQLDataFetchers and adapters).
 * Resolvers only ask QueryData, which batches every read of a kind into one request per turn.
 */
import type { GraphQLFieldResolver } from 'graphql';
import { RLP } from '@ethereumjs/rlp';
import { RemoteError } from '../../shared/actors/channel.js';
import type { BlockRecord, TransactionRecord } from '../../shared/actors/messages.js';
import type { RawLog, StoredReceipt } from '../../shared/ethereum/chain-records.js';
import { encodeConsensusReceipt } from '../../shared/ethereum/consensus-receipt.js';
import { jsonTextToString } from '../../shared/rpc/json-text.js';
import { logMatches } from '../../shared/rpc/log-match.js';
import type { BlockRef, CallRequest, TopicFilter } from '../../shared/rpc/params.js';
import { fromPoolError, GraphqlCodedError, GraphqlErrors } from './errors.js';
import { atHash, atNumber, LATEST, type QueryData } from './query-data.js';
import type { ResolverMap } from './schema.js';

/** A transaction and, when mined, its block and index there. */
interface TxSource {
  tx: TransactionRecord;
  block?: BlockRecord;
  index?: number;
  /** Its receipt when read with the transaction alone (a transaction by hash); else its block's receipts are read. */
  receipt?: { receipt: StoredReceipt; logIndexStart: number };
}

interface AccountSource {
  address: Uint8Array;
  at: BlockRef;
}

interface LogSource {
  log: RawLog;
  logIndex: number;
  blockHash: Uint8Array;
  txIndex: number;
  /** The block, when the log was read from its receipts. */
  block?: BlockRecord;
}

/** GraphQL's `CallData` input, scalars already parsed. */
interface CallData {
  from?: Uint8Array | null;
  to?: Uint8Array | null;
  gas?: bigint | null;
  gasPrice?: bigint | null;
  maxFeePerGas?: bigint | null;
  maxPriorityFeePerGas?: bigint | null;
  value?: bigint | null;
  data?: Uint8Array | null;
}

interface FilterCriteria {
  fromBlock?: bigint | null;
  toBlock?: bigint | null;
  addresses?: Uint8Array[] | null;
  topics?: Uint8Array[][] | null;
}

/** A resolver with its source, arguments and the query's data typed. */
function field<S, A = Record<string, never>>(resolve: (source: S, args: A, data: QueryData) => unknown): GraphQLFieldResolver<never, never, never> {
  return ((source: S, args: A, data: QueryData) => resolve(source, args, data)) as GraphQLFieldResolver<never, never, never>;
}

const hexOf = (bytes: Uint8Array) => `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

function callRequest(data: CallData): CallRequest {
  const call: CallRequest = { strict: false };
  if (given(data.from)) call.from = data.from;
  if (given(data.to)) call.to = data.to;
  if (given(data.gas)) call.gas = data.gas;
  if (given(data.gasPrice)) call.gasPrice = data.gasPrice;
  if (given(data.maxFeePerGas)) call.maxFeePerGas = data.maxFeePerGas;
  if (given(data.maxPriorityFeePerGas)) call.maxPriorityFeePerGas = data.maxPriorityFeePerGas;
  if (given(data.value)) call.value = data.value;
  if (given(data.data)) call.input = data.data;
  return call;
}

/** Positions ANDed, alternatives ORed; an empty position matches any topic. */
function topicFilters(topics: Uint8Array[][] | null | undefined): TopicFilter[] {
  return (topics ?? []).map((position) => (position.length === 0 ? null : position));
}

const stateAt = (block: bigint | null | undefined, otherwise: BlockRef): BlockRef => (given(block) ? atNumber(block) : otherwise);

// ---------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------

async function receiptOf(source: TxSource, data: QueryData): Promise<StoredReceipt | undefined> {
  if (source.receipt !== undefined) return source.receipt.receipt;
  if (source.block === undefined || source.index === undefined) return undefined;
  return (await data.receiptsOf(source.block))[source.index];
}

/** What a mined 1559-style transaction paid per gas: min(maxFee, baseFee + tip). */
function effectivePrice(tx: TransactionRecord, baseFee: bigint | undefined): bigint {
  if (tx.gasPrice !== undefined) return tx.gasPrice;
  const maxFee = tx.maxFeePerGas ?? 0n;
  const price = (baseFee ?? 0n) + (tx.maxPriorityFeePerGas ?? 0n);
  return price < maxFee ? price : maxFee;
}

/** A transaction's network encoding, cut from its block's RLP (a legacy one is a list, a typed one bytes). */
async function rawTransaction(source: TxSource, data: QueryData): Promise<Uint8Array> {
  if (source.tx.raw !== undefined) return source.tx.raw;
  const [, transactions] = RLP.decode(await data.rawBlock(source.block!)) as unknown as [unknown, (Uint8Array | Uint8Array[])[]];
  const tx = transactions[source.index!]!;
  return tx instanceof Uint8Array ? tx : RLP.encode(tx);
}

async function senderOf(source: TxSource, data: QueryData): Promise<Uint8Array> {
  if (source.tx.from !== undefined) return source.tx.from;
  const receipt = await receiptOf(source, data);
  if (receipt === undefined) throw new Error(`no receipt for transaction ${hexOf(source.tx.hash)}`);
  return receipt.from;
}

/** The state a transaction's accounts are read in by default: after its block, or the head's for a pending one. */
const txState = (source: TxSource): BlockRef => (source.block === undefined ? LATEST : atHash(source.block.hash));

function logsOfBlock(block: BlockRecord, receipts: StoredReceipt[], only?: { index: number }): LogSource[] {
  const logs: LogSource[] = [];
  let logIndexStart = 0;
  receipts.forEach((receipt, txIndex) => {
    if (only === undefined || only.index === txIndex) logs.push(...logsOfTransaction(block, txIndex, receipt, logIndexStart));
    logIndexStart += receipt.logs.length;
  });
  return logs;
}

/** The logs of transaction `txIndex` of `block`, whose first is numbered `logIndexStart` in the block. */
function logsOfTransaction(block: BlockRecord, txIndex: number, receipt: StoredReceipt, logIndexStart: number): LogSource[] {
  return receipt.logs.map((log, i) => ({ log, logIndex: logIndexStart + i, blockHash: block.hash, txIndex, block }));
}

const transactionResolvers = {
  hash: field<TxSource>(({ tx }) => tx.hash),
  nonce: field<TxSource>(({ tx }) => tx.nonce),
  index: field<TxSource>(({ index }) => index ?? null),
  from: field<TxSource, { block?: bigint | null }>(async (source, { block }, data) => ({ address: await senderOf(source, data), at: stateAt(block, txState(source)) })),
  to: field<TxSource, { block?: bigint | null }>((source, { block }) => (source.tx.to === undefined ? null : { address: source.tx.to, at: stateAt(block, txState(source)) })),
  value: field<TxSource>(({ tx }) => tx.value),
  // Mined 1559-style transactions show what they paid; pooled ones their cap.
  gasPrice: field<TxSource>(({ tx, block }) => (block === undefined ? (tx.gasPrice ?? tx.maxFeePerGas ?? 0n) : effectivePrice(tx, block.baseFeePerGas))),
  maxFeePerGas: field<TxSource>(({ tx }) => tx.maxFeePerGas ?? null),
  maxPriorityFeePerGas: field<TxSource>(({ tx }) => tx.maxPriorityFeePerGas ?? null),
  maxFeePerBlobGas: field<TxSource>(({ tx }) => tx.maxFeePerBlobGas ?? null),
  effectiveTip: field<TxSource>(({ tx, block }) => {
    if (block === undefined) return null;
    const baseFee = block.baseFeePerGas ?? 0n;
    if (tx.gasPrice !== undefined) return tx.gasPrice - baseFee;
    const room = (tx.maxFeePerGas ?? 0n) - baseFee;
    const tip = tx.maxPriorityFeePerGas ?? 0n;
    return tip < room ? tip : room;
  }),
  gas: field<TxSource>(({ tx }) => tx.gasLimit),
  inputData: field<TxSource>(({ tx }) => tx.input),
  block: field<TxSource>(({ block }) => block ?? null),
  status: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.status ?? null),
  gasUsed: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.gasUsed ?? null),
  cumulativeGasUsed: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.cumulativeGasUsed ?? null),
  effectiveGasPrice: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.effectiveGasPrice ?? null),
  blobGasUsed: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.blobGasUsed ?? null),
  blobGasPrice: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.blobGasPrice ?? null),
  createdContract: field<TxSource, { block?: bigint | null }>(async (source, { block }, data) => {
    const created = (await receiptOf(source, data))?.contractAddress;
    return created === undefined ? null : { address: created, at: stateAt(block, txState(source)) };
  }),
  logs: field<TxSource>(async (source, _args, data) => {
    const { block, index, receipt } = source;
    if (block === undefined || index === undefined) return null;
    if (receipt === undefined) return logsOfBlock(block, await data.receiptsOf(block), { index });
    return logsOfTransaction(block, index, receipt.receipt, receipt.logIndexStart);
  }),
  r: field<TxSource>(({ tx }) => tx.r),
  s: field<TxSource>(({ tx }) => tx.s),
  // Blob and later types carry only the y-parity; legacy ones have no y-parity field.
  v: field<TxSource>(({ tx }) => (tx.type >= 3 ? null : tx.v)),
  yParity: field<TxSource>(({ tx }) => (tx.type === 0 ? null : tx.v)),
  type: field<TxSource>(({ tx }) => BigInt(tx.type)),
  accessList: field<TxSource>(({ tx }) => tx.accessList ?? null),
  raw: field<TxSource>((source, _args, data) => rawTransaction(source, data)),
  rawReceipt: field<TxSource>(async (source, _args, data) => {
    const receipt = await receiptOf(source, data);
    return receipt === undefined ? new Uint8Array() : encodeConsensusReceipt(receipt);
  }),
  blobVersionedHashes: field<TxSource>(({ tx }) => tx.blobVersionedHashes ?? []),
  revertReason: field<TxSource>(async (source, _args, data) => (await receiptOf(source, data))?.revertReason ?? null),
};

// ---------------------------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------------------------

async function txOf(block: BlockRecord, index: number, data: QueryData): Promise<TxSource> {
  return { tx: (await data.transactionsOf(block))[index]!, block, index };
}

async function simulate(data: QueryData, call: CallData, at: BlockRef) {
  return data.simulate({ call: callRequest(call), at });
}

const blockResolvers = {
  number: field<BlockRecord>((block) => block.number),
  hash: field<BlockRecord>((block) => block.hash),
  parent: field<BlockRecord>((block, _args, data) => (block.number === 0n ? null : data.block(atHash(block.parentHash)))),
  nonce: field<BlockRecord>((block) => block.nonce),
  transactionsRoot: field<BlockRecord>((block) => block.transactionsRoot),
  transactionCount: field<BlockRecord>((block) => BigInt(block.transactionCount)),
  stateRoot: field<BlockRecord>((block) => block.stateRoot),
  receiptsRoot: field<BlockRecord>((block) => block.receiptsRoot),
  miner: field<BlockRecord, { block?: bigint | null }>((block, args) => ({ address: block.coinbase, at: stateAt(args.block, atHash(block.hash)) })),
  extraData: field<BlockRecord>((block) => block.extraData),
  gasLimit: field<BlockRecord>((block) => block.gasLimit),
  gasUsed: field<BlockRecord>((block) => block.gasUsed),
  baseFeePerGas: field<BlockRecord>((block) => block.baseFeePerGas ?? null),
  nextBaseFeePerGas: field<BlockRecord>((block) => block.nextBaseFeePerGas ?? null),
  timestamp: field<BlockRecord>((block) => block.timestamp),
  logsBloom: field<BlockRecord>((block) => block.logsBloom),
  mixHash: field<BlockRecord>((block) => block.mixHash),
  difficulty: field<BlockRecord>((block) => block.difficulty),
  totalDifficulty: field<BlockRecord>((block) => block.totalDifficulty),
  ommerCount: field<BlockRecord>((block) => BigInt(block.ommers.length)),
  ommers: field<BlockRecord>((block) => block.ommers),
  ommerAt: field<BlockRecord, { index: bigint }>((block, { index }) => block.ommers[Number(index)] ?? null),
  ommerHash: field<BlockRecord>((block) => block.ommerHash),
  transactions: field<BlockRecord>(async (block, _args, data) => (await data.transactionsOf(block)).map((tx, index): TxSource => ({ tx, block, index }))),
  transactionAt: field<BlockRecord, { index: bigint }>((block, { index }, data) =>
    index >= 0n && index < BigInt(block.transactionCount) ? txOf(block, Number(index), data) : null,
  ),
  logs: field<BlockRecord, { filter: { addresses?: Uint8Array[] | null; topics?: Uint8Array[][] | null } }>(async (block, { filter }, data) => {
    const addresses = filter.addresses ?? [];
    const topics = topicFilters(filter.topics);
    return logsOfBlock(block, await data.receiptsOf(block)).filter(({ log }) => logMatches(log, addresses, topics));
  }),
  account: field<BlockRecord, { address: Uint8Array }>((block, { address }) => ({ address, at: atHash(block.hash) })),
  call: field<BlockRecord, { data: CallData }>((block, args, data) => simulate(data, args.data, atHash(block.hash))),
  estimateGas: field<BlockRecord, { data: CallData }>(async (block, args, data) => (await simulate(data, args.data, atHash(block.hash))).gasUsed),
  rawHeader: field<BlockRecord>(async (block, _args, data) => {
    const [header] = RLP.decode(await data.rawBlock(block)) as unknown as [Uint8Array[]];
    return RLP.encode(header);
  }),
  raw: field<BlockRecord>((block, _args, data) => data.rawBlock(block)),
  withdrawalsRoot: field<BlockRecord>((block) => block.withdrawalsRoot ?? null),
  withdrawals: field<BlockRecord>((block) => block.withdrawals ?? null),
  blobGasUsed: field<BlockRecord>((block) => block.blobGasUsed ?? null),
  excessBlobGas: field<BlockRecord>((block) => block.excessBlobGas ?? null),
};

// ---------------------------------------------------------------------------------------------
// The rest
// ---------------------------------------------------------------------------------------------

const accountResolvers = {
  address: field<AccountSource>(({ address }) => address),
  balance: field<AccountSource>(async ({ address, at }, _args, data) => (await data.account(at, address)).balance),
  transactionCount: field<AccountSource>(async ({ address, at }, _args, data) => (await data.account(at, address)).nonce),
  code: field<AccountSource>(({ address, at }, _args, data) => data.code(at, address)),
  storage: field<AccountSource, { slot: Uint8Array }>(({ address, at }, { slot }, data) => data.storage(at, address, slot)),
};

const logResolvers = {
  index: field<LogSource>(({ logIndex }) => BigInt(logIndex)),
  account: field<LogSource, { block?: bigint | null }>(({ log, blockHash }, { block }) => ({ address: log[0], at: stateAt(block, atHash(blockHash)) })),
  topics: field<LogSource>(({ log }) => log[1]),
  data: field<LogSource>(({ log }) => log[2]),
  transaction: field<LogSource>(async (source, _args, data) => {
    const block = source.block ?? (await data.block(atHash(source.blockHash)));
    if (block === null) throw new Error(`Block hash ${hexOf(source.blockHash)} was not found`);
    return txOf(block, source.txIndex, data);
  }),
};

const pendingResolvers = {
  transactionCount: field<object>(async (_source, _args, data) => BigInt((await data.pending()).count)),
  transactions: field<object>(async (_source, _args, data) => (await data.pending()).transactions.map((tx): TxSource => ({ tx }))),
  account: field<object, { address: Uint8Array }>((_source, { address }) => ({ address, at: LATEST })),
  call: field<object, { data: CallData }>((_source, args, data) => simulate(data, args.data, LATEST)),
  estimateGas: field<object, { data: CallData }>(async (_source, args, data) => (await simulate(data, args.data, LATEST)).gasUsed),
};

/** A JSON-RPC method's result: actors answer calls with the result's JSON text. */
async function rpcResult(data: QueryData, method: string): Promise<unknown> {
  return JSON.parse(jsonTextToString(await data.backend.chain.request('rpc', { method, params: null }))) as unknown;
}

const queryResolvers = {
  block: field<unknown, { number?: bigint | null; hash?: Uint8Array | null }>(async (_source, { number, hash }, data) => {
    if (given(number) && given(hash)) throw new GraphqlCodedError(GraphqlErrors.INVALID_PARAMS);
    if (given(number)) {
      const block = await data.block(atNumber(number));
      if (block === null) throw new Error(`Block number ${number} was not found`);
      return block;
    }
    if (given(hash)) {
      const block = await data.block(atHash(hash));
      if (block === null) throw new Error(`Block hash ${hexOf(hash)} was not found`);
      return block;
    }
    return data.block(LATEST);
  }),
  blocks: field<unknown, { from?: bigint | null; to?: bigint | null }>(async (_source, { from, to }, data) => {
    if (!given(from)) throw new GraphqlCodedError(GraphqlErrors.INVALID_PARAMS);
    const last = given(to) ? to : await data.headNumber();
    if (from > last) throw new GraphqlCodedError(GraphqlErrors.INVALID_PARAMS);
    return data.blockRange(from, last);
  }),
  pending: field<unknown>(() => ({})),
  transaction: field<unknown, { hash: Uint8Array }>(async (_source, { hash }, data) => {
    // Asked of both at once: a mined transaction wins, a pooled one is shown as pending.
    const [mined, pooled] = await Promise.all([data.minedTransaction(hash), data.pooledTransaction(hash)]);
    if (mined !== null) return { tx: mined.tx, block: mined.block, index: mined.index, receipt: mined } satisfies TxSource;
    return pooled === null ? null : { tx: pooled };
  }),
  logs: field<unknown, { filter: FilterCriteria }>(async (_source, { filter }, data) => {
    const head = await data.headNumber();
    const fromBlock = filter.fromBlock ?? head;
    const toBlock = filter.toBlock ?? head;
    if (fromBlock > toBlock) throw new GraphqlCodedError(GraphqlErrors.INVALID_PARAMS);
    const logs = await data.logs({ fromBlock, toBlock, addresses: filter.addresses ?? [], topics: topicFilters(filter.topics) });
    return logs.map(({ log, location }): LogSource => ({ log, logIndex: location.logIndex, blockHash: location.blockHash, txIndex: location.txIndex }));
  }),
  gasPrice: field<unknown>((_source, _args, data) => rpcResult(data, 'eth_gasPrice')),
  maxPriorityFeePerGas: field<unknown>((_source, _args, data) => rpcResult(data, 'eth_maxPriorityFeePerGas')),
  syncing: field<unknown>((_source, _args, data) => data.backend.syncStatus() ?? null),
  chainID: field<unknown>((_source, _args, data) => data.backend.chainId),
};

const mutationResolvers = {
  sendRawTransaction: field<unknown, { data: Uint8Array }>(async (_source, args, data) => {
    try {
      return JSON.parse(jsonTextToString(await data.backend.txpool.request('rpc', { method: 'eth_sendRawTransaction', params: { raw: args.data } }))) as unknown;
    } catch (err) {
      if (err instanceof RemoteError) throw fromPoolError(err.error);
      throw err;
    }
  }),
};

export const RESOLVERS: ResolverMap = {
  Query: queryResolvers,
  Mutation: mutationResolvers,
  Block: blockResolvers,
  Transaction: transactionResolvers,
  Account: accountResolvers,
  Log: logResolvers,
  Pending: pendingResolvers,
  CallResult: {
    data: field<{ output: Uint8Array }>(({ output }) => output),
    gasUsed: field<{ gasUsed: bigint }>(({ gasUsed }) => gasUsed),
    status: field<{ status: number }>(({ status }) => BigInt(status)),
  },
  Withdrawal: {
    validator: field<{ validatorIndex: bigint }>(({ validatorIndex }) => validatorIndex),
  },
};
