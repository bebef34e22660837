/**
 * What a block keeps of each transaction it executed: the result (receipt, logs, gas), not the state
 * of the interpreter that ran it. Observed the way memory is: each transaction's interpreter state is
 * held only weakly here, and after a full collection it must be gone while the block that executed
 * the transaction is still open.
 */
import test from 'ava';
import { EVM } from '@ethereumjs/evm';
import { hexToBytes } from '@ethereumjs/util';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { collectGarbage } from '../../src/shared/util/collect-garbage.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, openDevChains, signedTx } from '../helpers/dev-chain.js';

const COINBASE = hexToBytes(`0x${'c0'.repeat(20)}`);
/** Init code that runs in an interpreter (PUSH, MSTORE, RETURN) and deploys 32 bytes. */
const INIT_CODE = '0x600160005260206000f3';
const TRANSACTIONS = 40;

const creation = (nonce: bigint): PoolTxForBlock => candidate(signedTx(DEV_ACCOUNTS[0]!.privateKey, nonce, { data: INIT_CODE }));

/**
 * Until the test ends, calls `onState` with the interpreter state each contract creation's top-level
 * EVM call returns (the transactions here; a block's system calls are calls), `before` ahead of each.
 */
function watchInterpreterStates(t: { teardown(fn: () => void): void }, onState: (state: object) => void, before: () => void = () => {}): void {
  const runCall = EVM.prototype.runCall;
  EVM.prototype.runCall = async function (this: EVM, opts) {
    const creation = opts.to === undefined;
    if (creation) before();
    const result = await runCall.call(this, opts);
    const state = result.execResult.runState;
    if (creation && state !== undefined) onState(state);
    return result;
  };
  t.teardown(() => {
    EVM.prototype.runCall = runCall;
  });
}

/** The next turn of the event loop: the current job (whose WeakRef targets V8 keeps alive) has ended, finalizers have run. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

// Serial: each test patches EVM.prototype.runCall.
test.serial('a block being built keeps none of its transactions’ interpreter states', async (t) => {
  const [chain] = await openDevChains(t, 1);
  const head = chain!.getHead();
  const timestamp = head.timestamp + 1n;
  const txs = Array.from({ length: TRANSACTIONS }, (_, i) => creation(BigInt(i)));
  const states: WeakRef<object>[] = [];
  watchInterpreterStates(t, (state) => states.push(new WeakRef(state)));

  // Executed ahead of the timer: the block stays open, holding what it executed.
  t.is(await chain!.prebuild({ parentHash: head.hash, timestamp, coinbase: COINBASE, transactions: txs }), TRANSACTIONS);
  t.is(states.length, TRANSACTIONS, 'each creation ran its init code in an interpreter');
  await nextTurn();
  collectGarbage();
  t.is(states.filter((state) => state.deref() !== undefined).length, 0, 'no interpreter state outlived its transaction');

  // And the block is still whole: sealed, it holds every transaction, each with its receipt.
  const built = await chain!.buildBlock({ timestamp, coinbase: COINBASE, extraData: head.extraData, maxBuildMs: 10_000, transactions: txs });
  t.is(built.block.transactions.length, TRANSACTIONS);
  t.is(built.receipts.length, TRANSACTIONS);
  t.true(built.receipts.every((receipt) => receipt.status === 1 && receipt.contractAddress !== undefined));
});

test.serial('a block being imported keeps none of its transactions’ interpreter states', async (t) => {
  const [proposer, follower] = await openDevChains(t, 2);
  const head = proposer!.getHead();
  const txs = Array.from({ length: TRANSACTIONS }, (_, i) => creation(BigInt(i)));
  const built = await proposer!.buildBlock({ timestamp: head.timestamp + 1n, coinbase: COINBASE, extraData: head.extraData, maxBuildMs: 10_000, transactions: txs });
  t.is(built.block.transactions.length, TRANSACTIONS);

  // The import runs its transactions in one job, so a weak reference would keep its target alive
  // until the end: here each state is only registered for finalization, and a full collection runs
  // as the last transaction starts, while the block is still being imported.
  let calls = 0;
  let finalized = 0;
  const registry = new FinalizationRegistry(() => finalized++);
  watchInterpreterStates(
    t,
    (state) => registry.register(state, undefined),
    () => {
      if (++calls === TRANSACTIONS) collectGarbage();
    },
  );
  t.truthy(await follower!.importBlock(built.block), 'the follower executed the block and accepted it');
  t.is(calls, TRANSACTIONS);
  await nextTurn();
  await nextTurn();
  t.true(finalized >= TRANSACTIONS - 1, `${finalized} of the first ${TRANSACTIONS - 1} transactions' interpreter states collected during the import`);
});
