/**
 * Chain.validateBlock in one process: a block proposed by another node (here: built by another Chain
 * on the same genesis) is checked and executed on a scratch state. A good block validates without
 * touching the database, the head or a block being built; a block that lies about its execution,
 * has no known parent or carries a broken signature is refused with the reason; a block validated
 * and then imported is stored from that validation.
 */
import test from 'ava';
import type { Block, HeaderData } from '@ethereumjs/block';
import { genTransactionsTrieRoot } from '@ethereumjs/block';
import { create1559FeeMarketTxFromBytesArray } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, createAddressFromString } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { Chain } from '../../src/chain/chain.js';
import type { ChainImportRules } from '../../src/chain/import-rules.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, devNetwork, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { storeAndLogDeployCode } from '../helpers/contracts.js';

const dev = devNetwork;
const QBFT_RULES: ChainImportRules = { consensus: 'qbft' };
const txCommon = txCommonFor(1337n, 'cancun');
const openChain = openDevChain;
const signedTransfer = (key: string, nonce: bigint, data?: string) => signedTx(key, nonce, data === undefined ? {} : { data });

/** `block` with some header fields and/or transactions replaced, as a proposer that lies would send it. */
function forged(chain: Chain, block: Block, header: Partial<HeaderData>, transactions?: TypedTransaction[]): Uint8Array {
  const data = { ...(block.header.toJSON() as HeaderData), ...header };
  return chain.spec.createBlock(data, transactions ?? [...block.transactions], block.withdrawals).serialize();
}

/** Counts transactions the chain's building VM executes (importBlock's execution path). */
function countImportExecutions(chain: Chain): () => number {
  let executed = 0;
  // The building VM is private: the test watches it to tell a reused validation from a re-execution.
  (chain as unknown as { buildVm: VM }).buildVm.events.on('afterTx', (_event: unknown, resolve?: () => void) => {
    executed++;
    resolve?.();
  });
  return () => executed;
}

const paths: string[] = [];
test.after.always(() => paths.forEach(removeDataPath));
const newPath = (): string => {
  const path = tempDataPath();
  paths.push(path);
  return path;
};

test('a block built elsewhere validates, leaves the head, the database and a held block untouched, then imports from the validation', async (t) => {
  const builder = await openChain(newPath());
  const validatorPath = newPath();
  let validator = await openChain(validatorPath);
  try {
    const genesis = validator.getHead();
    const deploy = signedTransfer(DEV_ACCOUNTS[1].privateKey, 0n, storeAndLogDeployCode());
    const block1 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n)), candidate(deploy)]);
    t.is(block1.sealed.transactions.length, 2);

    // The unsealed proposal (what consensus validates) and the sealed block both validate.
    t.deepEqual(await validator.validateBlock(block1.proposal, QBFT_RULES), { valid: true });
    t.deepEqual(await validator.validateBlock(block1.sealed.serialize(), QBFT_RULES), { valid: true });
    t.is(bytesToHex(validator.getHead().hash), bytesToHex(genesis.hash));

    // A block the validator itself holds from building survives a validation in between.
    const ownHead = validator.getHead();
    const own = await validator.buildBlock({
      timestamp: ownHead.timestamp + 7n,
      coinbase: addressOf(dev.validatorKey),
      extraData: ownHead.extraData,
      maxBuildMs: 10_000,
      transactions: [candidate(signedTransfer(DEV_ACCOUNTS[2].privateKey, 0n))],
    });
    t.deepEqual(await validator.validateBlock(block1.proposal, QBFT_RULES), { valid: true });
    const ownEvent = await validator.importBuilt(own, ownHead.extraData);
    t.is(validator.getHead().number, 1n);

    // Restart the chain that imported its own block: no trace of the validated one in the database.
    await validator.close();
    validator = await openChain(validatorPath);
    t.is(bytesToHex(validator.getHead().hash), bytesToHex(ownEvent.head.hash));
    t.is(await validator.store.getBlock(block1.sealed.hash()), undefined);
    t.false(await validator.withStateAt(ownEvent.head.stateRoot, (vm) => vm.stateManager.hasStateRoot(block1.sealed.header.stateRoot)));
    // The held block's state was stored whole: its transfer is readable after the restart.
    const recipient = await validator.withStateAt(ownEvent.head.stateRoot, (vm) =>
      vm.stateManager.getAccount(createAddressFromString('0x00000000000000000000000000000000000c0ffe')),
    );
    t.is(recipient?.balance, 5n);
  } finally {
    await builder.close();
    await validator.close();
  }
});

test('validate then import stores the validated execution; the next block executes on the state it wrote', async (t) => {
  const builder = await openChain(newPath());
  const importerPath = newPath();
  let importer = await openChain(importerPath);
  try {
    const block1 = await proposeAndCommit(builder, [
      candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n)),
      candidate(signedTransfer(DEV_ACCOUNTS[1].privateKey, 0n, storeAndLogDeployCode())),
    ]);
    const block2 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 1n))]);
    const executions = countImportExecutions(importer);

    t.deepEqual(await importer.validateBlock(block1.proposal, QBFT_RULES), { valid: true });
    const event = (await importer.importBlock(importer.spec.decodeBlock(block1.sealed.serialize())))!;
    t.is(executions(), 0, 'the committed block was stored from its validation');
    t.is(bytesToHex(event.head.hash), bytesToHex(block1.sealed.hash()));
    t.deepEqual(await importer.store.getReceipts(event.head.hash), await builder.store.getReceipts(block1.sealed.hash()));
    t.is(event.senderNonces.length, 2);
    t.is(event.senderAccounts, undefined, 'a block from elsewhere of long ago (catching up) carries no accounts for the pool');

    // Stored state must be whole: after a restart, block 2 executes on top of it.
    await importer.close();
    importer = await openChain(importerPath);
    const executionsAfterRestart = countImportExecutions(importer);
    const event2 = (await importer.importBlock(importer.spec.decodeBlock(block2.sealed.serialize())))!;
    t.is(executionsAfterRestart(), 1, 'block 2 was not validated first, so it executed');
    t.is(bytesToHex(event2.head.stateRoot), bytesToHex(block2.sealed.header.stateRoot));
    t.deepEqual(await importer.store.getReceipts(event2.head.hash), await builder.store.getReceipts(block2.sealed.hash()));

    // A validation of one block is not reused for another with the same parent.
    const block3 = await proposeAndCommit(builder, []);
    // Another gas limit: another block with the same state (a new timestamp would change what EIP-4788 stores).
    const otherBlock3 = forged(importer, block3.sealed, { gasLimit: block3.sealed.header.gasLimit - 1n });
    t.deepEqual(await importer.validateBlock(otherBlock3, QBFT_RULES), { valid: true });
    const event3 = (await importer.importBlock(importer.spec.decodeBlock(block3.sealed.serialize())))!;
    t.is(bytesToHex(event3.head.hash), bytesToHex(block3.sealed.hash()));
  } finally {
    await builder.close();
    await importer.close();
  }
});

test('blocks that lie about execution, have no known parent or carry a broken signature are refused with the reason', async (t) => {
  const builder = await openChain(newPath());
  const validatorPath = newPath();
  const validator = await openChain(validatorPath);
  try {
    const transfer = signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n);
    const { sealed } = await proposeAndCommit(builder, [candidate(transfer)]);
    const head = validator.getHead();

    const wrongRoot = await validator.validateBlock(forged(validator, sealed, { stateRoot: new Uint8Array(32).fill(7) }), QBFT_RULES);
    t.false(wrongRoot.valid);
    t.regex(wrongRoot.reason ?? '', /invalid block stateRoot/);

    const wrongGas = await validator.validateBlock(forged(validator, sealed, { gasUsed: sealed.header.gasUsed + 1n }), QBFT_RULES);
    t.false(wrongGas.valid);
    t.regex(wrongGas.reason ?? '', /invalid gasUsed/);

    const wrongReceipts = await validator.validateBlock(forged(validator, sealed, { receiptTrie: new Uint8Array(32).fill(9) }), QBFT_RULES);
    t.false(wrongReceipts.valid);
    t.regex(wrongReceipts.reason ?? '', /invalid receiptTrie/);

    const wrongBloom = await validator.validateBlock(forged(validator, sealed, { logsBloom: new Uint8Array(256).fill(1) }), QBFT_RULES);
    t.false(wrongBloom.valid);
    t.regex(wrongBloom.reason ?? '', /invalid bloom/);

    // Refused blocks left nothing behind: the block itself still validates.
    t.deepEqual(await validator.validateBlock(sealed.serialize(), QBFT_RULES), { valid: true });

    const orphanParent = new Uint8Array(32).fill(0x42);
    const orphan = await validator.validateBlock(forged(validator, sealed, { parentHash: orphanParent }), QBFT_RULES);
    t.deepEqual(orphan, { valid: false, reason: `unknown parent block ${bytesToHex(orphanParent)}` });

    // r = 2^256-1 is no point on the curve: the signature cannot be recovered.
    const fields = transfer.raw();
    fields[10] = new Uint8Array(32).fill(0xff);
    const broken = create1559FeeMarketTxFromBytesArray(fields, { common: txCommon });
    const badSignature = await validator.validateBlock(
      forged(validator, sealed, { transactionsTrie: await genTransactionsTrieRoot([broken]) }, [broken]),
      QBFT_RULES,
    );
    t.false(badSignature.valid);
    t.regex(badSignature.reason ?? '', /^transaction 0 is invalid: Invalid Signature/);

    const garbage = await validator.validateBlock(Uint8Array.of(0xc3, 0x01, 0x02, 0x03), QBFT_RULES);
    t.false(garbage.valid);
    t.regex(garbage.reason ?? '', /^undecodable block/);

    // Nothing moved, and the true block still validates and imports.
    t.is(bytesToHex(validator.getHead().hash), bytesToHex(head.hash));
    t.deepEqual(await validator.validateBlock(sealed.serialize(), QBFT_RULES), { valid: true });
    await validator.importBlock(validator.spec.decodeBlock(sealed.serialize()));
    t.is(bytesToHex(validator.getHead().hash), bytesToHex(sealed.hash()));
  } finally {
    await builder.close();
    await validator.close();
  }
});

test('senders the pool already knows are taken, not recovered: asked by transaction hash, trusted where given', async (t) => {
  const builder = await openChain(newPath());
  const validator = await openChain(newPath());
  try {
    const first = signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n);
    const second = signedTransfer(DEV_ACCOUNTS[1].privateKey, 0n);
    const { proposal } = await proposeAndCommit(builder, [candidate(first), candidate(second)]);

    const asked: string[][] = [];
    // The pool holds the first transaction only: the second's sender is recovered from its signature.
    const known = (keys: (Uint8Array | null)[]) => async (hashes: Uint8Array[]) => {
      asked.push(hashes.map(bytesToHex));
      return keys;
    };
    t.deepEqual(await validator.validateBlock(proposal, QBFT_RULES, known([first.getSenderPublicKey(), null])), { valid: true });
    t.deepEqual(asked, [[first, second].map((tx) => bytesToHex(tx.hash()))]);

    // A key from the lookup is used as it is: given another account's, the block executes differently.
    const wrong = await validator.validateBlock(proposal, QBFT_RULES, known([second.getSenderPublicKey(), null]));
    t.false(wrong.valid);
  } finally {
    await builder.close();
    await validator.close();
  }
});

test('a committed block that full sync stored first is not imported again: undefined, the head and the database unchanged', async (t) => {
  const builder = await openChain(newPath());
  const importer = await openChain(newPath());
  try {
    const block1 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n))]);
    const block2 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 1n))]);
    // Full sync imports both from a peer, then consensus, a round late, stores the first and the second.
    t.truthy(await importer.importBlock(importer.spec.decodeBlock(block1.sealed.serialize())));
    t.truthy(await importer.importBlock(importer.spec.decodeBlock(block2.sealed.serialize())));
    const executions = countImportExecutions(importer);
    t.is(await importer.importCommitted(block2.sealed.serialize()), undefined, 'the head');
    t.is(await importer.importCommitted(block1.sealed.serialize()), undefined, 'a canonical block below the head');
    t.is(executions(), 0, 'not executed again');
    t.is(importer.getHead().number, 2n);
    t.is(bytesToHex(importer.getHead().hash), bytesToHex(block2.sealed.hash()));
    // The chain goes on from there: the next committed block is stored.
    const block3 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 2n))]);
    const event = await importer.importCommitted(block3.sealed.serialize());
    t.is(event?.head.number, 3n);
    t.is(bytesToHex(importer.getHead().stateRoot), bytesToHex(builder.getHead().stateRoot));
  } finally {
    await builder.close();
    await importer.close();
  }
});

test('the committed proposal a validation executed is stored from it, sealed, without decoding it again; another body is not', async (t) => {
  const builder = await openChain(newPath());
  const importer = await openChain(newPath());
  try {
    const block1 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 0n)), candidate(signedTransfer(DEV_ACCOUNTS[1].privateKey, 0n))]);
    const executions = countImportExecutions(importer);
    t.deepEqual(await importer.validateBlock(block1.proposal, QBFT_RULES), { valid: true });
    const decodeBlock = importer.spec.decodeBlock.bind(importer.spec);
    let decoded = 0;
    // Watching the spec's decoder tells a reuse from a decode (the builder may share the spec: counts are read around the importer's calls).
    (importer.spec as { decodeBlock: typeof decodeBlock }).decodeBlock = (rlp) => (decoded++, decodeBlock(rlp));
    const event = (await importer.importCommitted(block1.sealed.serialize()))!;
    t.is(executions(), 0, 'not executed again');
    t.is(decoded, 0, 'not decoded again');
    t.is(bytesToHex(event.head.hash), bytesToHex(block1.sealed.hash()));
    t.deepEqual((await importer.store.getBlock(block1.sealed.hash()))!.serialize(), block1.sealed.serialize(), 'stored with its seals');
    t.deepEqual(await importer.store.getReceipts(event.head.hash), await builder.store.getReceipts(block1.sealed.hash()));
    t.is(event.senderNonces.length, 2);
    // A committed block: each sender's account at the new head, for the pool.
    t.deepEqual(
      event.senderAccounts?.map(([address, account]) => [address, account.nonce]),
      event.senderNonces,
    );
    for (const [sender, account] of event.senderAccounts!) {
      const stored = await importer.withStateAt(event.head.stateRoot, (vm) => vm.stateManager.getAccount(createAddressFromString(sender)));
      t.is(account.balance, stored!.balance);
      t.false(account.hasCode);
    }

    // Same header (hence hash) as the validated proposal, another body: decoded and executed, and refused.
    const block2 = await proposeAndCommit(builder, [candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 1n))]);
    t.deepEqual(await importer.validateBlock(block2.proposal, QBFT_RULES), { valid: true });
    const otherBody = forged(importer, block2.sealed, {}, [signedTransfer(DEV_ACCOUNTS[2].privateKey, 0n)]);
    const decodedBefore = decoded;
    await t.throwsAsync(importer.importCommitted(otherBody));
    t.is(decoded - decodedBefore, 1);
    t.is(importer.getHead().number, 1n);
  } finally {
    await builder.close();
    await importer.close();
  }
});

test("a built block's new head carries each sender's account after the block, as the head's state holds it", async (t) => {
  const chain = await openChain(newPath());
  try {
    const before = chain.getHead().number;
    // Sender 1 receives from sender 0 in the same block, after its own transaction: its account after the block counts that.
    const txs = [
      candidate(signedTransfer(DEV_ACCOUNTS[1].privateKey, 0n)),
      candidate(signedTx(DEV_ACCOUNTS[0].privateKey, 0n, { to: DEV_ACCOUNTS[1].address, value: 1234n })),
      candidate(signedTransfer(DEV_ACCOUNTS[0].privateKey, 1n)),
    ];
    const built = await chain.buildBlock({ timestamp: chain.getHead().timestamp + 1n, coinbase: addressOf(dev.validatorKey), extraData: chain.getHead().extraData, maxBuildMs: 10_000, transactions: txs });
    t.is(built.block.transactions.length, 3);
    t.is(built.senderAccounts?.length, 2, 'read by the build, where its state holds them');
    const event = await chain.importBuilt(built, chain.getHead().extraData);
    t.is(event.head.number, before + 1n);
    t.deepEqual(event.senderAccounts?.map(([address, account]) => [address, account.nonce]), [
      [DEV_ACCOUNTS[1].address.toLowerCase(), 1n],
      [DEV_ACCOUNTS[0].address.toLowerCase(), 2n],
    ]);
    for (const [sender, account] of event.senderAccounts!) {
      const stored = await chain.withStateAt(event.head.stateRoot, (vm) => vm.stateManager.getAccount(createAddressFromString(sender)));
      t.is(account.balance, stored!.balance, sender);
      t.is(account.nonce, stored!.nonce, sender);
    }
  } finally {
    await chain.close();
  }
});
