/**
 * What the chain publishes to the transports for their subscriptions (src/chain/block-publisher.ts),
 * on a real chain in one process: nothing without interest; the block, full transactions only when
 * asked, and each log once per head for every interested transport; and for a re-org (a NewHeadEvent
 * naming removed blocks) the logs of the removed blocks with `removed: true` before the added blocks.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { BlockPublisher } from '../../src/chain/block-publisher.js';
import { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import type { CanonicalBlocksEvent, NewHeadEvent } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { STORED_EVENT_TOPIC, storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const dev = loadDevNetwork();
const txCommon = txCommonFor(1337n, 'cancun');
const KEY = hexToBytes(DEV_ACCOUNTS[0].privateKey);

function candidate(nonce: bigint, fields: { to?: `0x${string}`; data?: `0x${string}` }) {
  const tx = createFeeMarket1559Tx(
    { chainId: 1337n, nonce, gasLimit: 300_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, ...fields },
    { common: txCommon },
  ).sign(KEY);
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

async function buildAndImport(chain: Chain, transactions: ReturnType<typeof candidate>[]): Promise<NewHeadEvent> {
  const head = chain.getHead();
  const built = await chain.buildBlock({ timestamp: head.timestamp + 1n, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions });
  return chain.importBuilt(built, head.extraData);
}

test('publication: interest decides what is formatted and who hears it; a re-org publishes removed logs first', async (t) => {
  const path = tempDataPath();
  const chain = await Chain.open(path, await chainSpecFromGenesis(JSON.stringify(dev.genesisJson)));
  const emitted: [number, CanonicalBlocksEvent][] = [];
  const warnings: string[] = [];
  const publisher = new BlockPublisher(chain.store, (transport, event) => emitted.push([transport, event]), (message) => warnings.push(message));
  try {
    const deployed = await buildAndImport(chain, [candidate(0n, { data: storeAndLogDeployCode() as `0x${string}` })]);
    publisher.publish(deployed);
    await publisher.idle();
    t.deepEqual(emitted, [], 'no transport subscribed to anything');

    const receipts = await chain.store.getReceipts(deployed.head.hash);
    t.truthy(receipts?.[0]?.contractAddress);
    const contract = bytesToHex(receipts![0]!.contractAddress!);
    publisher.setInterest(0, { newHeads: true, newHeadsWithTransactions: false, logs: true });
    publisher.setInterest(1, { newHeads: false, newHeadsWithTransactions: true, logs: false });
    publisher.setInterest(2, { newHeads: false, newHeadsWithTransactions: false, logs: false });
    const withLog = await buildAndImport(chain, [candidate(1n, { to: contract, data: `0x${'00'.repeat(31)}2a` })]);
    publisher.publish(withLog);
    await publisher.idle();

    t.deepEqual(emitted.map(([transport]) => transport), [0, 1], 'one event per interested transport, none for the other');
    const [event] = [emitted[0]![1]];
    t.is(emitted[1]![1], event, 'the same event, formatted once');
    t.deepEqual(event.removed, []);
    const [added] = event.added;
    const blockHash = bytesToHex(withLog.head.hash);
    const header = JSON.parse(added!.header!) as Record<string, unknown>;
    t.is(header.hash, blockHash);
    t.is(header.number, '0x2');
    t.deepEqual(header.transactions, [bytesToHex(withLog.includedTxHashes[0]!)]);
    const full = JSON.parse(added!.headerWithTransactions!) as { transactions: { hash: string; from: string }[] };
    t.is(full.transactions[0]!.hash, bytesToHex(withLog.includedTxHashes[0]!));
    t.is(full.transactions[0]!.from, DEV_ACCOUNTS[0].address);
    t.is(added!.logs.length, 1);
    t.is(bytesToHex(added!.logs[0]!.address), contract);
    t.deepEqual(added!.logs[0]!.topics.map(bytesToHex), [STORED_EVENT_TOPIC]);
    const logJson = JSON.parse(added!.logs[0]!.json) as Record<string, unknown>;
    t.deepEqual(Object.keys(logJson), ['logIndex', 'removed', 'blockNumber', 'blockHash', 'blockTimestamp', 'transactionHash', 'transactionIndex', 'address', 'data', 'topics']);
    t.like(logJson, { removed: false, blockHash, blockNumber: '0x2', address: contract, logIndex: '0x0' });

    // A re-org: block 2 leaves the canonical chain (it stays in the database) and block 3 joins.
    emitted.length = 0;
    publisher.setInterest(1, { newHeads: false, newHeadsWithTransactions: false, logs: false });
    const next = await buildAndImport(chain, []);
    publisher.publish({ ...next, removedBlocks: [withLog.head.hash], addedBlocks: [next.head.hash] });
    await publisher.idle();
    t.deepEqual(emitted.map(([transport]) => transport), [0]);
    const reorg = emitted[0]![1];
    t.is(reorg.removed.length, 1);
    t.is(reorg.removed[0]!.header, undefined, 'removed blocks are not announced as heads');
    t.like(JSON.parse(reorg.removed[0]!.logs[0]!.json), { removed: true, blockHash, transactionHash: bytesToHex(withLog.includedTxHashes[0]!) });
    t.is((JSON.parse(reorg.added[0]!.header!) as { hash: string }).hash, bytesToHex(next.head.hash));
    t.deepEqual(warnings, []);
  } finally {
    await chain.close();
    removeDataPath(path);
  }
});

test('a head whose block cannot be read is reported, and later heads are still published', async (t) => {
  const path = tempDataPath();
  const chain = await Chain.open(path, await chainSpecFromGenesis(JSON.stringify(dev.genesisJson)));
  const emitted: CanonicalBlocksEvent[] = [];
  const warnings: string[] = [];
  const publisher = new BlockPublisher(chain.store, (_, event) => emitted.push(event), (message) => warnings.push(message));
  try {
    publisher.setInterest(0, { newHeads: true, newHeadsWithTransactions: false, logs: false });
    const first = await buildAndImport(chain, []);
    publisher.publish({ ...first, addedBlocks: [new Uint8Array(32).fill(9)] });
    publisher.publish(first);
    await publisher.idle();
    t.is(warnings.length, 1);
    t.regex(warnings[0]!, /is not stored/);
    t.is(emitted.length, 1);
    t.is((JSON.parse(emitted[0]!.added[0]!.header!) as { number: string }).number, '0x1');
  } finally {
    await chain.close();
    removeDataPath(path);
  }
});
