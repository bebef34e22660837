/**
 * What keeps the node's memory bounded under load — the LRU cache with a count and a weight limit, the
 * chain's block and receipt caches built on it, blocks decoded with one shared transaction Common
 * instead of a parameter table per transaction, bounded state caches, expiring filters — and the
 * memory line the node logs per thread.
 */
import test from 'ava';
import { createBlock, createBlockFromRLP, createBlockHeaderFromBytesArray } from '@ethereumjs/block';
import type { Block } from '@ethereumjs/block';
import { createAccessList2930Tx, createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Caches } from '@ethereumjs/statemanager';
import { Account, Address, bytesToHex, hexToBytes } from '@ethereumjs/util';
import { BLOCK_CACHE_LIMITS, ChainStore } from '../../src/chain/chain-store.js';
import { KvStore } from '../../src/shared/storage/kv-store.js';
import { BoundedStateCaches } from '../../src/chain/state-db.js';
import { blockFromRlp, headerValuesOfBlockRlp } from '../../src/shared/ethereum/block-decode.js';
import { createChainCommon } from '../../src/shared/ethereum/common.js';
import { loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { FILTER_IDLE_TIMEOUT_MS, FilterRegistry } from '../../src/shared/rpc/filter-registry.js';
import { LruCache } from '../../src/shared/util/lru-cache.js';
import { formatNodeMemory, memoryLogIntervalMs, parseNodeMemory } from '../../src/main/supervisor/memory.js';
import type { NodeMemory } from '../../src/main/supervisor/memory.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

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

test('the LRU cache drops the least recently used entry past its entry limit', (t) => {
  const cache = new LruCache<string, number>({ entries: 2, weight: 100 });
  cache.set('a', 1);
  cache.set('b', 2);
  t.is(cache.get('a'), 1, 'a is now the most recently used');
  cache.set('c', 3);
  t.is(cache.get('b'), undefined, 'b was the least recently used');
  t.is(cache.get('a'), 1);
  t.is(cache.get('c'), 3);
  t.is(cache.size, 2);
});

test('the LRU cache drops entries until the weights fit, and keeps no entry heavier than the limit', (t) => {
  const cache = new LruCache<string, number[]>({ entries: 100, weight: 10 }, (items) => items.length);
  cache.set('four', [1, 2, 3, 4]);
  cache.set('five', [1, 2, 3, 4, 5]);
  t.is(cache.weight, 9);
  cache.set('three', [1, 2, 3]);
  t.deepEqual([cache.get('four'), cache.weight], [undefined, 8], 'the oldest went to make room');
  cache.set('eleven', Array.from({ length: 11 }, (_, i) => i));
  t.is(cache.get('eleven'), undefined);
  t.is(cache.weight, 8, 'an entry over the limit on its own displaces nothing');
  cache.set('three', [1]);
  t.is(cache.weight, 6, 'replacing an entry replaces its weight');
  cache.clear();
  t.deepEqual([cache.size, cache.weight], [0, 0]);
});

test('state caches are emptied between blocks once they may have grown past their limit', (t) => {
  const bounded = new BoundedStateCaches(new Caches(), 100);
  const account = bounded.caches.account!;
  const touch = (from: number, count: number) => {
    for (let i = from; i < from + count; i++) account.put(new Address(hexToBytes(`0x${i.toString(16).padStart(40, '0')}`)), new Account(0n, BigInt(i)));
  };
  touch(0, 60);
  bounded.trim();
  t.is(account.size(), 60, 'below the limit the entries stay for the next block');
  touch(0, 30);
  bounded.trim();
  t.is(account.size(), 60, 'entries written again count towards the bound, not the size');
  touch(1000, 30);
  bounded.trim();
  t.is(account.size(), 0, 'past the limit the caches are emptied');
});

test('a filter nobody polls stops receiving transaction hashes once it expired', (t) => {
  let now = 0;
  const filters = new FilterRegistry<{ hashes: string[]; lastUsed: number }>(() => now);
  const abandoned = filters.install({ hashes: [], lastUsed: now });
  now += FILTER_IDLE_TIMEOUT_MS / 2;
  const polled = filters.install({ hashes: [], lastUsed: now });
  const deliver = (hash: string) => {
    for (const filter of filters.all()) filter.hashes.push(hash);
  };
  deliver('0x01');
  now += FILTER_IDLE_TIMEOUT_MS / 2 + 1;
  deliver('0x02');
  t.deepEqual([...filters.all()].map((f) => f.hashes), [['0x01', '0x02']], 'only the filter used within the timeout is left');
  t.is(filters.use(abandoned), undefined);
  t.deepEqual(filters.use(polled)?.hashes, ['0x01', '0x02']);
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

test('the chain store keeps recent blocks decoded within its transaction limit', async (t) => {
  const path = tempDataPath();
  const kv = await KvStore.open(path);
  t.teardown(async () => {
    await kv.close();
    removeDataPath(path);
  });
  const opts = { common: chainCommon, setHardfork: true, skipConsensusFormatValidation: true } as const;
  const store = new ChainStore(kv, {
    decodeBlock: (rlp) => blockFromRlp(rlp, opts),
    decodeHeaderOfBlock: (rlp) => createBlockHeaderFromBytesArray(headerValuesOfBlockRlp(rlp), opts),
  });
  // The store neither executes nor checks blocks: every block may carry the same transactions.
  const transactions = signedTransactions(200);
  const blocks: Block[] = [];
  const blockCount = Math.ceil(BLOCK_CACHE_LIMITS.weight / transactions.length) + 4;
  t.true(blockCount < BLOCK_CACHE_LIMITS.entries, 'the transaction limit is reached before the block limit');
  for (let n = 1; n <= blockCount; n++) {
    const block = blockWith(BigInt(n), transactions);
    await kv.write(store.blockOps(block, block.hash(), [], BigInt(n)));
    store.rememberWritten(block, block.hash(), []);
    blocks.push(block);
  }
  const latest = blocks[blocks.length - 1]!;
  t.is(await store.getBlock(latest.hash()), latest, 'the newest block is served as written');
  const oldest = blocks[0]!;
  const reread = await store.getBlock(oldest.hash());
  t.not(reread, oldest, 'the oldest block left the cache: it was decoded again');
  t.is(bytesToHex(reread!.hash()), bytesToHex(oldest.hash()));
  t.is(await store.getBlock(oldest.hash()), reread, 'and is cached again');
});
