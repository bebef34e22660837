/**
 * Chain.prebuild, in one process: transactions executed ahead of the block timer end up in the block
 * buildBlock then finishes, and that block is one a follower accepts by executing it itself; a build
 * for another time, or any import meanwhile, throws the early work away without a trace in the state.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const dev = loadDevNetwork();
const txCommon = txCommonFor(1337n, 'cancun');
const GWEI = 10n ** 9n;
const COINBASE = hexToBytes(`0x${'c0'.repeat(20)}`);
const RECIPIENT = bytesToHex(privateToAddress(hexToBytes(`0x${'42'.repeat(32)}`)));

function transfer(account: number, nonce: bigint, value = 1n): PoolTxForBlock {
  const tx = createFeeMarket1559Tx(
    { chainId: 1337n, nonce, gasLimit: 21_000n, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 1n, to: RECIPIENT, value },
    { common: txCommon },
  ).sign(hexToBytes(DEV_ACCOUNTS[account]!.privateKey as `0x${string}`));
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

async function twoChains(t: { teardown(fn: () => Promise<void>): void }) {
  const spec = await chainSpecFromGenesis(JSON.stringify(dev.genesisJson));
  const paths = [tempDataPath(), tempDataPath()];
  const [proposer, follower] = await Promise.all(paths.map((path) => Chain.open(path, spec)));
  t.teardown(async () => {
    await Promise.all([proposer!.close(), follower!.close()]);
    paths.forEach(removeDataPath);
  });
  return { proposer: proposer!, follower: follower! };
}

const hashes = (txs: readonly { hash(): Uint8Array }[]) => txs.map((tx) => bytesToHex(tx.hash()));

test('transactions executed ahead of the timer and those added at the timer make one block a follower accepts', async (t) => {
  const { proposer, follower } = await twoChains(t);
  const head = proposer.getHead();
  const timestamp = head.timestamp + 1n;
  const early = [transfer(0, 0n), transfer(1, 0n), transfer(0, 1n)];
  const late = [transfer(1, 1n), transfer(2, 0n)];
  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp, coinbase: COINBASE, transactions: early.slice(0, 2) }), 2);
  // The pool hands over a candidate twice: it runs once.
  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp, coinbase: COINBASE, transactions: early }), 3);
  const built = await proposer.buildBlock({ timestamp, coinbase: COINBASE, extraData: head.extraData, maxBuildMs: 10_000, transactions: [...early, ...late] });
  t.deepEqual(hashes(built.block.transactions), [...early, ...late].map((tx) => bytesToHex(tx.hash)));
  t.deepEqual(built.rejected, []);
  await proposer.importBuilt(built, head.extraData);

  const imported = await follower.importBlock(built.block);
  t.truthy(imported, 'the follower executed the block and agreed on its state root, receipts and gas');
  t.deepEqual(follower.getHead().stateRoot, proposer.getHead().stateRoot);
});

test('a build for another time starts over: the early execution leaves no trace', async (t) => {
  const { proposer, follower } = await twoChains(t);
  const head = proposer.getHead();
  const txs = [transfer(0, 0n, 5n), transfer(0, 1n, 7n)];
  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp: head.timestamp + 1n, coinbase: COINBASE, transactions: txs }), 2);
  // The timer fired late: the block gets a later time, so the transactions run again in it.
  const built = await proposer.buildBlock({ timestamp: head.timestamp + 2n, coinbase: COINBASE, extraData: head.extraData, maxBuildMs: 10_000, transactions: txs });
  t.is(built.block.header.timestamp, head.timestamp + 2n);
  t.deepEqual(hashes(built.block.transactions), txs.map((tx) => bytesToHex(tx.hash)), 'both ran, at nonces 0 and 1: the first execution was undone');
  await proposer.importBuilt(built, head.extraData);
  t.truthy(await follower.importBlock(built.block));
  t.deepEqual(follower.getHead().stateRoot, proposer.getHead().stateRoot);
});

test('a block imported while early work is open replaces it; the next block builds on the imported one', async (t) => {
  const { proposer, follower } = await twoChains(t);
  const head = proposer.getHead();
  // Another validator's block 1 spends dev account 0's nonce 0 differently.
  const theirs = await follower.buildBlock({
    timestamp: head.timestamp + 1n,
    coinbase: new Uint8Array(20),
    extraData: head.extraData,
    maxBuildMs: 10_000,
    transactions: [transfer(0, 0n, 99n)],
  });
  await follower.importBuilt(theirs, head.extraData);

  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp: head.timestamp + 1n, coinbase: COINBASE, transactions: [transfer(0, 0n, 5n), transfer(1, 0n)] }), 2);
  t.truthy(await proposer.importBlock(theirs.block));
  t.deepEqual(proposer.getHead().stateRoot, follower.getHead().stateRoot, 'the early work did not leak into the imported state');
  // Early work for a parent that is no longer the head is refused.
  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp: head.timestamp + 1n, coinbase: COINBASE, transactions: [transfer(1, 0n)] }), 0);

  const next = proposer.getHead();
  const stale = transfer(0, 0n, 5n);
  const built = await proposer.buildBlock({ timestamp: next.timestamp + 1n, coinbase: COINBASE, extraData: next.extraData, maxBuildMs: 10_000, transactions: [transfer(0, 1n), transfer(1, 0n), stale] });
  t.deepEqual(
    built.rejected.map((r) => [bytesToHex(r.hash), r.reason]),
    [[bytesToHex(stale.hash), 'nonce-too-low']],
  );
  t.is(built.block.transactions.length, 2);
  await proposer.importBuilt(built, next.extraData);
  t.truthy(await follower.importBlock(built.block));
  t.deepEqual(follower.getHead().stateRoot, proposer.getHead().stateRoot);
});

test('a candidate left out ahead of the timer is reported by the build, with its reason', async (t) => {
  const { proposer } = await twoChains(t);
  const head = proposer.getHead();
  const timestamp = head.timestamp + 1n;
  const gap = transfer(0, 3n);
  t.is(await proposer.prebuild({ parentHash: head.hash, timestamp, coinbase: COINBASE, transactions: [transfer(1, 0n), gap] }), 1);
  const built = await proposer.buildBlock({ timestamp, coinbase: COINBASE, extraData: head.extraData, maxBuildMs: 10_000, transactions: [transfer(2, 0n)] });
  t.is(built.block.transactions.length, 2);
  t.deepEqual(
    built.rejected.map((r) => [bytesToHex(r.hash), r.reason]),
    [[bytesToHex(gap.hash), 'nonce-too-high']],
  );
});

test('maxTransactions counts what was executed ahead of the timer', async (t) => {
  const { proposer } = await twoChains(t);
  const head = proposer.getHead();
  const timestamp = head.timestamp + 1n;
  await proposer.prebuild({ parentHash: head.hash, timestamp, coinbase: COINBASE, maxTransactions: 3, transactions: [transfer(0, 0n), transfer(0, 1n)] });
  const built = await proposer.buildBlock({
    timestamp,
    coinbase: COINBASE,
    extraData: head.extraData,
    maxBuildMs: 10_000,
    maxTransactions: 3,
    transactions: [transfer(1, 0n), transfer(1, 1n), transfer(2, 0n)],
  });
  t.is(built.block.transactions.length, 3);
});
