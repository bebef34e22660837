/**
 * The chain's bulk reads for transports that resolve many fields of many blocks per request
 * (GraphQL): blocks, blocks' transactions, receipts, transactions by hash (with their receipt),
 * accounts, raw blocks and simulated calls (logs are the log index's), each
 * for a whole list in one message (channels.ts, TransportChain). The answers are plain records;
 * shaping them for a client is the transport's work.
 */
import type { Block, BlockHeader } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { isBlob4844Tx, isLegacyTx } from '@ethereumjs/tx';
import { Address, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import type { ChannelHandlers } from '../../shared/actors/channel.js';
import type { TransportChain } from '../../shared/actors/channels.js';
import type { AccountRead, AccountState, BlockRecord, TransactionRecord } from '../../shared/actors/messages.js';
import { RpcError, RpcErrors } from '../../shared/rpc/errors.js';
import type { ChainRpcContext } from './chain-rpc.js';
import { CallSimulator } from '../../shared/execution/simulation.js';

export type BulkReads = Omit<ChannelHandlers<TransportChain, 'chain'>, 'rpc' | 'subscriptionInterest'>;

const EMPTY_ACCOUNT: Omit<AccountState, 'storage'> = { balance: 0n, nonce: 0n };

export function bulkReads(context: ChainRpcContext): BulkReads {
  const { chain, store } = context;
  const simulator = new CallSimulator(chain, (block) => context.gasCap(block));

  const recordOf = async (block: Block): Promise<BlockRecord> => {
    const hash = block.hash();
    const totalDifficulty = (await store.getTotalDifficulty(hash)) ?? 0n;
    const record = headerRecord(block.header, hash, totalDifficulty, false);
    record.transactionCount = block.transactions.length;
    if (block.uncleHeaders.length > 0) {
      // Besu's (and eth_getUncle*'s) total difficulty of an ommer: its including block's parent's plus its own.
      const parentDifficulty = (await store.getTotalDifficulty(block.header.parentHash)) ?? 0n;
      record.ommers = block.uncleHeaders.map((ommer) => headerRecord(ommer, ommer.hash(), parentDifficulty + ommer.difficulty, true));
    }
    if (block.withdrawals !== undefined) {
      record.withdrawals = block.withdrawals.map((withdrawal) => ({
        index: withdrawal.index,
        validatorIndex: withdrawal.validatorIndex,
        address: withdrawal.address.bytes,
        amount: withdrawal.amount,
      }));
    }
    return record;
  };

  /** Reads each account in the state after its block, one state switch per distinct block. */
  const readAccounts = async (reads: AccountRead[]): Promise<AccountState[]> => {
    const answers = new Array<AccountState>(reads.length);
    const byStateRoot = new Map<string, { root: Uint8Array; indexes: number[] }>();
    await Promise.all(
      reads.map(async (read, index) => {
        const block = await context.blockByRef(read.at);
        if (block === undefined) {
          answers[index] = { ...EMPTY_ACCOUNT, ...(read.code ? { code: new Uint8Array() } : {}), storage: read.slots.map(() => new Uint8Array(32)) };
          return;
        }
        const root = block.header.stateRoot;
        const key = bytesToHex(root);
        const group = byStateRoot.get(key) ?? { root, indexes: [] };
        group.indexes.push(index);
        byStateRoot.set(key, group);
      }),
    );
    for (const { root, indexes } of byStateRoot.values()) {
      await chain.withStateAt(root, async (vm) => {
        for (const index of indexes) {
          const read = reads[index]!;
          const address = new Address(read.address);
          const account = await vm.stateManager.getAccount(address);
          const state: AccountState = { balance: account?.balance ?? 0n, nonce: account?.nonce ?? 0n, storage: [] };
          if (read.code) state.code = account === undefined ? new Uint8Array() : await vm.stateManager.getCode(address);
          for (const slot of read.slots) {
            const value = account === undefined ? new Uint8Array() : await vm.stateManager.getStorage(address, setLengthLeft(slot, 32));
            state.storage.push(setLengthLeft(value, 32));
          }
          answers[index] = state;
        }
      });
    }
    return answers;
  };

  return {
    blocks: ({ refs }) =>
      Promise.all(
        refs.map(async (ref) => {
          const block = await context.blockByRef(ref);
          return block === undefined ? null : recordOf(block);
        }),
      ),
    blockTransactions: ({ blockHashes }) => Promise.all(blockHashes.map(async (hash) => (await store.getBlock(hash))?.transactions.map(transactionRecord) ?? null)),
    receipts: ({ blockHashes }) => Promise.all(blockHashes.map(async (hash) => (await store.getReceipts(hash)) ?? null)),
    transactions: ({ hashes }) =>
      Promise.all(
        hashes.map(async (hash) => {
          const found = await context.findTransaction(hash);
          if (found === undefined) return null;
          const { block, index } = found;
          const read = await store.getReceipt(block.hash(), index);
          if (read === undefined) return null;
          return { tx: transactionRecord(block.transactions[index]!), block: await recordOf(block), index, ...read };
        }),
      ),
    accounts: ({ reads }) => readAccounts(reads),
    rawBlocks: ({ hashes }) => Promise.all(hashes.map(async (hash) => (await store.getBlock(hash))?.serialize() ?? null)),
    simulations: async ({ calls }) => {
      const results = [];
      for (const { call, at } of calls) {
        const block = await context.blockByRef(at);
        if (block === undefined) throw new RpcError(RpcErrors.BLOCK_NOT_FOUND);
        results.push(await simulator.run(call, block));
      }
      return results;
    },
  };
}

function headerRecord(header: BlockHeader, hash: Uint8Array, totalDifficulty: bigint, ommer: boolean): BlockRecord {
  const record: BlockRecord = {
    hash,
    number: header.number,
    parentHash: header.parentHash,
    nonce: header.nonce,
    mixHash: header.mixHash,
    ommerHash: header.uncleHash,
    logsBloom: header.logsBloom,
    transactionsRoot: header.transactionsTrie,
    stateRoot: header.stateRoot,
    receiptsRoot: header.receiptTrie,
    coinbase: header.coinbase.bytes,
    difficulty: header.difficulty,
    totalDifficulty,
    extraData: header.extraData,
    gasLimit: header.gasLimit,
    gasUsed: header.gasUsed,
    timestamp: header.timestamp,
    transactionCount: 0,
    ommers: [],
    ommer,
  };
  if (header.baseFeePerGas !== undefined) {
    record.baseFeePerGas = header.baseFeePerGas;
    record.nextBaseFeePerGas = header.calcNextBaseFee();
  }
  if (header.withdrawalsRoot !== undefined) record.withdrawalsRoot = header.withdrawalsRoot;
  if (header.blobGasUsed !== undefined) record.blobGasUsed = header.blobGasUsed;
  if (header.excessBlobGas !== undefined) record.excessBlobGas = header.excessBlobGas;
  return record;
}

function transactionRecord(tx: TypedTransaction): TransactionRecord {
  const { v, r, s } = tx;
  if (v === undefined || r === undefined || s === undefined) throw new Error('a mined transaction is not signed');
  const record: TransactionRecord = {
    hash: tx.hash(),
    type: tx.type,
    nonce: tx.nonce,
    gasLimit: tx.gasLimit,
    value: tx.value,
    input: tx.data,
    v,
    r,
    s,
  };
  if (tx.to !== undefined) record.to = tx.to.bytes;
  if ('gasPrice' in tx) record.gasPrice = tx.gasPrice;
  if ('maxFeePerGas' in tx) {
    record.maxFeePerGas = tx.maxFeePerGas;
    record.maxPriorityFeePerGas = tx.maxPriorityFeePerGas;
  }
  if (!isLegacyTx(tx) && 'accessList' in tx) {
    record.accessList = tx.accessList.map(([address, storageKeys]) => ({ address, storageKeys }));
  }
  if (isBlob4844Tx(tx)) {
    record.maxFeePerBlobGas = tx.maxFeePerBlobGas;
    record.blobVersionedHashes = tx.blobVersionedHashes.map((hash) => hexToBytes(hash));
  }
  return record;
}
