/**
 * The node's memory: the memory line it logs per thread, and blocks decoded with one shared
 * transaction Common instead of a parameter table per transaction.
 */
import test from 'ava';
import { formatNodeMemory, memoryLogIntervalMs, parseNodeMemory } from '../../src/main/supervisor/memory.js';
import type { NodeMemory } from '../../src/main/supervisor/memory.js';
import { createBlock, createBlockFromRLP } from '@ethereumjs/block';
import type { Block } from '@ethereumjs/block';
import { createAccessList2930Tx, createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { blockFromRlp } from '../../src/shared/ethereum/block-decode.js';
import { createChainCommon } from '../../src/shared/ethereum/common.js';
import { loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';

test('the memory line reads back as the figures it was made from, to 0.1 MB', (t) => {
  const MB = 1024 * 1024;
  const memory: NodeMemory = {
    rssBytes: 612.25 * MB,
    threads: [
      { thread: 'main', memory: { heapUsedBytes: 8.5 * MB, heapTotalBytes: 10 * MB, externalBytes: 2.2 * MB, arrayBuffersBytes: 0 } },
      { thread: 'http-0', memory: { heapUsedBytes: 20 * MB, heapTotalBytes: 47.1 * MB, externalBytes: 3.1 * MB, arrayBuffersBytes: 0 } },
    ],
  };
  const line = `2026-01-01T00:00:00.000Z | main | INFO  | Supervisor | ${formatNodeMemory(memory)}`;
  t.is(formatNodeMemory(memory), 'Memory: RSS 612.3 MB; heap used/total (external) MB: main 8.5/10.0 (2.2), http-0 20.0/47.1 (3.1)');
  const parsed = parseNodeMemory(line)!;
  const tenths = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
  t.is(tenths(parsed.rssBytes), 612.3);
  t.deepEqual(
    parsed.threads.map(({ thread, memory: m }) => [thread, tenths(m.heapUsedBytes), tenths(m.heapTotalBytes), tenths(m.externalBytes)]),
    [['main', 8.5, 10, 2.2], ['http-0', 20, 47.1, 3.1]],
  );
  t.is(parseNodeMemory('2026-01-01T00:00:00.000Z | main | INFO  | Supervisor | Basalt is running'), undefined);
  t.is(memoryLogIntervalMs({ BASALT_MEMORY_LOG_INTERVAL: '60' }), 60_000);
  t.is(memoryLogIntervalMs({ BASALT_MEMORY_LOG_INTERVAL: 'often' }), undefined);
  t.is(memoryLogIntervalMs({}), undefined);
});

const genesis = parseGenesis(loadDevNetwork().genesisJson);
const chainCommon = createChainCommon(genesis);
const KEY = hexToBytes(DEV_ACCOUNTS[0].privateKey as `0x${string}`);
const TO = '0x00000000000000000000000000000000000c0ffe';

function signedTransactions(count: number): TypedTransaction[] {
  const common = txCommonFor(genesis.chainId, 'cancun');
  const fee = { gasLimit: 21_000n, to: TO as `0x${string}`, value: 1n };
  return Array.from({ length: count }, (_, i) => {
    const nonce = BigInt(i);
    if (i % 3 === 0) return createLegacyTx({ ...fee, nonce, gasPrice: 10n ** 10n }, { common }).sign(KEY);
    if (i % 3 === 1) return createAccessList2930Tx({ ...fee, nonce, gasPrice: 10n ** 10n, chainId: genesis.chainId }, { common }).sign(KEY);
    return createFeeMarket1559Tx({ ...fee, nonce, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, chainId: genesis.chainId }, { common }).sign(KEY);
  });
}

function blockWith(number: bigint, transactions: TypedTransaction[]): Block {
  return createBlock(
    { header: { number, gasLimit: 30_000_000n, baseFeePerGas: 7n, timestamp: number }, transactions },
    { common: chainCommon, setHardfork: true, skipConsensusFormatValidation: true },
  );
}

test('blocks decode as with ethereumjs, their transactions sharing one parameter table', (t) => {
  const block = blockWith(1n, signedTransactions(6));
  const opts = { common: chainCommon, setHardfork: true, skipConsensusFormatValidation: true } as const;
  const ours = blockFromRlp(block.serialize(), opts);
  const theirs = createBlockFromRLP(block.serialize(), opts);
  t.is(bytesToHex(ours.hash()), bytesToHex(theirs.hash()));
  t.deepEqual(ours.serialize(), theirs.serialize());
  t.deepEqual(
    ours.transactions.map((tx) => [tx.type, bytesToHex(tx.hash()), tx.getSenderAddress().toString()]),
    theirs.transactions.map((tx) => [tx.type, bytesToHex(tx.hash()), tx.getSenderAddress().toString()]),
  );
  t.is(ours.transactions[0]!.common.param('txGas'), theirs.transactions[0]!.common.param('txGas'));
  // The point: one parameter table for every transaction, not one each.
  const tables = (block: Block) => new Set(block.transactions.map((tx) => (tx.common as unknown as { _paramsCache: object })._paramsCache));
  t.is(tables(ours).size, 1);
  t.is(tables(theirs).size, 6);
});
