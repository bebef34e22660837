/**
 * Chain re-orgs in one process, on temporary RocksDB: two chains of the dev network share block 1 and
 * then each builds its own branch; the longer (heavier: QBFT blocks weigh 1) branch imported into the
 * other makes it switch — canonical index, transaction lookups, receipts, state, the NewHeadEvent's
 * lists — in one batch whose last write is the head pointer. The pool takes back the transactions the
 * old branch mined and the new one does not.
 */
import test from 'ava';
import type { Block } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, createAddressFromString, setLengthLeft } from '@ethereumjs/util';
import type { Chain } from '../../src/chain/chain.js';
import { importSyncedBlocks } from '../../src/chain/block-serving.js';
import { importChecksFor } from '../../src/chain/import-rules.js';
import type { KvOp, KvStore } from '../../src/shared/storage/kv-store.js';
import { MetaKey, metaKey } from '../../src/chain/storage-schema.js';
import type { NewHeadEvent } from '../../src/shared/actors/messages.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { Logger } from '../../src/shared/util/log.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { TxPoolActor } from '../../src/txpool/txpool-actor.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, devNetwork, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const [alice, bob, carol] = DEV_ACCOUNTS.map((account) => account.privateKey) as [string, string, string];

/** Stores BLOCKHASH(NUMBER - 1) in slot 0 when called: its state depends on which branch it runs on. */
const PARENT_HASH_RECORDER = '0x600a600c600039600a6000f3' + '43600190034060005500';

const paths: string[] = [];
test.after.always(() => paths.forEach(removeDataPath));
function newPath(): string {
  const path = tempDataPath();
  paths.push(path);
  return path;
}

const hex = (bytes: Uint8Array) => bytesToHex(bytes);
const copy = (chain: Chain, block: Block) => chain.spec.decodeBlock(block.serialize());

/**
 * Chain `old` and chain `other` share block 1 (carol deploys the recorder). Then:
 * - old branch (on `old`): 2a [X alice#0, Y bob#0], 3a [V carol#1]
 * - new branch (on `other`): 2b [Z carol#1], 3b [X alice#0, call the recorder carol#2], 4b []
 * X is mined on both; Y only on the old branch; V's nonce is taken by Z on the new one.
 */
async function divergedChains(oldPath = newPath()) {
  const old = await openDevChain(oldPath);
  const other = await openDevChain(newPath());
  const deploy = signedTx(carol, 0n, { data: PARENT_HASH_RECORDER });
  const block1 = (await proposeAndCommit(old, [candidate(deploy)])).sealed;
  await other.importBlock(copy(other, block1));
  const recorder = (await old.store.getReceipts(block1.hash()))![0]!.contractAddress!;

  const X = signedTx(alice, 0n);
  const Y = signedTx(bob, 0n);
  const V = signedTx(carol, 1n, { to: '0x00000000000000000000000000000000000000aa', value: 7n });
  const Z = signedTx(carol, 1n, { to: '0x00000000000000000000000000000000000000bb', value: 9n });
  const call = signedTx(carol, 2n, { to: hex(recorder), data: '0x' });
  const oldBranch = [(await proposeAndCommit(old, [candidate(X), candidate(Y)])).sealed, (await proposeAndCommit(old, [candidate(V)])).sealed];
  // Two seconds after block 1 rather than one: the new branch's blocks differ from the first.
  const newBranch = [
    (await proposeAndCommit(other, [candidate(Z)], 2n)).sealed,
    (await proposeAndCommit(other, [candidate(X), candidate(call)])).sealed,
    (await proposeAndCommit(other, [])).sealed,
  ];
  return { old, other, recorder, oldBranch, newBranch, tx: { X, Y, V, Z, call } };
}

async function balanceAt(chain: Chain, address: string): Promise<bigint> {
  return chain.withStateAt(chain.getHead().stateRoot, async (vm) => (await vm.stateManager.getAccount(createAddressFromString(address)))?.balance ?? 0n);
}

async function txBlock(chain: Chain, tx: TypedTransaction): Promise<string | undefined> {
  const location = await chain.store.getTxLocation(tx.hash());
  return location && hex(location.blockHash);
}

test('a heavier branch becomes the canonical chain: index, lookups, receipts, state and the event say so', async (t) => {
  const { old, other, recorder, oldBranch, newBranch, tx } = await divergedChains();
  try {
    const [a2, a3] = oldBranch as [Block, Block];
    const [b2, b3, b4] = newBranch as [Block, Block, Block];
    const bobBefore = await balanceAt(old, DEV_ACCOUNTS[1].address);

    // 2b and 3b do not outweigh 3a (a tie keeps the head): stored beside the canonical chain.
    t.is(await old.importBlock(copy(old, b2)), undefined);
    t.is(await old.importBlock(copy(old, b3)), undefined);
    t.is(hex(old.getHead().hash), hex(a3.hash()));
    t.is(hex((await old.store.getCanonicalHash(2n))!), hex(a2.hash()));
    t.truthy(await old.store.getReceipts(b3.hash()), 'a side block is stored with its receipts');
    t.is(await txBlock(old, tx.Z), undefined, 'a side block has no transaction lookups');

    const event = (await old.importBlock(copy(old, b4)))!;
    t.truthy(event);
    t.deepEqual(event.removedBlocks.map(hex), [a3, a2].map((b) => hex(b.hash())), 'removed: newest first');
    t.deepEqual(event.addedBlocks.map(hex), [b2, b3, b4].map((b) => hex(b.hash())), 'added: oldest first');
    t.deepEqual(event.includedTxHashes.map(hex), [tx.Z, tx.X, tx.call].map((x) => hex(x.hash())));
    t.deepEqual(event.removedTransactions.map(hex), [tx.Y, tx.V].map((x) => hex(x.serialize())), 'X is on both branches');
    const nonces = new Map(event.senderNonces);
    t.is(nonces.get(DEV_ACCOUNTS[1].address), 0n, "bob's nonce moved back");
    t.is(nonces.get(DEV_ACCOUNTS[0].address), 1n);
    t.is(nonces.get(DEV_ACCOUNTS[2].address), 3n);

    // The head and its state are exactly the other chain's: every transaction of the new branch re-executed.
    t.is(hex(old.getHead().hash), hex(b4.hash()));
    t.is(hex(old.getHead().stateRoot), hex(other.getHead().stateRoot));
    for (const n of [1n, 2n, 3n, 4n]) t.is(hex((await old.store.getCanonicalHash(n))!), hex((await other.store.getCanonicalHash(n))!));
    // BLOCKHASH in 3b saw 2b, the block of its own branch, not 2a (else 3b's state root would not match).
    const recorded = await old.withStateAt(old.getHead().stateRoot, (vm) => vm.stateManager.getStorage(createAddressFromString(hex(recorder)), setLengthLeft(Uint8Array.of(0), 32)));
    t.is(hex(recorded), hex(b2.hash()));

    t.is(await txBlock(old, tx.X), hex(b3.hash()), 'X now points into the new branch');
    t.is(await txBlock(old, tx.Z), hex(b2.hash()));
    t.is(await txBlock(old, tx.Y), undefined, 'Y is no longer mined');
    t.is(await txBlock(old, tx.V), undefined);
    t.deepEqual(await old.store.getReceipts(b3.hash()), await other.store.getReceipts(b3.hash()));
    const bobAfter = await balanceAt(old, DEV_ACCOUNTS[1].address);
    t.true(bobAfter > bobBefore, "bob's transfer and fee are undone");
    t.is(bobAfter, await balanceAt(other, DEV_ACCOUNTS[1].address));

    // The old branch stays readable by hash, not by number.
    t.is(hex((await old.store.getBlock(a2.hash()))!.hash()), hex(a2.hash()));
    t.is(hex((await old.store.getBlockByNumber(2n))!.hash()), hex(b2.hash()));
    t.false(await old.store.isCanonical(a3.hash(), 3n));

    // The new head is built on like any other.
    const next = await proposeAndCommit(old, [candidate(tx.Y)]);
    t.is(next.sealed.header.number, 5n);
    t.is(await txBlock(old, tx.Y), hex(next.sealed.hash()));
  } finally {
    await old.close();
    await other.close();
  }
});

test('a heavier but shorter branch: the numbers above its head leave the canonical index', async (t) => {
  const old = await openDevChain(newPath());
  const other = await openDevChain(newPath());
  try {
    const X = signedTx(alice, 0n);
    const oldBranch = [(await proposeAndCommit(old, [])).sealed, (await proposeAndCommit(old, [candidate(X)])).sealed, (await proposeAndCommit(old, [])).sealed];
    // One block of difficulty 10 outweighs three of difficulty 1 (chain.importBlock applies the fork
    // choice only; the header rules that would refuse this difficulty on QBFT run before it).
    const head = other.getHead();
    const built = await other.buildBlock({ timestamp: head.timestamp + 2n, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions: [] });
    built.headerData.difficulty = 10n;
    const heavy = (await other.importBuilt(built, head.extraData)).head;
    const event = (await old.importBlock(copy(old, (await other.store.getBlock(heavy.hash))!)))!;
    t.is(old.getHead().number, 1n);
    t.is(old.getHead().totalDifficulty, 11n);
    t.deepEqual(event.removedBlocks.map(hex), [...oldBranch].reverse().map((b) => hex(b.hash())));
    t.deepEqual(event.removedTransactions.map(hex), [hex(X.serialize())]);
    t.is(await old.store.getCanonicalHash(2n), undefined);
    t.is(await old.store.getCanonicalHash(3n), undefined);
    t.is(await txBlock(old, X), undefined);
    t.is(hex((await old.store.getCanonicalHash(1n))!), hex(heavy.hash));
  } finally {
    await old.close();
    await other.close();
  }
});

test('a re-org is one batch with the head pointer last; a batch that fails leaves the old head whole, also after a restart', async (t) => {
  const oldPath = newPath();
  const first = await divergedChains(oldPath);
  let old = first.old;
  const { other, oldBranch, newBranch, tx } = first;
  try {
    const [, a3] = oldBranch as [Block, Block];
    const [b2, b3, b4] = newBranch as [Block, Block, Block];
    await old.importBlock(copy(old, b2));
    await old.importBlock(copy(old, b3));

    // The batch fails as a crash would cut it: nothing of it lands.
    const failing = kvOf(old);
    const write = failing.write.bind(failing);
    failing.write = async () => {
      throw new Error('simulated crash');
    };
    await t.throwsAsync(() => old.importBlock(copy(old, b4)), { message: /simulated crash/ });
    failing.write = write;
    t.is(hex(old.getHead().hash), hex(a3.hash()));
    await old.close();

    old = await openDevChain(oldPath);
    t.is(hex(old.getHead().hash), hex(a3.hash()), 'the old head after a restart');
    t.is(hex((await old.store.getCanonicalHash(2n))!), hex(oldBranch[0]!.hash()));
    t.is(await txBlock(old, tx.Y), hex(oldBranch[0]!.hash()));
    t.is(await old.store.getCanonicalHash(4n), undefined);

    const batches: KvOp[][] = [];
    const kv = kvOf(old);
    const realWrite = kv.write.bind(kv);
    kv.write = (ops, options) => {
      batches.push(ops);
      return realWrite(ops, options);
    };
    const event = (await old.importBlock(copy(old, b4)))!;
    t.is(batches.length, 1, 'one batch');
    const ops = batches[0]!;
    const headKey = hex(metaKey(MetaKey.head));
    t.is(hex(ops[ops.length - 1]!.key), headKey, 'the head pointer is written last');
    t.is(ops.filter((op) => hex(op.key) === headKey).length, 1);
    t.deepEqual(event.addedBlocks.map(hex), [b2, b3, b4].map((b) => hex(b.hash())));
    await old.close();

    old = await openDevChain(oldPath);
    t.is(hex(old.getHead().hash), hex(b4.hash()), 'the new head after a restart');
    t.is(hex(old.getHead().stateRoot), hex(other.getHead().stateRoot));
    t.is(await txBlock(old, tx.X), hex(b3.hash()));
  } finally {
    await old.close();
    await other.close();
  }
});

function kvOf(chain: Chain): KvStore {
  // The database handle is private: the test stands in for a crash at the moment of the write.
  return (chain as unknown as { kv: KvStore }).kv;
}

test('blocks from a peer switch branches through the checks of blocks import (QBFT seals on the side branch)', async (t) => {
  const { old, other, oldBranch, newBranch } = await divergedChains();
  try {
    const checks = await importChecksFor(old, parseGenesisJson(JSON.stringify(devNetwork.genesisJson)), false);
    const events: NewHeadEvent[] = [];
    const result = await importSyncedBlocks(old, newBranch.map((b) => b.serialize()), checks, (event) => events.push(event));
    t.is(result.error, undefined);
    t.is(result.imported, 3);
    t.is(hex(result.head.hash), hex(newBranch[2]!.hash()));
    t.is(events.length, 1, 'one new head: the re-org');
    t.deepEqual(events[0]!.removedBlocks.map(hex), [...oldBranch].reverse().map((b) => hex(b.hash())));

    // A side-branch block whose seal is not the validator's is refused like any other.
    const forgedOn = oldBranch[1]!;
    const stranger = other.spec.createBlock({ ...forgedOn.header.toJSON(), extraData: newBranch[0]!.header.extraData, timestamp: forgedOn.header.timestamp + 9n }, [], undefined);
    const refused = await importSyncedBlocks(old, [stranger.serialize()], checks, () => t.fail('no new head'));
    t.regex(refused.error ?? '', /invalid QBFT header|could not be imported/);
  } finally {
    await old.close();
    await other.close();
  }
});

test('the pool takes back what the removed blocks mined and the new branch did not, nonces moved back', async (t) => {
  const { old, other, oldBranch, newBranch, tx } = await divergedChains();
  try {
    const pool = new TxPoolActor({
      genesis: parseGenesisJson(JSON.stringify(devNetwork.genesisJson)),
      pool: {},
      decode: async (raw, txRules) => ({ ok: decodeRawTransaction(raw, txRules) }),
      accounts: async (addresses) => {
        const head = old.getHead();
        const accounts = await old.withStateAt(head.stateRoot, (vm) =>
          Promise.all(
            addresses.map(async (address) => {
              const account = await vm.stateManager.getAccount(createAddressFromString(hex(address)));
              return { nonce: account?.nonce ?? 0n, balance: account?.balance ?? 0n, hasCode: false };
            }),
          ),
        );
        return { head, accounts };
      },
      log: new Logger('TxPool'),
    });
    pool.setHead(old.getHead());
    // Bob's next transaction waits in the pool on the old branch, where his nonce is 1.
    const Y2 = signedTx(bob, 1n);
    t.deepEqual(await pool.p2p.peerTransactions({ raws: [Y2.serialize()], hashes: [Y2.hash()] }), { added: 1 });

    for (const block of newBranch.slice(0, 2)) await old.importBlock(copy(old, block));
    const event = (await old.importBlock(copy(old, newBranch[2]!)))!;
    pool.onNewHead(event);

    const wanted = [tx.Y.hash(), Y2.hash()];
    const deadline = Date.now() + 10_000;
    while ((await pool.p2p.unknownTransactions({ hashes: wanted })).length > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    t.deepEqual(await pool.p2p.unknownTransactions({ hashes: wanted }), [], 'Y is back beside Y2');
    // Both are due in nonce order at the new head; V's nonce was taken by Z, so V is not back.
    const selected = await pool.consensus.select({ maxCount: 10, gasLimit: 30_000_000n, baseFee: old.getHead().nextBaseFeePerGas });
    t.deepEqual(selected.transactions.map((c) => hex(c.hash)), [tx.Y, Y2].map((x) => hex(x.hash())));
    t.deepEqual(await pool.p2p.unknownTransactions({ hashes: [tx.V.hash()] }), [tx.V.hash()]);
    t.is(oldBranch.length, 2);
  } finally {
    await old.close();
    await other.close();
  }
});
