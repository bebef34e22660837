/**
 * One transaction or receipt of a stored block is read without decoding the block (ChainStore
 * getTransaction, getReceipt, getHeader), and reads of one block under way are shared: checked against
 * the whole block decoded, on a chain reopened so that nothing is in memory.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { createLegacyTx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import { encodeReceipts, indexReceipts, receiptAt } from '../../src/chain/receipt-codec.js';
import { transactionOfBlockRlp } from '../../src/shared/ethereum/block-decode.js';
import { keccak256 } from '../../src/shared/ethereum/keccak.js';
import { rlpListItem, rlpListItems, rlpListLength } from '../../src/shared/ethereum/rlp-walk.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import type { ChainSpec } from '../../src/shared/execution/chain-spec.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, devNetwork, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

test('rlp-walk finds the items RLP.decode finds, short and long, and refuses truncated input', (t) => {
  const long = new Uint8Array(300).fill(7);
  const value = [Uint8Array.of(1), Uint8Array.of(0x80), new Uint8Array(0), long, [Uint8Array.of(2), [long, long]], Array.from({ length: 40 }, (_, i) => Uint8Array.of(i))];
  const encoded = RLP.encode(value);
  t.is(rlpListLength(encoded), value.length);
  const items = rlpListItems(encoded);
  t.is(items.length, value.length);
  items.forEach((item, i) => {
    t.deepEqual(RLP.decode(item), RLP.decode(RLP.encode(value[i]!)), `item ${i}`);
    t.deepEqual(rlpListItem(encoded, i), item);
  });
  t.is(rlpListItem(encoded, value.length), undefined);
  t.is(rlpListLength(RLP.encode([])), 0);
  t.throws(() => rlpListItems(encoded.subarray(0, encoded.length - 1)), { message: /invalid RLP/ });
  t.throws(() => rlpListItem(RLP.encode(long), 0), { message: /a list was expected/ });
});

/** Init code of a contract whose every call logs once (LOG0 of no data). */
const LOGGER_INIT = '0x6006600c60003960066000f360006000a000';

test('a transaction, receipt and header of a block not in memory are read alone, as the whole block decoded gives them', async (t) => {
  const path = tempDataPath();
  t.teardown(() => removeDataPath(path));
  const [alice, bob] = [DEV_ACCOUNTS[0].privateKey, DEV_ACCOUNTS[1].privateKey];
  let chain = await openDevChain(path);
  const deploy = signedTx(alice, 0n, { data: LOGGER_INIT });
  await proposeAndCommit(chain, [candidate(deploy)]);
  const logger = bytesToHex((await chain.store.getReceipts((await chain.store.getBlockByNumber(1n))!.hash()))![0]!.contractAddress!);
  // Calls that log and transfers that do not, interleaved, so that each receipt's first log index differs.
  const txs = [1n, 2n, 3n, 4n, 5n].flatMap((nonce) => [signedTx(alice, nonce, { to: logger, data: '0x' }), signedTx(bob, nonce - 1n)]);
  const { sealed } = await proposeAndCommit(chain, txs.map(candidate));
  await proposeAndCommit(chain, []);
  await chain.close();

  const spec = await chainSpecFromGenesis(JSON.stringify(devNetwork.genesisJson));
  let wholeDecodes = 0;
  const counting: ChainSpec = { ...spec, decodeBlock: (rlp) => (wholeDecodes++, spec.decodeBlock(rlp)) };
  chain = await Chain.open(path, counting);
  t.teardown(() => chain.close());
  const { store } = chain;
  const hash = sealed.hash();
  // Opening reads the head block (block 3), not block 2.
  const decodesAtOpen = wholeDecodes;

  const header = await store.getHeader(hash);
  t.is(bytesToHex(header!.hash()), bytesToHex(hash));
  t.is(header!.number, 2n);
  const location = await store.getTxLocation(txs[3]!.hash());
  t.deepEqual({ ...location!, blockHash: bytesToHex(location!.blockHash) }, { blockHash: bytesToHex(hash), blockNumber: 2n, index: 3 });
  for (let index = 0; index < txs.length; index++) {
    const found = await store.getTransaction(hash, index);
    t.is(bytesToHex(found!.tx.hash()), bytesToHex(txs[index]!.hash()));
    t.deepEqual(found!.tx.serialize(), sealed.transactions[index]!.serialize());
    t.is(found!.tx.getSenderAddress().toString(), sealed.transactions[index]!.getSenderAddress().toString());
  }
  const alone: Awaited<ReturnType<typeof store.getReceipt>>[] = [];
  for (let index = 0; index < txs.length; index++) alone.push(await store.getReceipt(hash, index));
  t.is(await store.getTransaction(hash, txs.length), undefined);
  t.is(await store.getReceipt(hash, txs.length), undefined);
  // Senders as the receipts record them (eth_getBlockByNumber with full transactions recovers none).
  t.deepEqual((await store.getSenders(hash))!.map(bytesToHex), sealed.transactions.map((tx) => tx.getSenderAddress().toString()));
  t.is(await store.getSenders(new Uint8Array(32)), undefined);
  t.is(wholeDecodes - decodesAtOpen, 0, 'nothing above decoded the whole block');

  const receipts = await store.getReceipts(hash);
  let logIndexStart = 0;
  receipts!.forEach((receipt, index) => {
    t.deepEqual(alone[index], { receipt, logIndexStart }, `receipt ${index}`);
    logIndexStart += receipt.logs.length;
  });
  t.is(logIndexStart, 5);
  const empty = indexReceipts(encodeReceipts([]));
  t.is(receiptAt(empty, 0), undefined, 'a block without transactions has no receipt 0');
  t.is(receiptAt(indexReceipts(encodeReceipts(receipts!)), -1), undefined);
  // Once the receipts are in memory, the same answers come from there.
  t.deepEqual(await store.getReceipt(hash, 7), alone[7]);
  t.deepEqual((await store.getSenders(hash))!.map(bytesToHex), sealed.transactions.map((tx) => tx.getSenderAddress().toString()));
});

test('reads of one block not in memory made at the same time decode it once', async (t) => {
  const path = tempDataPath();
  t.teardown(() => removeDataPath(path));
  let chain = await openDevChain(path);
  const alice = DEV_ACCOUNTS[0].privateKey;
  const { sealed } = await proposeAndCommit(chain, [0n, 1n, 2n].map((nonce) => candidate(signedTx(alice, nonce))));
  await proposeAndCommit(chain, []);
  await chain.close();

  const spec = await chainSpecFromGenesis(JSON.stringify(devNetwork.genesisJson));
  let wholeDecodes = 0;
  chain = await Chain.open(path, { ...spec, decodeBlock: (rlp) => (wholeDecodes++, spec.decodeBlock(rlp)) });
  t.teardown(() => chain.close());
  const decodesAtOpen = wholeDecodes;
  const blocks = await Promise.all(Array.from({ length: 8 }, () => chain.store.getBlock(sealed.hash())));
  t.is(wholeDecodes - decodesAtOpen, 1);
  t.true(blocks.every((block) => block === blocks[0]));
  t.is(blocks[0]!.transactions.length, 3);
  const receipts = await Promise.all(Array.from({ length: 8 }, () => chain.store.getReceipts(sealed.hash())));
  t.true(receipts.every((list) => list === receipts[0] && list!.length === 3));
});

test('the transactions of a QBFT block decoded from its encoding keep their hash and sender: hashed from the encoding, recovered once', async (t) => {
  const path = tempDataPath();
  t.teardown(() => removeDataPath(path));
  const [alice, bob] = [DEV_ACCOUNTS[0].privateKey, DEV_ACCOUNTS[1].privateKey];
  const chain = await openDevChain(path);
  t.teardown(() => chain.close());
  const legacy = createLegacyTx(
    { nonce: 0n, gasPrice: 10n ** 10n, gasLimit: 21_000n, to: '0x00000000000000000000000000000000000c0ffe', value: 3n },
    { common: txCommonFor(1337n, 'cancun') },
  ).sign(hexToBytes(bob as `0x${string}`));
  const txs = [signedTx(alice, 0n), legacy, signedTx(alice, 1n, { data: LOGGER_INIT })];
  const { sealed } = await proposeAndCommit(chain, txs.map(candidate));
  const rlp = sealed.serialize();
  const spec = await chainSpecFromGenesis(JSON.stringify(devNetwork.genesisJson));
  const decoded = spec.decodeBlock(rlp);
  const header = spec.decodeHeaderOfBlock(rlp);
  t.is(decoded.transactions.length, txs.length);
  for (const [index, original] of txs.entries()) {
    for (const tx of [decoded.transactions[index]!, transactionOfBlockRlp(rlp, header, index)!]) {
      // ethereumjs keeps the hash and the sender only on a frozen transaction (QBFT blocks are decoded unfrozen).
      t.true(Object.isFrozen(tx), `transaction ${index} frozen`);
      t.is(bytesToHex(tx.hash()), bytesToHex(original.hash()), `transaction ${index} hash`);
      t.is(bytesToHex(tx.hash()), bytesToHex(keccak256(tx.serialize())), `transaction ${index}: the pinned hash is the encoding's`);
      const key = tx.getSenderPublicKey();
      t.is(tx.getSenderPublicKey(), key, `transaction ${index}: the sender is recovered once and kept`);
      t.is(tx.getSenderAddress().toString(), original.getSenderAddress().toString());
    }
  }
});
