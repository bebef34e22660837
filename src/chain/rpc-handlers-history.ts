/**
 * Chain-owned JSON-RPC methods of the Besu parity set (registry: rpc/methods/parity-methods.ts):
 * blocks and transactions by position, receipts of a block, logs and filters, fee history, proofs,
 * raw debug data. Shapes and errors follow rpc-auth-cli.md §3–5.
 */
import type { Block } from '@ethereumjs/block';
import { createBlock } from '@ethereumjs/block';
import { createMerkleProof } from '@ethereumjs/mpt';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { Capability } from '@ethereumjs/tx';
import { Address, bigIntToHex, bytesToBigInt, bytesToHex, equalsBytes } from '@ethereumjs/util';
import { encodeReceipt } from '@ethereumjs/vm';
import type { TxReceipt } from '@ethereumjs/vm';
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { formatBlock, formatFilterLog, formatMinedTransaction, formatReceipt, toData, toQuantity } from '../shared/rpc/format.js';
import type { BlockTag, LogFilter } from '../shared/rpc/params.js';
import type { MethodHandlers } from '../shared/rpc/registry.js';
import type { Json } from '../shared/rpc/types.js';
import type { Chain } from './chain.js';
import { FilterRegistry, type InstalledFilter } from '../shared/rpc/filter-registry.js';
import { logMatches } from '../shared/rpc/log-match.js';
import { bloomMayMatch } from './log-bloom.js';
import type { StoredReceipt } from '../shared/ethereum/chain-records.js';
import { traceTransaction } from './struct-log-tracer.js';
import { ethConfig } from './fork-config.js';

/** The chain-owned methods this file answers. */
export type ParityChainMethod =
  | 'eth_getBlockTransactionCountByHash'
  | 'eth_getBlockTransactionCountByNumber'
  | 'eth_getUncleCountByBlockHash'
  | 'eth_getUncleCountByBlockNumber'
  | 'eth_getTransactionByBlockHashAndIndex'
  | 'eth_getTransactionByBlockNumberAndIndex'
  | 'eth_getUncleByBlockHashAndIndex'
  | 'eth_getUncleByBlockNumberAndIndex'
  | 'eth_getBlockReceipts'
  | 'eth_feeHistory'
  | 'eth_maxPriorityFeePerGas'
  | 'eth_blobBaseFee'
  | 'eth_config'
  | 'eth_getProof'
  | 'eth_getLogs'
  | 'eth_newFilter'
  | 'eth_newBlockFilter'
  | 'eth_getFilterChanges'
  | 'eth_getFilterLogs'
  | 'eth_uninstallFilter'
  | 'debug_getRawBlock'
  | 'debug_getRawHeader'
  | 'debug_getRawReceipts'
  | 'debug_getRawTransaction'
  | 'debug_traceTransaction';

/** What the parity handlers need from ChainRpc: block resolution by tag or hash. */
export interface BlockResolver {
  blockByRef(ref: import('../shared/rpc/params.js').BlockRef): Promise<Block | undefined>;
  blockByTag(tag: BlockTag): Promise<Block | undefined>;
}

export interface ParityOptions {
  /** `--rpc-max-logs-range` (0 = unlimited). */
  rpcMaxLogsRange: bigint;
  /** `--min-priority-fee`, the floor of eth_maxPriorityFeePerGas. */
  minPriorityFee: bigint;
  now?: () => number;
}

/** How many recent blocks eth_maxPriorityFeePerGas samples (Besu's `--api-gas-price-blocks`). */
const PRIORITY_FEE_BLOCKS = 100n;

export function parityHandlers(chain: Chain, blocks: BlockResolver, options: ParityOptions): Pick<MethodHandlers<'chain'>, ParityChainMethod> {
  const now = options.now ?? Date.now;
  const filters = new FilterRegistry<InstalledFilter>(now);
  const store = chain.store;

  const blockByHash = (hash: Uint8Array) => store.getBlock(hash);
  const headNumber = () => chain.getHead().number;

  const minedTx = (block: Block, index: number): Json => {
    const tx = block.transactions[index];
    if (tx === undefined) return null;
    return formatMinedTransaction(tx, {
      blockHash: block.hash(),
      blockNumber: block.header.number,
      blockTimestamp: block.header.timestamp,
      index,
      ...(block.header.baseFeePerGas === undefined ? {} : { baseFeePerGas: block.header.baseFeePerGas }),
    });
  };

  /** An ommer as Besu shows it: the ommer header with an empty body. */
  const uncleAt = async (block: Block | undefined, index: number): Promise<Json> => {
    const header = block?.uncleHeaders[index];
    if (block === undefined || header === undefined) return null;
    const uncle = createBlock({ header: header.toJSON() }, { common: header.common, skipConsensusFormatValidation: true });
    const td = ((await store.getTotalDifficulty(block.header.parentHash)) ?? 0n) + header.difficulty;
    return formatBlock(uncle, { fullTransactions: false, hash: header.hash(), totalDifficulty: td });
  };

  const receiptsOf = async (block: Block): Promise<Json> => {
    const receipts = await store.getReceipts(block.hash());
    if (receipts === undefined) return null;
    let logIndexStart = 0;
    return receipts.map((receipt, index) => {
      const formatted = formatReceipt(receipt, {
        txHash: block.transactions[index]!.hash(),
        blockHash: block.hash(),
        blockNumber: block.header.number,
        blockTimestamp: block.header.timestamp,
        index,
        logIndexStart,
      });
      logIndexStart += receipt.logs.length;
      return formatted;
    });
  };

  /** Logs of one block that match, in eth_getLogs shape. */
  const logsOfBlock = async (block: Block, filter: Pick<LogFilter, 'addresses' | 'topics'>): Promise<Json[]> => {
    if (!bloomMayMatch(block.header.logsBloom, filter.addresses, filter.topics)) return [];
    const receipts = (await store.getReceipts(block.hash())) ?? [];
    const found: Json[] = [];
    let logIndex = 0;
    receipts.forEach((receipt, txIndex) => {
      for (const log of receipt.logs) {
        if (logMatches(log, filter.addresses, filter.topics)) {
          found.push(
            formatFilterLog(log, {
              blockHash: block.hash(),
              blockNumber: block.header.number,
              blockTimestamp: block.header.timestamp,
              txHash: block.transactions[txIndex]!.hash(),
              txIndex,
              logIndex,
            }),
          );
        }
        logIndex++;
      }
    });
    return found;
  };

  /** A range end of a log filter: `finalized`/`safe` do not exist on this chain (spec §5 rule 3). */
  const resolveRangeEnd = (tag: BlockTag): bigint => {
    if (tag.kind === 'number') return tag.number;
    if (tag.tag === 'earliest') return 0n;
    if (tag.tag === 'latest' || tag.tag === 'pending') return headNumber();
    throw new RpcError(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
  };

  const logsInRange = async (filter: LogFilter, from: bigint, to: bigint): Promise<Json[]> => {
    const logs: Json[] = [];
    for (let n = from; n <= to; n++) {
      const block = await store.getBlockByNumber(n);
      if (block) logs.push(...(await logsOfBlock(block, filter)));
    }
    return logs;
  };

  const queryLogs = async (filter: LogFilter, checkRange: boolean): Promise<Json[]> => {
    if (filter.blockHash !== undefined) {
      const block = await blockByHash(filter.blockHash);
      if (!block) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
      return logsOfBlock(block, filter);
    }
    const from = resolveRangeEnd(filter.fromBlock);
    const to = resolveRangeEnd(filter.toBlock);
    if (checkRange) {
      if (from > to || to > headNumber()) throw new RpcError(RpcErrors.INVALID_PARAMS);
      if (options.rpcMaxLogsRange > 0n && to - from > options.rpcMaxLogsRange) throw new RpcError(RpcErrors.EXCEEDS_RPC_MAX_LOGS_RANGE);
    }
    return logsInRange(filter, from, to > headNumber() ? headNumber() : to);
  };

  const feeHistory = async (blockCount: number, newest: Block, percentiles?: number[]): Promise<Json> => {
    const newestNumber = newest.header.number;
    const oldest = newestNumber - BigInt(blockCount) + 1n < 0n ? 0n : newestNumber - BigInt(blockCount) + 1n;
    const baseFees: string[] = [];
    const blobBaseFees: string[] = [];
    const gasUsedRatio: number[] = [];
    const blobGasUsedRatio: number[] = [];
    const rewards: string[][] = [];
    for (let n = oldest; n <= newestNumber; n++) {
      const block = n === newestNumber ? newest : await store.getBlockByNumber(n);
      if (!block) break;
      const header = block.header;
      baseFees.push(toQuantity(header.baseFeePerGas ?? 0n));
      blobBaseFees.push(toQuantity(header.excessBlobGas === undefined ? 0n : header.getBlobGasPrice()));
      gasUsedRatio.push(Number(header.gasUsed) / Number(header.gasLimit));
      const maxBlobGas = header.blobGasUsed === undefined ? 0n : header.common.getBlobGasSchedule().maxBlobGasPerBlock;
      blobGasUsedRatio.push(maxBlobGas === 0n ? 0 : Number(header.blobGasUsed ?? 0n) / Number(maxBlobGas));
      if (percentiles) rewards.push(await blockRewards(block, percentiles));
    }
    const header = newest.header;
    baseFees.push(toQuantity(header.baseFeePerGas === undefined ? 0n : header.calcNextBaseFee()));
    blobBaseFees.push(toQuantity(header.excessBlobGas === undefined ? 0n : header.calcNextBlobGasPrice(header.common)));
    const result: { [key: string]: Json } = {
      oldestBlock: toQuantity(oldest),
      baseFeePerGas: baseFees,
      baseFeePerBlobGas: blobBaseFees,
      gasUsedRatio,
      blobGasUsedRatio,
    };
    if (percentiles) result.reward = rewards;
    return result;
  };

  /** Besu's reward percentiles: priority fees of the block's transactions weighted by gas used. */
  const blockRewards = async (block: Block, percentiles: number[]): Promise<string[]> => {
    const baseFee = block.header.baseFeePerGas ?? 0n;
    const receipts = (await store.getReceipts(block.hash())) ?? [];
    const paid = receipts
      .map((receipt) => ({ reward: receipt.effectiveGasPrice - baseFee, gas: receipt.gasUsed }))
      .sort((a, b) => (a.reward < b.reward ? -1 : a.reward > b.reward ? 1 : 0));
    if (paid.length === 0) return percentiles.map(() => '0x0');
    const total = block.header.gasUsed;
    return percentiles.map((percentile) => {
      const threshold = (Number(total) * percentile) / 100;
      let cumulative = 0;
      for (const entry of paid) {
        cumulative += Number(entry.gas);
        if (cumulative >= threshold) return toQuantity(entry.reward);
      }
      return toQuantity(paid[paid.length - 1]!.reward);
    });
  };

  const maxPriorityFee = async (): Promise<bigint> => {
    const head = chain.getHeadBlock();
    const fees: bigint[] = [];
    for (let n = head.header.number; n >= 0n && head.header.number - n < PRIORITY_FEE_BLOCKS; n--) {
      const block = n === head.header.number ? head : await store.getBlockByNumber(n);
      if (!block || block.header.baseFeePerGas === undefined) break;
      const baseFee = block.header.baseFeePerGas;
      for (const tx of block.transactions) {
        if (!tx.supports(Capability.EIP1559FeeMarket)) continue;
        const t = tx as unknown as { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
        const room = t.maxFeePerGas - baseFee;
        fees.push(room < t.maxPriorityFeePerGas ? room : t.maxPriorityFeePerGas);
      }
    }
    if (fees.length === 0) return options.minPriorityFee;
    fees.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = fees[Math.floor((fees.length - 1) / 2)]!;
    return median > options.minPriorityFee ? median : options.minPriorityFee;
  };

  const proof = async (address: Uint8Array, keys: Uint8Array[], block: Block): Promise<Json> =>
    chain.withStateAt(block.header.stateRoot, async (vm) => {
      const sm = vm.stateManager as MerkleStateManager;
      const target = new Address(address);
      const trie = sm['_trie'];
      const accountProof = (await createMerkleProof(trie, target.bytes)).map(toData);
      const account = await sm.getAccount(target);
      const storageProof: Json[] = [];
      for (const key of keys) {
        const value = account === undefined ? new Uint8Array() : await sm.getStorage(target, key);
        const storageTrie = account === undefined ? undefined : sm['_getStorageTrie'](target, account);
        storageProof.push({
          key: toData(trimLeadingZeroBytes(key)),
          value: toQuantity(value.length === 0 ? 0n : bytesToBigInt(value)),
          proof: storageTrie === undefined || equalsBytes(account!.storageRoot, storageTrie.EMPTY_TRIE_ROOT) ? [] : (await createMerkleProof(storageTrie, key)).map(toData),
        });
      }
      return {
        accountProof,
        address: toData(address),
        balance: toQuantity(account?.balance ?? 0n),
        codeHash: account === undefined ? '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470' : toData(account.codeHash),
        nonce: toQuantity(account?.nonce ?? 0n),
        storageHash: account === undefined ? '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421' : toData(account.storageRoot),
        storageProof,
      };
    });

  return {
    eth_getBlockTransactionCountByHash: async ({ hash }) => {
      const block = await blockByHash(hash);
      return block ? toQuantity(block.transactions.length) : null;
    },
    eth_getBlockTransactionCountByNumber: async ({ block }) => {
      const found = await blocks.blockByTag(block);
      return found ? toQuantity(found.transactions.length) : null;
    },
    eth_getUncleCountByBlockHash: async ({ hash }) => {
      const block = await blockByHash(hash);
      return block ? toQuantity(block.uncleHeaders.length) : null;
    },
    eth_getUncleCountByBlockNumber: async ({ block }) => {
      const found = await blocks.blockByTag(block);
      return found ? toQuantity(found.uncleHeaders.length) : null;
    },
    eth_getTransactionByBlockHashAndIndex: async ({ hash, index }) => {
      const block = await blockByHash(hash);
      return block ? minedTx(block, index) : null;
    },
    eth_getTransactionByBlockNumberAndIndex: async ({ block, index }) => {
      const found = await blocks.blockByTag(block);
      return found ? minedTx(found, index) : null;
    },
    eth_getUncleByBlockHashAndIndex: async ({ hash, index }) => uncleAt(await blockByHash(hash), index),
    eth_getUncleByBlockNumberAndIndex: async ({ block, index }) => uncleAt(await blocks.blockByTag(block), index),
    eth_getBlockReceipts: async ({ block }) => {
      const found = await blocks.blockByRef(block);
      return found ? receiptsOf(found) : null;
    },
    eth_feeHistory: async ({ blockCount, newestBlock, rewardPercentiles }) => {
      const newest = await blocks.blockByTag(newestBlock);
      if (!newest) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      return feeHistory(blockCount, newest, rewardPercentiles);
    },
    eth_maxPriorityFeePerGas: async () => toQuantity(await maxPriorityFee()),
    // Before Cancun there is no blob market; its floor price (1 wei) is what a first blob would pay.
    eth_blobBaseFee: () => {
      const header = chain.getHeadBlock().header;
      return toQuantity(header.excessBlobGas === undefined ? 1n : header.calcNextBlobGasPrice(header.common));
    },
    eth_config: async () => {
      const genesis = await store.getBlockByNumber(0n);
      if (genesis === undefined) throw new Error('the chain has no genesis block');
      return ethConfig({
        schedule: chain.spec.common.hardforks(),
        chainId: chain.spec.chainId,
        genesisHash: genesis.hash(),
        genesisTimestamp: genesis.header.timestamp,
        headFork: chain.getHeadBlock().common.hardfork(),
        blockTimestamp: async (number) => (await store.getBlockByNumber(number))?.header.timestamp,
      });
    },
    eth_getProof: async ({ address, storageKeys, block }) => {
      const found = await blocks.blockByRef(block);
      return found ? proof(address, storageKeys, found) : null;
    },
    eth_getLogs: async ({ filter }) => queryLogs(filter, true),
    eth_newFilter: ({ filter }) => filters.install({ kind: 'log', filter, nextBlock: headNumber() + 1n, lastUsed: now() }),
    eth_newBlockFilter: () => filters.install({ kind: 'block', nextBlock: headNumber() + 1n, lastUsed: now() }),
    // An unknown id answers null so that the pool, which holds pending-transaction filters, is asked.
    eth_getFilterChanges: async ({ id }) => {
      const installed = filters.use(id);
      if (!installed) return null;
      const head = headNumber();
      const from = installed.nextBlock;
      installed.nextBlock = head + 1n;
      if (installed.kind === 'block') {
        const hashes: Json[] = [];
        for (let n = from; n <= head; n++) {
          const hash = await store.getCanonicalHash(n);
          if (hash) hashes.push(toData(hash));
        }
        return hashes;
      }
      const { toBlock } = installed.filter;
      const last = toBlock.kind === 'number' && toBlock.number < head ? toBlock.number : head;
      return logsInRange(installed.filter, from, last);
    },
    eth_getFilterLogs: async ({ id }) => {
      const installed = filters.use(id);
      if (!installed || installed.kind !== 'log') throw new RpcError(RpcErrors.LOGS_FILTER_NOT_FOUND);
      return queryLogs(installed.filter, false);
    },
    eth_uninstallFilter: ({ id }) => (filters.uninstall(id) ? true : null),
    debug_getRawBlock: async ({ block }) => {
      const found = await blocks.blockByTag(block);
      if (!found) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      return toData(found.serialize());
    },
    debug_getRawHeader: async ({ block }) => {
      const found = await blocks.blockByTag(block);
      if (!found) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      return toData(found.header.serialize());
    },
    debug_getRawReceipts: async ({ block }) => {
      const found = await blocks.blockByTag(block);
      if (!found) throw new RpcError(RpcErrors.INVALID_BLOCK_PARAMS);
      const receipts = (await store.getReceipts(found.hash())) ?? [];
      return receipts.map((receipt) => toData(consensusReceipt(receipt)));
    },
    debug_getRawTransaction: async ({ hash }) => {
      const location = await store.getTxLocation(hash);
      const block = location && (await store.getBlock(location.blockHash));
      const tx = location && block?.transactions[location.index];
      return tx ? toData(tx.serialize()) : null;
    },
    debug_traceTransaction: async ({ hash, options: traceOptions }) => {
      const location = await store.getTxLocation(hash);
      const block = location && (await store.getBlock(location.blockHash));
      if (!location || !block) throw new RpcError(RpcErrors.TRANSACTION_NOT_FOUND);
      const parent = await store.getBlock(block.header.parentHash);
      if (!parent) throw new RpcError(RpcErrors.PARENT_BLOCK_NOT_FOUND);
      return traceTransaction(chain, block, parent.header.stateRoot, location.index, traceOptions);
    },
  };
}

/** The consensus encoding of a stored receipt (what the receipts root commits to). */
export function consensusReceipt(receipt: StoredReceipt): Uint8Array {
  const base = { cumulativeBlockGasUsed: receipt.cumulativeGasUsed, bitvector: receipt.logsBloom, logs: receipt.logs };
  const txReceipt: TxReceipt = receipt.root !== undefined ? { ...base, stateRoot: receipt.root } : { ...base, status: receipt.status ?? 0 };
  return encodeReceipt(txReceipt, receipt.txType as never);
}

function trimLeadingZeroBytes(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

