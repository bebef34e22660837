/**
 * A block the chain builds is encoded from its transactions' bytes (src/chain/block-encoding.ts) and
 * its roots computed in one pass (ordered-trie.ts): the bytes and roots must be exactly ethereumjs'
 * for every transaction type, and the block consensus sends back sealed is stored as that block.
 */
import test from 'ava';
import { genTransactionsTrieRoot } from '@ethereumjs/block';
import { createAccessList2930Tx, createLegacyTx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeExtraData, encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, signCommitSeal } from '../../src/shared/qbft/seal.js';
import { storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, devNetwork, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const txCommon = txCommonFor(1337n, 'cancun');
const key = (i: number) => hexToBytes(DEV_ACCOUNTS[i]!.privateKey as `0x${string}`);
const to = '0x00000000000000000000000000000000000c0ffe';

test('a built block: its bytes and transactions root are ethereumjs\' own, and its sealed return is stored as built', async (t) => {
  const path = tempDataPath();
  const otherPath = tempDataPath();
  const chain = await openDevChain(path);
  const other = await openDevChain(otherPath);
  try {
    const transactions = [
      signedTx(DEV_ACCOUNTS[0].privateKey, 0n),
      signedTx(DEV_ACCOUNTS[0].privateKey, 1n, { data: storeAndLogDeployCode() }),
      createLegacyTx({ nonce: 0n, gasPrice: 10n ** 10n, gasLimit: 21_000n, to, value: 7n }, { common: txCommon }).sign(key(1)),
      createAccessList2930Tx({ chainId: 1337n, nonce: 0n, gasPrice: 10n ** 10n, gasLimit: 30_000n, to, value: 1n, accessList: [{ address: to, storageKeys: [] }] }, { common: txCommon }).sign(key(2)),
    ];
    const head = chain.getHead();
    const unsealed = { vanity: new Uint8Array(32), validators: decodeExtraData(head.extraData).validators, round: 0, seals: [] as Uint8Array[] };
    const built = await chain.buildBlock({
      timestamp: head.timestamp + 1n,
      coinbase: addressOf(devNetwork.validatorKey),
      extraData: encodeExtraData(unsealed),
      maxBuildMs: 10_000,
      transactions: transactions.map(candidate),
    });
    t.is(built.block.transactions.length, 4);
    t.is(bytesToHex(built.rlp), bytesToHex(built.block.serialize()));
    t.is(bytesToHex(built.block.header.transactionsTrie), bytesToHex(await genTransactionsTrieRoot(built.block.transactions)));
    t.deepEqual(built.block.transactions.map((tx) => bytesToHex(tx.hash())), transactions.map((tx) => bytesToHex(tx.hash())));

    // Consensus hands the block back sealed: stored as the block built, with the seal.
    const sealed = chain.spec.decodeBlock(built.rlp);
    const sealedExtra = encodeExtraData({ ...unsealed, seals: [signCommitSeal(built.hash, devNetwork.validatorKey)] });
    const sealedBlock = chain.spec.createBlock({ ...sealed.header.toJSON(), extraData: sealedExtra } as never, [...sealed.transactions], sealed.withdrawals);
    const event = (await chain.importCommitted(sealedBlock.serialize()))!;
    t.is(bytesToHex(event.head.hash), bytesToHex(built.hash));
    const stored = (await chain.store.getBlock(built.hash))!;
    t.is(bytesToHex(stored.serialize()), bytesToHex(sealedBlock.serialize()));
    t.is(bytesToHex(stored.header.extraData), bytesToHex(sealedExtra));

    // A committed block that is not the one held: decoded in full and executed.
    const theirs = await proposeAndCommit(other, [candidate(signedTx(DEV_ACCOUNTS[0].privateKey, 0n))]);
    const mine = await proposeAndCommit(chain, [candidate(signedTx(DEV_ACCOUNTS[0].privateKey, 2n))]);
    t.not(bytesToHex(mine.sealed.hash()), bytesToHex(theirs.sealed.hash()));
    const freshPath = tempDataPath();
    const fresh = await openDevChain(freshPath);
    try {
      const imported = (await fresh.importCommitted(theirs.sealed.serialize()))!;
      t.is(bytesToHex(imported.head.hash), bytesToHex(theirs.sealed.hash()));
      t.is(bytesToHex(imported.head.stateRoot), bytesToHex(other.getHead().stateRoot));
    } finally {
      await fresh.close();
      removeDataPath(freshPath);
    }
  } finally {
    await chain.close();
    await other.close();
    removeDataPath(path);
    removeDataPath(otherPath);
  }
});
