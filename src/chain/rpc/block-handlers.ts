/**
 * Blocks, ommers, transactions and receipts by hash, number or position (registry: block-methods.ts).
 */
import type { Block, BlockHeader } from '@ethereumjs/block';
import { createBlock } from '@ethereumjs/block';
import { formatBlock, formatMinedTransaction, formatReceipt, toQuantity } from '../../shared/rpc/format.js';
import type { blockMethods } from '../../shared/rpc/methods/block-methods.js';
import type { Json } from '../../shared/rpc/types.js';
import type { StoredReceipt } from '../../shared/ethereum/chain-records.js';
import type { ChainStore } from '../chain-store.js';
import type { ChainRpcContext, DomainHandlers } from './chain-rpc.js';

export function blockHandlers(context: ChainRpcContext): DomainHandlers<typeof blockMethods> {
  const { store } = context;
  const blockByHash = (hash: Uint8Array) => store.getBlock(hash);

  const renderBlock = async (block: Block, fullTransactions: boolean): Promise<Json> => {
    const hash = block.hash();
    const totalDifficulty = (await store.getTotalDifficulty(hash)) ?? 0n;
    const size = (await store.getBlockSize(hash)) ?? block.serialize().length;
    // Senders from the receipts: a block read from the database would recover every signature again.
    const senders = fullTransactions && block.transactions.length > 0 ? await store.getSenders(hash) : undefined;
    return formatBlock(block, { fullTransactions, totalDifficulty, hash, size, ...(senders ? { senders } : {}) });
  };

  /** An ommer as Besu shows it: the ommer header with an empty body. */
  const uncleAt = async (block: Block | undefined, index: number): Promise<Json> => {
    const header = block?.uncleHeaders[index];
    if (block === undefined || header === undefined) return null;
    const uncle = createBlock({ header: header.toJSON() }, { common: header.common, skipConsensusFormatValidation: true });
    const td = ((await store.getTotalDifficulty(block.header.parentHash)) ?? 0n) + header.difficulty;
    return formatBlock(uncle, { fullTransactions: false, hash: header.hash(), totalDifficulty: td });
  };

  return {
    eth_getBlockByNumber: async ({ block, fullTransactions }) => {
      const found = await context.blockByTag(block);
      return found ? renderBlock(found, fullTransactions) : null;
    },
    eth_getBlockByHash: async ({ hash, fullTransactions }) => {
      const found = await blockByHash(hash);
      return found ? renderBlock(found, fullTransactions) : null;
    },
    eth_getBlockTransactionCountByHash: async ({ hash }) => {
      const block = await blockByHash(hash);
      return block ? toQuantity(block.transactions.length) : null;
    },
    eth_getBlockTransactionCountByNumber: async ({ block }) => {
      const found = await context.blockByTag(block);
      return found ? toQuantity(found.transactions.length) : null;
    },
    eth_getUncleCountByBlockHash: async ({ hash }) => {
      const block = await blockByHash(hash);
      return block ? toQuantity(block.uncleHeaders.length) : null;
    },
    eth_getUncleCountByBlockNumber: async ({ block }) => {
      const found = await context.blockByTag(block);
      return found ? toQuantity(found.uncleHeaders.length) : null;
    },
    eth_getUncleByBlockHashAndIndex: async ({ hash, index }) => uncleAt(await blockByHash(hash), index),
    eth_getUncleByBlockNumberAndIndex: async ({ block, index }) => uncleAt(await context.blockByTag(block), index),
    // One transaction or receipt of a block is read alone (ChainStore.getTransaction, getReceipt):
    // the rest of a block not in memory stays undecoded.
    eth_getTransactionByHash: async ({ hash }) => {
      const location = await store.getTxLocation(hash);
      return location ? minedTransactionAt(store, location.blockHash, location.index) : null;
    },
    eth_getTransactionByBlockHashAndIndex: ({ hash, index }) => minedTransactionAt(store, hash, index),
    eth_getTransactionByBlockNumberAndIndex: async ({ block, index }) => {
      const hash = await context.blockHashByTag(block);
      return hash ? minedTransactionAt(store, hash, index) : null;
    },
    eth_getTransactionReceipt: async ({ hash }) => {
      const location = await store.getTxLocation(hash);
      if (!location) return null;
      const { blockHash, index } = location;
      const header = await store.getHeader(blockHash);
      const found = header && (await store.getReceipt(blockHash, index));
      if (!header || !found) return null;
      return receiptJson(found.receipt, { txHash: hash, blockHash, header, index, logIndexStart: found.logIndexStart });
    },
    eth_getBlockReceipts: async ({ block }) => {
      const found = await context.blockByRef(block);
      if (!found) return null;
      const blockHash = found.hash();
      const receipts = await store.getReceipts(blockHash);
      if (receipts === undefined) return null;
      let logIndexStart = 0;
      return receipts.map((receipt, index) => {
        const txHash = found.transactions[index]!.hash();
        const formatted = receiptJson(receipt, { txHash, blockHash, header: found.header, index, logIndexStart });
        logIndexStart += receipt.logs.length;
        return formatted;
      });
    },
  };
}

/** Transaction `index` of the stored block `blockHash` as a mined transaction, or null. */
async function minedTransactionAt(store: ChainStore, blockHash: Uint8Array, index: number): Promise<Json> {
  const found = await store.getTransaction(blockHash, index);
  if (found === undefined) return null;
  const { header, tx } = found;
  return formatMinedTransaction(tx, {
    blockHash,
    blockNumber: header.number,
    blockTimestamp: header.timestamp,
    index,
    ...(header.baseFeePerGas === undefined ? {} : { baseFeePerGas: header.baseFeePerGas }),
  });
}

/** The receipt of transaction `index` of the block `blockHash`, whose header is `header`; its logs are numbered from `logIndexStart` within the block. */
function receiptJson(
  receipt: StoredReceipt,
  at: { txHash: Uint8Array; blockHash: Uint8Array; header: BlockHeader; index: number; logIndexStart: number },
): Json {
  const { txHash, blockHash, header, index, logIndexStart } = at;
  return formatReceipt(receipt, { txHash, blockHash, blockNumber: header.number, blockTimestamp: header.timestamp, index, logIndexStart });
}
