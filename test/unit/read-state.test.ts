/**
 * The read state behind eth_call and the state reads (src/shared/execution/read-state.ts): it answers as the
 * trie-backed MerkleStateManager does, keeps what it read across simulations, forgets simulated
 * writes, and on a chain being built and imported every read at a block answers from that block.
 */
import test from 'ava';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createMPT } from '@ethereumjs/mpt';
import { CODEHASH_PREFIX } from '@ethereumjs/statemanager';
import { Account, Address, bigIntToHex, bytesToBigInt, bytesToHex, concatBytes, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import type { DB } from '@ethereumjs/util';
import { ReadState } from '../../src/shared/execution/read-state.js';
import { cacheJumpAnalysis, fastEipLookup } from '../../src/shared/execution/evm-tuning.js';
import { ChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { serveMethods } from '../../src/shared/rpc/dispatch.js';
import { lookupMethod } from '../../src/shared/rpc/registry.js';
import type { Json } from '../../src/shared/rpc/types.js';
import { storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { Common, Mainnet } from '@ethereumjs/common';

const A = new Address(hexToBytes('0x00000000000000000000000000000000000000aa'));
const B = new Address(hexToBytes('0x00000000000000000000000000000000000000bb'));
const NOBODY = new Address(hexToBytes('0x00000000000000000000000000000000000000cc'));
const slot = (n: number) => setLengthLeft(new Uint8Array([n]), 32);
const CODE = hexToBytes('0x6001600101');

/** A trie with A (balance 10, code, slots 1 → 7 and 2 → 9) and B (balance 20); its root and a database counting reads. */
async function fixture() {
  const trie = await createMPT({ useKeyHashing: true });
  const db = trie.database().db as DB<string, string | Uint8Array>;
  const reads = { count: 0 };
  const get = db.get.bind(db);
  db.get = (key, opts) => {
    reads.count++;
    return get(key, opts);
  };
  const writer = new MerkleStateManager({ trie });
  await writer.putAccount(A, new Account(1n, 10n));
  await writer.putCode(A, CODE);
  await writer.putStorage(A, slot(1), new Uint8Array([7]));
  await writer.putStorage(A, slot(2), new Uint8Array([9]));
  await writer.putAccount(B, new Account(0n, 20n));
  const root1 = await writer.getStateRoot();
  await writer.modifyAccountFields(B, { balance: 21n });
  await writer.putStorage(A, slot(1), new Uint8Array([8]));
  const root2 = await writer.getStateRoot();
  const reader = new MerkleStateManager({ trie: trie.shallowCopy(false) });
  await reader.setStateRoot(root1);
  const readCode = (hash: Uint8Array) => reader['_trie'].database().get(concatBytes(CODEHASH_PREFIX, hash)) as Promise<Uint8Array | undefined>;
  return { state: new ReadState(reader, readCode), root1, root2, reads };
}

test('reads answer what the trie holds at the root, and are read from it once', async (t) => {
  const { state, reads } = await fixture();
  t.is((await state.getAccount(A))?.balance, 10n);
  t.is((await state.getAccount(B))?.balance, 20n);
  t.is(await state.getAccount(NOBODY), undefined);
  t.deepEqual(await state.getCode(A), CODE);
  t.deepEqual(await state.getCode(B), new Uint8Array(0));
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([7]));
  t.deepEqual(await state.getStorage(A, slot(3)), new Uint8Array(0));
  t.deepEqual(await state.getStorage(NOBODY, slot(1)), new Uint8Array(0));
  const afterFirst = reads.count;
  t.true(afterFirst > 0);

  // A simulation reads the same, writes, and is reverted: nothing of it stays, nothing is read again.
  await state.checkpoint();
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([7]));
  const account = (await state.getAccount(A))!;
  account.balance = 99n;
  await state.putAccount(A, account);
  await state.putStorage(A, slot(1), new Uint8Array([0, 5]));
  t.is((await state.getAccount(A))?.balance, 99n);
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([5]));
  await state.revert();
  t.is((await state.getAccount(A))?.balance, 10n);
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([7]));
  t.is(reads.count, afterFirst);
});

test('an account handed out is a copy: changing it without putting it changes nothing', async (t) => {
  const { state } = await fixture();
  const account = (await state.getAccount(A))!;
  account.balance = 1n;
  t.is((await state.getAccount(A))?.balance, 10n);
});

test('nested checkpoints: an inner commit joins the outer checkpoint, whose revert undoes both', async (t) => {
  const { state } = await fixture();
  await state.checkpoint();
  await state.putStorage(A, slot(2), new Uint8Array([1]));
  await state.checkpoint();
  await state.putStorage(A, slot(2), new Uint8Array([2]));
  await state.putCode(B, CODE);
  await state.commit();
  t.deepEqual(await state.getStorage(A, slot(2)), new Uint8Array([2]));
  t.deepEqual(await state.getCode(B), CODE);
  await state.checkpoint();
  await state.deleteAccount(A);
  t.is(await state.getAccount(A), undefined);
  t.deepEqual(await state.getStorage(A, slot(2)), new Uint8Array(0));
  t.deepEqual(await state.getCode(A), new Uint8Array(0));
  await state.revert();
  t.deepEqual(await state.getStorage(A, slot(2)), new Uint8Array([2]));
  await state.revert();
  t.deepEqual(await state.getStorage(A, slot(2)), new Uint8Array([9]));
  t.deepEqual(await state.getCode(B), new Uint8Array(0));
  t.deepEqual(await state.getCode(A), CODE);
});

test('cleared storage hides the root slots until reverted; putStorage refuses a missing account', async (t) => {
  const { state } = await fixture();
  await state.checkpoint();
  await state.clearStorage(A);
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array(0));
  await state.putStorage(A, slot(2), new Uint8Array([3]));
  t.deepEqual(await state.getStorage(A, slot(2)), new Uint8Array([3]));
  await state.revert();
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([7]));
  await t.throwsAsync(state.putStorage(NOBODY, slot(1), new Uint8Array([1])), { message: /non-existing account/ });
});

test('the state root: the root read at until something is written; moving the root forgets what was read and written', async (t) => {
  const { state, root1, root2 } = await fixture();
  t.deepEqual(await state.getStateRoot(), root1);
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([7]));
  t.is((await state.getAccount(B))?.balance, 20n);
  await state.checkpoint();
  await state.putAccount(NOBODY, new Account(0n, 1n));
  await t.throwsAsync(state.getStateRoot(), { message: /cannot compute/ });
  await state.setStateRoot(root2);
  t.is(await state.getAccount(NOBODY), undefined);
  t.deepEqual(await state.getStorage(A, slot(1)), new Uint8Array([8]));
  t.is((await state.getAccount(B))?.balance, 21n);
  t.true(await state.hasStateRoot(root1));
});

test('the EVM speed-ups find the library internals they replace, and answer as the originals', async (t) => {
  await t.notThrowsAsync(cacheJumpAnalysis());
  const common = new Common({ chain: Mainnet, hardfork: 'london' });
  const before = [1559, 3855, 4844].map((eip) => common.isActivatedEIP(eip));
  fastEipLookup(common);
  t.deepEqual([1559, 3855, 4844].map((eip) => common.isActivatedEIP(eip)), before);
  common.setHardfork('cancun');
  t.true(common.isActivatedEIP(4844));
  t.true(common.isActivatedEIP(3855));
});

test('eth_call and eth_getBalance at a block answer from that block while blocks are built and imported', async (t) => {
  const path = tempDataPath();
  const chain = await openDevChain(path);
  try {
    const key = DEV_ACCOUNTS[0].privateKey;
    const deploy = signedTx(key, 0n, { data: storeAndLogDeployCode() });
    await proposeAndCommit(chain, [candidate(deploy)]);
    const receipts = await chain.store.getReceipts(chain.getHead().hash);
    const contract = bytesToHex(receipts![0]!.contractAddress!);
    const recipient = '0x00000000000000000000000000000000000c0ffe';
    const rpc = new ChainRpc(chain, { rpcGasCap: 0n, minGasPrice: 0n });
    const serve = serveMethods('chain', rpc.handlers);
    const ask = (method: string, params: Json[]) => serve(method, lookupMethod(method)!.parseParams(params));
    const call = (block: string) => ask('eth_call', [{ to: contract }, block]);
    const balance = (block: string) => ask('eth_getBalance', [recipient, block]);

    // Block n (from 2 on) stores n in the contract and sends the recipient n wei more.
    const expected = new Map<bigint, { stored: bigint; balance: bigint }>([[1n, { stored: 0n, balance: 0n }]]);
    let nonce = 1n;
    let paid = 0n;
    const reads: Promise<void>[] = [];
    const check = (n: bigint) => {
      const want = expected.get(n)!;
      const block = bigIntToHex(n);
      reads.push(
        (async () => {
          const [stored, held] = await Promise.all([call(block), balance(block)]);
          t.is(bytesToBigInt(hexToBytes(stored as `0x${string}`)), want.stored, `eth_call at #${n}`);
          t.is(BigInt(held as string), want.balance, `eth_getBalance at #${n}`);
        })(),
      );
    };
    for (let n = 2n; n <= 12n; n++) {
      const store = signedTx(key, nonce++, { to: contract, data: bytesToHex(setLengthLeft(hexToBytes(bigIntToHex(n)), 32)) });
      const pay = signedTx(key, nonce++, { to: recipient, value: n });
      // Reads of every earlier block go in while this block is built, executed and stored.
      const committing = proposeAndCommit(chain, [candidate(store), candidate(pay)]);
      for (const done of expected.keys()) check(done);
      await committing;
      paid += n;
      expected.set(n, { stored: n, balance: paid });
    }
    for (const done of expected.keys()) check(done);
    await Promise.all(reads);
    t.is(chain.getHead().number, 12n);
  } finally {
    await chain.close();
    removeDataPath(path);
  }
});
