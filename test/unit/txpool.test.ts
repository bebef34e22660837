import test, { type ExecutionContext } from 'ava';
import { Mainnet, createCustomCommon } from '@ethereumjs/common';
import { createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import { privateToAddress } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { RpcError } from '../../src/shared/rpc/errors.js';
import type { RpcErrorObject } from '../../src/shared/rpc/types.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import {
  TransactionPool,
  memorySizeOf,
  type AdmissionContext,
  type DropReason,
  type PoolEntry,
  type TransactionPoolOptions,
} from '../../src/txpool/pool.js';
import { toHexKey, type DecodedTx } from '../../src/shared/ethereum/decoded-tx.js';

const CHAIN_ID = 1337n;
const RECIPIENT = new Uint8Array(20).fill(0x22);
const rules = txRulesFor(CHAIN_ID, 'prague');
const common = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: 'prague' });
const preEip155Common = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: 'tangerineWhistle' });

const keys = new Map<number, Uint8Array>();
function keyFor(sender: number): Uint8Array {
  let key = keys.get(sender);
  if (key === undefined) {
    key = keccak_256(new TextEncoder().encode(`txpool-key-${sender}`));
    keys.set(sender, key);
  }
  return key;
}
const addressOf = (sender: number): Uint8Array => privateToAddress(keyFor(sender));
const addressKey = (sender: number): string => toHexKey(addressOf(sender));

interface TxShape {
  gasLimit?: bigint;
  value?: bigint;
}

function legacyTx(sender: number, nonce: number, gasPrice: bigint, shape: TxShape = {}): DecodedTx {
  const tx = createLegacyTx(
    { nonce, gasPrice, gasLimit: shape.gasLimit ?? 21000n, to: RECIPIENT, value: shape.value ?? 0n },
    { common },
  ).sign(keyFor(sender));
  return decodeRawTransaction(tx.serialize(), rules);
}

function unprotectedLegacyTx(sender: number, nonce: number, gasPrice: bigint): DecodedTx {
  const tx = createLegacyTx({ nonce, gasPrice, gasLimit: 21000n, to: RECIPIENT }, { common: preEip155Common }).sign(
    keyFor(sender),
  );
  return decodeRawTransaction(tx.serialize(), rules);
}

function feeMarketTx(sender: number, nonce: number, maxFee: bigint, tip: bigint, shape: TxShape = {}): DecodedTx {
  const tx = createFeeMarket1559Tx(
    {
      chainId: CHAIN_ID,
      nonce,
      maxFeePerGas: maxFee,
      maxPriorityFeePerGas: tip,
      gasLimit: shape.gasLimit ?? 21000n,
      to: RECIPIENT,
      value: shape.value ?? 0n,
    },
    { common },
  ).sign(keyFor(sender));
  return decodeRawTransaction(tx.serialize(), rules);
}

const RICH = 10n ** 24n;

function ctx(overrides: Partial<Omit<AdmissionContext, 'account'>> & { account?: Partial<AdmissionContext['account']> } = {}): AdmissionContext {
  const { account, ...rest } = overrides;
  return {
    account: { nonce: 0n, balance: RICH, hasCode: false, ...account },
    blockGasLimit: 30_000_000n,
    local: true,
    now: 1_700_000_000_000,
    ...rest,
  };
}

function rejection(fn: () => unknown): RpcErrorObject {
  try {
    fn();
  } catch (err) {
    if (err instanceof RpcError) return err.toObject();
    throw err;
  }
  throw new Error('expected a rejection');
}

const pool = (options: Partial<TransactionPoolOptions> = {}) => new TransactionPool(options);
const nonces = (txs: DecodedTx[]): bigint[] => txs.map((tx) => tx.nonce);

// ---------------------------------------------------------------------------------------------------
// Admission

test('a valid transaction is admitted as pending and can be looked up', (t) => {
  const p = pool();
  const tx = legacyTx(1, 0, 1000n);
  t.deepEqual(p.add(tx, ctx()), { pending: true });
  t.is(p.size, 1);
  t.is(p.getByHash(tx.hash), tx);
  t.is(p.getEntry(tx.hash)?.addedAt, 1_700_000_000_000);
  t.is(p.nextNonce(addressOf(1)), 1n);
  t.is(p.nextNonce(addressKey(1).toUpperCase().replace('0X', '0x')), 1n);
  t.deepEqual(p.stats(), { localCount: 1, remoteCount: 0, pendingCount: 1, queuedCount: 0 });
});

test('same hash twice is Known transaction', (t) => {
  const p = pool();
  const tx = legacyTx(1, 0, 1000n);
  p.add(tx, ctx());
  t.deepEqual(rejection(() => p.add(tx, ctx())), { code: -32000, message: 'Known transaction' });
});

test('fee cap applies to local transactions only, per gas, and 0 disables it', (t) => {
  const expensive = legacyTx(1, 0, 10n ** 18n + 1n);
  const atCap = legacyTx(2, 0, 10n ** 18n);
  t.deepEqual(rejection(() => pool().add(expensive, ctx())), { code: -32000, message: 'Transaction fee cap exceeded' });
  t.notThrows(() => pool().add(atCap, ctx()));
  t.notThrows(() => pool().add(expensive, ctx({ local: false })));
  t.notThrows(() => pool({ txFeeCap: 0n }).add(expensive, ctx()));
  const expensive1559 = feeMarketTx(3, 0, 10n ** 18n + 1n, 1n);
  t.deepEqual(rejection(() => pool().add(expensive1559, ctx())), { code: -32000, message: 'Transaction fee cap exceeded' });
});

test('min gas price binds remote transactions; local ones have priority', (t) => {
  const tooLow = { code: -32009, message: 'Gas price below configured minimum gas price' };
  const cheap = legacyTx(1, 0, 999n);
  t.deepEqual(rejection(() => pool().add(cheap, ctx({ local: false }))), tooLow);
  t.notThrows(() => pool().add(legacyTx(1, 0, 1000n), ctx({ local: false })));
  t.notThrows(() => pool().add(cheap, ctx({ local: true })));
  t.deepEqual(rejection(() => pool({ noLocalPriority: true }).add(cheap, ctx({ local: true }))), tooLow);
  t.notThrows(() => pool({ prioritySenders: [addressKey(1).slice(2).toUpperCase()] }).add(cheap, ctx({ local: false })));
  const cheap1559 = feeMarketTx(2, 0, 999n, 1n);
  t.deepEqual(rejection(() => pool().add(cheap1559, ctx({ local: false }))), tooLow);
});

test('priority transactions must still meet the fee-market floor when there is a base fee', (t) => {
  const tooLow = { code: -32009, message: 'Gas price below configured minimum gas price' };
  const belowFloor = feeMarketTx(1, 0, 6n, 0n);
  t.deepEqual(rejection(() => pool().add(belowFloor, ctx({ baseFee: 7n }))), tooLow);
  t.notThrows(() => pool().add(feeMarketTx(1, 0, 7n, 0n), ctx({ baseFee: 7n })));
  // No base fee (pre-London or free gas): no floor.
  t.notThrows(() => pool().add(belowFloor, ctx()));
  t.notThrows(() => pool({ baseFeeFloor: 0n }).add(belowFloor, ctx({ baseFee: 0n })));
});

test('strict replay protection requires a chain id on priority transactions', (t) => {
  const unprotected = unprotectedLegacyTx(1, 0, 1000n);
  t.deepEqual(rejection(() => pool({ strictTxReplayProtection: true }).add(unprotected, ctx())), {
    code: -32000,
    message: 'ChainId is required',
  });
  t.notThrows(() => pool({ strictTxReplayProtection: true }).add(unprotected, ctx({ local: false })));
  t.notThrows(() => pool().add(unprotected, ctx()));
});

test('gas above the block gas limit is rejected', (t) => {
  const tx = legacyTx(1, 0, 1000n, { gasLimit: 50_001n });
  t.deepEqual(rejection(() => pool().add(tx, ctx({ blockGasLimit: 50_000n }))), {
    code: -32005,
    message: 'Transaction gas limit exceeds block gas limit',
  });
  t.notThrows(() => pool().add(tx, ctx({ blockGasLimit: 50_001n })));
});

test('nonce below the account nonce is Nonce too low', (t) => {
  t.deepEqual(rejection(() => pool().add(legacyTx(1, 4, 1000n), ctx({ account: { nonce: 5n } }))), {
    code: -32001,
    message: 'Nonce too low',
  });
});

test('a sender with code is not authorized', (t) => {
  t.deepEqual(rejection(() => pool().add(legacyTx(1, 0, 1000n), ctx({ account: { hasCode: true } }))), {
    code: -32007,
    message: 'Sender account not authorized to send transactions',
  });
});

test('upfront cost gas × max price + value must be covered by the balance', (t) => {
  const tx = feeMarketTx(1, 0, 2000n, 1n, { value: 5n });
  const upfront = 21000n * 2000n + 5n;
  t.deepEqual(rejection(() => pool().add(tx, ctx({ account: { balance: upfront - 1n } }))), {
    code: -32004,
    message: 'Upfront cost exceeds account balance',
  });
  t.notThrows(() => pool().add(tx, ctx({ account: { balance: upfront } })));
});

test('max future by sender: +199 is accepted as queued, +200 is too distant', (t) => {
  const p = pool();
  const state = { account: { nonce: 10n } };
  t.deepEqual(p.add(legacyTx(1, 10 + 199, 1000n), ctx(state)), { pending: false });
  t.deepEqual(rejection(() => p.add(legacyTx(1, 10 + 200, 1000n), ctx(state))), {
    code: -32000,
    message: 'Transaction nonce is too distant from current sender nonce',
  });
  const small = pool({ maxFutureBySender: 3 });
  t.notThrows(() => small.add(legacyTx(2, 2, 1000n), ctx()));
  t.is(rejection(() => small.add(legacyTx(2, 3, 1000n), ctx())).code, -32000);
});

test('admission checks run in order', (t) => {
  const p = pool();
  const known = legacyTx(1, 0, 1000n);
  p.add(known, ctx());
  // Known beats everything stateful.
  t.is(rejection(() => p.add(known, ctx({ account: { nonce: 9n, hasCode: true, balance: 0n } }))).message, 'Known transaction');
  // Fee cap beats the block gas limit.
  const overCapAndGas = legacyTx(2, 0, 10n ** 18n + 1n, { gasLimit: 60_000n });
  t.is(rejection(() => pool().add(overCapAndGas, ctx({ blockGasLimit: 50_000n }))).message, 'Transaction fee cap exceeded');
  // Min gas price beats block gas limit.
  const cheapAndBig = legacyTx(3, 0, 10n, { gasLimit: 60_000n });
  t.is(
    rejection(() => pool().add(cheapAndBig, ctx({ local: false, blockGasLimit: 50_000n }))).message,
    'Gas price below configured minimum gas price',
  );
  // Block gas limit beats nonce too low.
  t.is(
    rejection(() => pool().add(cheapAndBig, ctx({ blockGasLimit: 50_000n, account: { nonce: 1n } }))).message,
    'Transaction gas limit exceeds block gas limit',
  );
  // Nonce too low beats sender-has-code and balance.
  const plain = legacyTx(4, 0, 1000n);
  t.is(
    rejection(() => pool().add(plain, ctx({ account: { nonce: 1n, hasCode: true, balance: 0n } }))).message,
    'Nonce too low',
  );
  // Sender-has-code beats balance.
  t.is(
    rejection(() => pool().add(plain, ctx({ account: { hasCode: true, balance: 0n } }))).message,
    'Sender account not authorized to send transactions',
  );
  // Balance beats too-distant nonce.
  const far = legacyTx(4, 500, 1000n);
  t.is(rejection(() => pool().add(far, ctx({ account: { balance: 0n } }))).message, 'Upfront cost exceeds account balance');
});

test('a rejected transaction leaves the pool unchanged', (t) => {
  const p = pool();
  p.add(legacyTx(1, 0, 1000n), ctx());
  const before = p.stats();
  t.throws(() => p.add(legacyTx(1, 1, 1000n), ctx({ account: { balance: 0n } })));
  t.throws(() => p.add(legacyTx(2, 0, 1000n), ctx({ account: { hasCode: true } })));
  t.deepEqual(p.stats(), before);
  t.is(p.nextNonce(addressOf(2)), undefined);
});

// ---------------------------------------------------------------------------------------------------
// Replacement

test('legacy replacement needs gasPrice ≥ old × 110 / 100; exactly 10% passes', (t) => {
  const p = pool();
  const original = legacyTx(1, 0, 1000n);
  p.add(original, ctx());
  const underpriced = { code: -32000, message: 'Replacement transaction underpriced' };
  t.deepEqual(rejection(() => p.add(legacyTx(1, 0, 1099n), ctx())), underpriced);
  const replacement = legacyTx(1, 0, 1100n);
  t.deepEqual(p.add(replacement, ctx()), { pending: true, replaced: original });
  t.is(p.size, 1);
  t.is(p.getByHash(original.hash), undefined);
  t.is(p.getByHash(replacement.hash), replacement);
  t.deepEqual(p.contentFrom(addressOf(1)).pending, [replacement]);
});

test('replacement threshold uses integer division like Besu (15 → 16 suffices)', (t) => {
  const p = pool();
  p.add(legacyTx(1, 0, 15n), ctx());
  t.deepEqual(rejection(() => p.add(legacyTx(1, 0, 15n, { value: 1n }), ctx())).message, 'Replacement transaction underpriced');
  t.notThrows(() => p.add(legacyTx(1, 0, 16n), ctx()));
});

test('1559 replacement needs the bump on both max fee and priority fee', (t) => {
  const p = pool();
  p.add(feeMarketTx(1, 0, 1000n, 100n), ctx());
  const underpriced = 'Replacement transaction underpriced';
  t.is(rejection(() => p.add(feeMarketTx(1, 0, 2000n, 109n), ctx())).message, underpriced);
  t.is(rejection(() => p.add(feeMarketTx(1, 0, 1099n, 500n), ctx())).message, underpriced);
  const replacement = feeMarketTx(1, 0, 1100n, 110n);
  t.is(p.add(replacement, ctx()).replaced?.maxFeePerGas, 1000n);
  // Mixed kinds: a gasPrice counts as both fees, so 1200 clears the tip (≥ 121) but not the max fee (≥ 1210).
  t.is(rejection(() => p.add(legacyTx(1, 0, 1200n), ctx())).message, underpriced);
  t.notThrows(() => p.add(legacyTx(1, 0, 1210n), ctx()));
});

test('a zero price bump lets an equal-priced replacement in', (t) => {
  const p = pool({ priceBump: 0 });
  p.add(legacyTx(1, 0, 1000n), ctx());
  t.notThrows(() => p.add(legacyTx(1, 0, 1000n, { value: 1n }), ctx()));
  t.is(p.size, 1);
});

test('replacing keeps local/remote counts right', (t) => {
  const p = pool();
  p.add(legacyTx(1, 0, 1000n), ctx({ local: false }));
  p.add(legacyTx(1, 0, 2000n), ctx({ local: true }));
  t.deepEqual(p.stats(), { localCount: 1, remoteCount: 0, pendingCount: 1, queuedCount: 0 });
});

// ---------------------------------------------------------------------------------------------------
// Nonce gaps

test('transactions beyond a nonce gap are queued and promoted when it fills', (t) => {
  const p = pool();
  const tx0 = legacyTx(1, 0, 1000n);
  const tx2 = legacyTx(1, 2, 1000n);
  const tx3 = legacyTx(1, 3, 1000n);
  p.add(tx0, ctx());
  t.deepEqual(p.add(tx3, ctx()), { pending: false });
  t.deepEqual(p.add(tx2, ctx()), { pending: false });
  t.is(p.nextNonce(addressOf(1)), 1n);
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [tx0], queued: [tx2, tx3] });
  t.deepEqual(p.stats(), { localCount: 3, remoteCount: 0, pendingCount: 1, queuedCount: 2 });

  const tx1 = legacyTx(1, 1, 1000n);
  t.deepEqual(p.add(tx1, ctx()), { pending: true });
  t.is(p.nextNonce(addressOf(1)), 4n);
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [tx0, tx1, tx2, tx3], queued: [] });
});

test('a sender with only queued transactions has no pool nonce', (t) => {
  const p = pool();
  p.add(legacyTx(1, 5, 1000n), ctx({ account: { nonce: 3n } }));
  t.is(p.nextNonce(addressOf(1)), undefined);
  t.is(p.nextNonce(addressOf(2)), undefined);
  t.deepEqual(p.contentFrom(addressOf(2)), { pending: [], queued: [] });
});

test('a fresher account nonce seen at admission drops stale transactions and promotes', (t) => {
  const p = pool();
  p.add(legacyTx(1, 0, 1000n), ctx());
  p.add(legacyTx(1, 2, 1000n), ctx());
  // Nonces 0 and 1 were mined elsewhere; the pool hears of it through the next admission.
  p.add(legacyTx(1, 3, 1000n), ctx({ account: { nonce: 2n } }));
  t.deepEqual(nonces(p.contentFrom(addressOf(1)).pending), [2n, 3n]);
  t.is(p.size, 2);
  // A stale state read after that does not resurrect nonce 1.
  t.is(rejection(() => p.add(legacyTx(1, 1, 1000n), ctx({ account: { nonce: 0n } }))).message, 'Nonce too low');
});

// ---------------------------------------------------------------------------------------------------
// Block selection

test('selection: nonce order per sender, senders interleaved by effective tip', (t) => {
  const p = pool();
  const a0 = feeMarketTx(1, 0, 1000n, 50n);
  const a1 = feeMarketTx(1, 1, 1000n, 10n);
  const b0 = feeMarketTx(2, 0, 1000n, 30n);
  const c0 = feeMarketTx(3, 0, 1000n, 40n);
  const c2 = feeMarketTx(3, 2, 1000n, 99n); // behind a gap: not executable
  for (const tx of [a1, b0, c2, a0, c0]) p.add(tx, ctx({ local: false }));
  const selected = p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100 });
  t.deepEqual(selected, [a0, c0, b0, a1]);
  // Base fee 980 caps the tip at 20 for max fee 1000: a1's 10 still ranks last.
  const legacyD = legacyTx(4, 0, 1005n); // effective tip 25 at base fee 980
  p.add(legacyD, ctx({ local: false }));
  // At base fee 980, a0, b0 and c0 all earn min(tip, 1000 − 980) = 20, so arrival order decides
  // (b0, a0, c0); legacyD earns 1005 − 980 = 25 and goes first; a1 earns 10.
  t.deepEqual(p.selectForBlock({ baseFee: 980n, gasLimit: 30_000_000n, maxCount: 100 }), [legacyD, b0, a0, c0, a1]);
});

test('selection from an arrival point leaves out earlier arrivals, which still take their place, gas and count', (t) => {
  const p = pool();
  const a0 = feeMarketTx(1, 0, 1000n, 50n, { gasLimit: 100_000n });
  const b0 = feeMarketTx(2, 0, 1000n, 30n);
  for (const tx of [a0, b0]) p.add(tx, ctx());
  const point = p.arrivalSequence;
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100, fromSequence: point }), [], 'nothing new');
  const a1 = feeMarketTx(1, 1, 1000n, 50n);
  const c0 = feeMarketTx(3, 0, 1000n, 10n);
  const c1 = feeMarketTx(3, 1, 1000n, 10n);
  for (const tx of [a1, c0, c1]) p.add(tx, ctx());
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100, fromSequence: point }), [a1, c0, c1], 'ranked among themselves');
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100 }), [a0, a1, b0, c0, c1]);
  // a0 and b0 count: 100,000 + 21,000 gas and two places are taken already.
  t.deepEqual(p.selectForBlock({ gasLimit: 163_000n, maxCount: 100, fromSequence: point }), [a1, c0]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 3, fromSequence: point }), [a1]);
});

test('selection from an arrival point takes a transaction that arrived before it but became selectable after it', (t) => {
  const p = pool();
  const a0 = feeMarketTx(1, 0, 1000n, 50n);
  const a2 = feeMarketTx(1, 2, 1000n, 50n);
  for (const tx of [a0, a2]) p.add(tx, ctx());
  const point = p.arrivalSequence;
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100 }), [a0], 'a2 waits behind the gap');
  // a1 fills the gap: a2 arrived before the point, but could not be selected then.
  const a1 = feeMarketTx(1, 1, 1000n, 50n);
  p.add(a1, ctx());
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100, fromSequence: point }), [a1, a2]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 100, fromSequence: p.arrivalSequence }), [], 'nothing new after that');
});

test('a continued selection leaves out the successors of a transaction that did not fit', (t) => {
  const p = pool();
  const a0 = feeMarketTx(1, 0, 1000n, 50n, { gasLimit: 60_000n });
  const b0 = feeMarketTx(2, 0, 1000n, 40n, { gasLimit: 60_000n });
  const c0 = feeMarketTx(3, 0, 1000n, 10n);
  for (const tx of [a0, b0, c0]) p.add(tx, ctx());
  const request = { gasLimit: 110_000n, maxCount: 100 };
  let point = p.arrivalSequence;
  t.deepEqual(p.selectForBlock(request), [a0, c0], 'b0 does not fit after a0');
  // b1 would fit in the 29,000 gas left, but its sender's run ended at b0; c1 follows c0.
  const b1 = feeMarketTx(2, 1, 1000n, 40n);
  p.add(b1, ctx());
  t.deepEqual(p.selectForBlock({ ...request, fromSequence: point }), []);
  point = p.arrivalSequence;
  const c1 = feeMarketTx(3, 1, 1000n, 10n);
  p.add(c1, ctx());
  t.deepEqual(p.selectForBlock({ ...request, fromSequence: point }), [c1]);
});

test('selection skips transactions that cannot pay the base fee, with their successors', (t) => {
  const p = pool();
  const a0 = feeMarketTx(1, 0, 500n, 5n);
  const a1 = feeMarketTx(1, 1, 5000n, 5n);
  const b0 = feeMarketTx(2, 0, 5000n, 1n);
  for (const tx of [a0, a1, b0]) p.add(tx, ctx());
  t.deepEqual(p.selectForBlock({ baseFee: 1000n, gasLimit: 30_000_000n, maxCount: 100 }), [b0]);
  // At base fee 500, a0 can pay but earns nothing, so b0 (tip 1) goes first and a1 follows a0.
  t.deepEqual(p.selectForBlock({ baseFee: 500n, gasLimit: 30_000_000n, maxCount: 100 }), [b0, a0, a1]);
});

test('selection respects the gas limit and max count', (t) => {
  const p = pool();
  const big = feeMarketTx(1, 0, 1000n, 50n, { gasLimit: 100_000n });
  const bigNext = feeMarketTx(1, 1, 1000n, 50n);
  const small1 = feeMarketTx(2, 0, 1000n, 10n);
  const small2 = feeMarketTx(3, 0, 1000n, 5n);
  for (const tx of [big, bigNext, small1, small2]) p.add(tx, ctx());
  // 60k gas: `big` does not fit (so neither does its successor); the small ones do.
  t.deepEqual(p.selectForBlock({ gasLimit: 60_000n, maxCount: 100 }), [small1, small2]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 2 }), [big, bigNext]);
  t.deepEqual(p.selectForBlock({ gasLimit: 20_999n, maxCount: 100 }), []);
});

test('local transactions come first unless local priority is off', (t) => {
  const remoteRich = feeMarketTx(1, 0, 1000n, 100n);
  const localPoor = feeMarketTx(2, 0, 1000n, 1n);
  const withPriority = pool();
  withPriority.add(remoteRich, ctx({ local: false }));
  withPriority.add(localPoor, ctx({ local: true }));
  t.deepEqual(withPriority.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [localPoor, remoteRich]);
  const without = pool({ noLocalPriority: true });
  without.add(remoteRich, ctx({ local: false }));
  without.add(localPoor, ctx({ local: true }));
  t.deepEqual(without.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [remoteRich, localPoor]);
});

test('selection starts at the nonce the caller reports', (t) => {
  const p = pool();
  const txs = [0, 1, 2].map((n) => legacyTx(1, n, 1000n));
  for (const tx of txs) p.add(tx, ctx());
  const senderNonce = (sender: string) => (sender === addressKey(1) ? 2n : undefined);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10, senderNonce }), [txs[2]]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10, senderNonce: () => undefined }), txs);
});

// ---------------------------------------------------------------------------------------------------
// Block import

test('onBlockImported removes included and stale transactions and promotes queued ones', (t) => {
  const p = pool();
  const a = [0, 1, 2].map((n) => legacyTx(1, n, 1000n));
  const b0 = legacyTx(2, 0, 1000n);
  const c1 = legacyTx(3, 1, 1000n);
  const c2 = legacyTx(3, 2, 1000n);
  for (const tx of [...a, b0, c1, c2]) p.add(tx, ctx());
  t.is(p.nextNonce(addressOf(3)), undefined);

  // The block holds a0, a1 and another transaction of sender 2 at nonce 0 (so b0 is stale), and sender
  // 3's nonce 0 came from elsewhere. Hashes come as bytes or as their keys.
  const removed = p.onBlockImported(
    [a[0]!.hash, toHexKey(a[1]!.hash), new Uint8Array(32).fill(9)],
    new Map([
      [addressKey(2).toUpperCase().replace('0X', '0x'), 1n],
      [addressKey(3).slice(2), 1n],
    ]),
  );
  t.is(removed, 3);
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [a[2]!], queued: [] });
  t.is(p.getByHash(b0.hash), undefined);
  t.deepEqual(p.contentFrom(addressOf(2)), { pending: [], queued: [] });
  t.deepEqual(p.contentFrom(addressOf(3)), { pending: [c1, c2], queued: [] });
  t.is(p.nextNonce(addressOf(1)), 3n);
  t.is(p.nextNonce(addressOf(3)), 3n);
  t.deepEqual(p.stats(), { localCount: 3, remoteCount: 0, pendingCount: 3, queuedCount: 0 });
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [a[2]!, c1, c2]);
  // A new transaction of sender 1 below its new nonce is too low even with a stale state read.
  t.is(rejection(() => p.add(legacyTx(1, 1, 5000n), ctx())).message, 'Nonce too low');
});

test('remove() turns the successors of a pending transaction into queued ones', (t) => {
  const p = pool();
  const txs = [0, 1, 2].map((n) => legacyTx(1, n, 1000n));
  for (const tx of txs) p.add(tx, ctx());
  t.true(p.remove(txs[1]!.hash));
  t.false(p.remove(txs[1]!.hash));
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [txs[0]!], queued: [txs[2]!] });
  t.is(p.nextNonce(addressOf(1)), 1n);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [txs[0]!]);
});

test('entries() exposes pool metadata', (t) => {
  const p = pool();
  const local = legacyTx(1, 0, 1000n);
  const remote = legacyTx(2, 0, 1000n);
  p.add(local, ctx({ local: true, now: 1 }));
  p.add(remote, ctx({ local: false, now: 2 }));
  const seen = [...p.entries()].map((e) => [e.tx, e.local, e.addedAt]);
  t.deepEqual(seen, [
    [local, true, 1],
    [remote, false, 2],
  ]);
});

// ---------------------------------------------------------------------------------------------------
// Cumulative cost: what a sender's pooled transactions already commit of its balance

const ETH = 10n ** 18n;
const GWEI = 10n ** 9n;
/** Upfront cost of a 21,000-gas transfer at `gasPrice` sending `value`. */
const transferCost = (gasPrice: bigint, value: bigint): bigint => 21_000n * gasPrice + value;

/** A pool that records what it reports as dropped. */
function recordingPool(options: Partial<TransactionPoolOptions> = {}) {
  const dropped: { hashes: string[]; reason: DropReason }[] = [];
  const p = new TransactionPool(options, (txs, reason) => dropped.push({ hashes: txs.map((tx) => toHexKey(tx.hash)), reason }));
  const droppedAs = (reason: DropReason): string[] => dropped.filter((d) => d.reason === reason).flatMap((d) => d.hashes);
  return { p, dropped, droppedAs };
}

test('admission counts the costs of the sender\'s pooled transactions with lower nonces', (t) => {
  const p = pool();
  const cost = transferCost(1000n, ETH);
  const account = { balance: 3n * cost };
  for (let n = 0; n < 3; n++) p.add(legacyTx(1, n, 1000n, { value: ETH }), ctx({ account }));
  t.deepEqual(rejection(() => p.add(legacyTx(1, 3, 1000n, { value: ETH }), ctx({ account }))), {
    code: -32004,
    message: 'Upfront cost exceeds account balance',
  });
  // A cheaper one still fits in what is left, and other senders are unaffected.
  t.notThrows(() => p.add(legacyTx(1, 3, 1000n), ctx({ account: { balance: 3n * cost + 21_000n * 1000n } })));
  t.notThrows(() => p.add(legacyTx(2, 0, 1000n, { value: ETH }), ctx({ account })));
});

test('a future nonce counts every pooled transaction below it, and higher nonces do not count', (t) => {
  const p = pool();
  const cost = transferCost(1000n, ETH);
  p.add(legacyTx(1, 0, 1000n, { value: ETH }), ctx({ account: { balance: 2n * cost } }));
  p.add(legacyTx(1, 5, 1000n, { value: ETH }), ctx({ account: { balance: 2n * cost } }));
  // Nonce 3 sits below 5, so only nonce 0 counts for it; nonce 6 counts 0 and 5.
  t.notThrows(() => p.add(legacyTx(1, 3, 1000n, { value: ETH }), ctx({ account: { balance: 2n * cost } })));
  t.is(rejection(() => p.add(legacyTx(1, 6, 1000n, { value: ETH }), ctx({ account: { balance: 3n * cost } }))).code, -32004);
});

test('a replacement is checked with its own cost, and the later nonces it leaves unaffordable wait in the pool', (t) => {
  const { p, droppedAs } = recordingPool();
  const balance = 3n * transferCost(2000n, ETH);
  const account = { balance };
  const txs = [0, 1, 2].map((n) => legacyTx(1, n, 1000n, { value: ETH }));
  for (const tx of txs) p.add(tx, ctx({ account }));
  // Replacing nonce 1 with a transfer of the whole balance cannot pass: nonce 0 comes first.
  t.is(rejection(() => p.add(legacyTx(1, 1, 2000n, { value: balance }), ctx({ account }))).code, -32004);
  // A replacement that fits with nonce 0 but not with nonce 2 is admitted; nonce 2 stays, unselected.
  const bigger = legacyTx(1, 1, 2000n, { value: 2n * ETH });
  t.deepEqual(p.add(bigger, ctx({ account })), { pending: true, replaced: txs[1] });
  t.deepEqual(droppedAs('replaced'), [toHexKey(txs[1]!.hash)]);
  t.is(p.size, 3);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [txs[0], bigger]);
  t.is(p.getEntry(txs[2]!.hash)?.layer, 'sparse');
  t.deepEqual(p.sendersToRefresh(), [addressKey(1)]);
  // A deposit seen in a fresh read makes it executable again.
  p.updateAccounts([{ address: addressOf(1), nonce: 0n, balance: balance + ETH }]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [txs[0], bigger, txs[2]]);
  t.deepEqual(p.sendersToRefresh(), []);
});

test('129 transfers from a 200 ETH account: those past the balance are refused, every admitted one is mined', (t) => {
  // The case, with the pool alone: each transfer sends 2 ETH, so about 99 fit in 200 ETH.
  const { p, dropped } = recordingPool();
  const maxFee = 2n * GWEI;
  let balance = 200n * ETH;
  const admitted: DecodedTx[] = [];
  let refused = 0;
  for (let n = 0; n < 129; n++) {
    const tx = feeMarketTx(1, n, maxFee, GWEI, { value: 2n * ETH });
    try {
      p.add(tx, ctx({ account: { nonce: 0n, balance }, baseFee: GWEI }));
      admitted.push(tx);
    } catch (err) {
      t.is((err as RpcError).toObject().code, -32004);
      refused++;
    }
  }
  const perTx = transferCost(maxFee, 2n * ETH);
  t.is(admitted.length, Number((200n * ETH) / perTx));
  t.is(refused, 129 - admitted.length);
  // Blocks of at most 30 transfers, each paying base fee + tip (less than its max fee).
  let nonce = 0n;
  for (let block = 1n; p.size > 0 && block < 20n; block++) {
    p.setHead(block, GWEI);
    const selected = p.selectForBlock({ baseFee: GWEI, gasLimit: 30n * 21_000n, maxCount: 100 });
    t.true(selected.length > 0, `block ${block} takes transactions`);
    for (const tx of selected) {
      t.is(tx.nonce, nonce++);
      balance -= 21_000n * (GWEI + GWEI) + tx.value;
    }
    p.onBlockImported(selected.map((tx) => tx.hash), new Map([[addressKey(1), nonce]]));
    // A fresh read at the new head, as the actor makes for a later admission.
    p.updateAccounts([{ address: addressOf(1), nonce, balance }], block);
  }
  t.is(nonce, BigInt(admitted.length));
  t.is(p.size, 0);
  t.deepEqual(dropped, []);
});

test('an included transaction lowers the balance the pool holds by its upfront cost until a fresh read', (t) => {
  const p = pool();
  const cost = transferCost(1000n, ETH);
  const txs = [0, 1].map((n) => legacyTx(1, n, 1000n, { value: ETH }));
  p.setHead(1n, undefined);
  for (const tx of txs) p.add(tx, ctx({ account: { balance: 3n * cost }, stateBlock: 1n }));
  p.setHead(2n, undefined);
  p.onBlockImported([txs[0]!.hash], new Map());
  // A read racing the import (still at block 1) shows the old balance and nonce: the pool's figures
  // win, 3 × cost − cost for nonce 0, of which nonce 1 commits one more.
  const behind = ctx({ account: { nonce: 0n, balance: 3n * cost }, stateBlock: 1n });
  t.is(rejection(() => p.add(legacyTx(1, 0, 2000n), behind)).message, 'Nonce too low');
  t.notThrows(() => p.add(legacyTx(1, 2, 1000n, { value: ETH }), behind));
  t.is(rejection(() => p.add(legacyTx(1, 3, 1000n), behind)).code, -32004);
  // A read at the new head is the truth (the mined transfer paid less than its upfront cost).
  const current = ctx({ account: { nonce: 1n, balance: 2n * cost + 21_000n * 1000n }, stateBlock: 2n });
  t.notThrows(() => p.add(legacyTx(1, 3, 1000n), current));
});

test('a sender whose balance paid for transactions the pool never held is read again', (t) => {
  const p = pool();
  p.add(legacyTx(1, 0, 1000n), ctx());
  p.add(legacyTx(1, 1, 1000n), ctx());
  p.onBlockImported([], new Map([[addressKey(1), 1n]]));
  t.deepEqual(p.sendersToRefresh(), [addressKey(1)]);
  p.updateAccounts([{ address: addressKey(1), nonce: 1n, balance: RICH }]);
  t.deepEqual(p.sendersToRefresh(), []);
});

// ---------------------------------------------------------------------------------------------------
// What block building reports

test('build rejections: a used nonce drops as stale, a short balance holds, a missing predecessor or a low price changes nothing, invalid drops', (t) => {
  const { p, droppedAs } = recordingPool();
  const a = [0, 1].map((n) => legacyTx(1, n, 1000n));
  const b = [0, 1, 2].map((n) => legacyTx(2, n, 1000n));
  const c = [0, 1].map((n) => legacyTx(3, n, 1000n));
  const d0 = legacyTx(4, 0, 1000n);
  for (const tx of [...a, ...b, ...c, d0]) p.add(tx, ctx());

  p.onBuildRejected([
    { hash: a[0]!.hash, reason: 'nonce-too-low' },
    { hash: b[1]!.hash, reason: 'insufficient-funds' },
    { hash: c[0]!.hash, reason: 'underpriced' },
    { hash: c[1]!.hash, reason: 'nonce-too-high' },
    { hash: d0.hash, reason: 'invalid' },
  ]);
  t.deepEqual(droppedAs('stale'), [toHexKey(a[0]!.hash)]);
  t.deepEqual(droppedAs('invalid'), [toHexKey(d0.hash)]);
  // a1 now waits behind a gap until the block that used nonce 0 arrives.
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [], queued: [a[1]!] });
  // b1 and b2 stay, held back: b0 is still selected.
  t.is(p.size, 6);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [b[0], c[0], c[1]]);
  t.deepEqual(p.sendersToRefresh(), [addressKey(2)]);
  // A fresh read at the head that covers them releases them.
  p.updateAccounts([{ address: addressOf(2), nonce: 0n, balance: RICH }]);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [b[0], b[1], b[2], c[0], c[1]]);
  // The used nonce's block arrives: a1 becomes pending.
  p.onBlockImported([], new Map([[addressKey(1), 1n]]));
  t.deepEqual(p.contentFrom(addressOf(1)), { pending: [a[1]!], queued: [] });
});

test('a read of another block than the pool\'s head does not release a hold', (t) => {
  const p = pool();
  p.setHead(5n, undefined);
  const tx = legacyTx(1, 0, 1000n);
  p.add(tx, ctx({ stateBlock: 5n }));
  p.onBuildRejected([{ hash: tx.hash, reason: 'insufficient-funds' }]);
  p.updateAccounts([{ address: addressOf(1), nonce: 0n, balance: RICH }], 4n);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), []);
  p.updateAccounts([{ address: addressOf(1), nonce: 0n, balance: RICH }], 5n);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [tx]);
});

// ---------------------------------------------------------------------------------------------------
// Limits and eviction (Besu's layered pool)

test('memory size estimate grows with the encoding', (t) => {
  const small = legacyTx(1, 0, 1000n);
  const big = legacyTx(1, 0, 1000n, { gasLimit: 100_000n });
  t.true(memorySizeOf(small) > small.raw.length);
  t.true(memorySizeOf(big) >= memorySizeOf(small));
  const p = pool();
  p.add(small, ctx());
  t.is(p.getEntry(small.hash)?.size, memorySizeOf(small));
});

test('only the prioritized layer is selected; a better transaction displaces the lowest-ranked sender\'s latest nonce', (t) => {
  const p = pool({ maxPrioritized: 3 });
  const low = [0, 1].map((n) => feeMarketTx(1, n, 1000n, 10n));
  const mid = [0, 1].map((n) => feeMarketTx(2, n, 1000n, 20n));
  for (const tx of [...low, ...mid]) p.add(tx, ctx({ local: false }));
  // low0, low1, mid0 arrived first; mid1 outranks low1 (tip 20 > 10), which goes down to ready.
  t.deepEqual(p.layerStats().prioritized.count, 3);
  t.is(p.getEntry(low[1]!.hash)?.layer, 'ready');
  t.is(p.getEntry(mid[1]!.hash)?.layer, 'prioritized');
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [mid[0], mid[1], low[0]]);
  // A transaction that ranks below everything prioritized goes to ready.
  const lowest = feeMarketTx(3, 0, 1000n, 1n);
  p.add(lowest, ctx({ local: false }));
  t.is(p.getEntry(lowest.hash)?.layer, 'ready');
  // Mined transactions make room: the best ready ones move up.
  p.onBlockImported([mid[0]!.hash, mid[1]!.hash], new Map());
  t.is(p.getEntry(low[1]!.hash)?.layer, 'prioritized');
  t.is(p.getEntry(lowest.hash)?.layer, 'prioritized');
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [low[0], low[1], lowest]);
});

test('a per-type cap limits prioritized transactions of that type', (t) => {
  const p = pool({ maxPrioritized: 10, maxPrioritizedByType: { 2: 2 } });
  const typed = [1, 2, 3].map((s) => feeMarketTx(s, 0, 1000n, BigInt(10 * s)));
  const legacy = legacyTx(4, 0, 1000n);
  for (const tx of [...typed, legacy]) p.add(tx, ctx({ local: false }));
  t.deepEqual(p.layerStats().prioritized.byType, { 0: 1, 1: 0, 2: 2, 3: 0, 4: 0 });
  // The lowest-ranked type-2 one (tip 10) waits in ready.
  t.is(p.getEntry(typed[0]!.hash)?.layer, 'ready');
  // Without a base fee the legacy transaction tips its whole gas price.
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [legacy, typed[2], typed[1]]);
});

test('a full ready layer moves its least valuable sender\'s latest nonce to sparse, and a full sparse layer evicts oldest sender first, latest nonce first', (t) => {
  const unit = memorySizeOf(feeMarketTx(1, 0, 1000n, 1n));
  // Room for 3 transactions per layer (sizes differ by a byte or two between signatures).
  const { p, droppedAs } = recordingPool({ maxPrioritized: 0, layerMaxCapacity: 3 * unit + 8 });
  const rich = [0, 1, 2].map((n) => feeMarketTx(1, n, 5000n, 1n));
  for (const tx of rich) p.add(tx, ctx({ local: false }));
  t.deepEqual(p.layerStats().ready.count, 3);
  // A sender with a lower max fee: it is the least valuable, so its own latest nonces go down.
  const poor = [0, 1].map((n) => feeMarketTx(2, n, 2000n, 1n));
  for (const tx of poor) p.add(tx, ctx({ local: false }));
  t.deepEqual(
    [...rich, ...poor].map((tx) => p.getEntry(tx.hash)?.layer),
    ['ready', 'ready', 'ready', 'sparse', 'sparse'],
  );
  // A richer sender than `rich` enters: `rich` gives up its latest nonce.
  const richer = feeMarketTx(3, 0, 9000n, 1n);
  p.add(richer, ctx({ local: false }));
  t.is(p.getEntry(richer.hash)?.layer, 'ready');
  t.is(p.getEntry(rich[2]!.hash)?.layer, 'sparse');
  t.deepEqual(droppedAs('evicted'), []);
  // Sparse holds rich2, poor0, poor1 (in arrival order); a future transaction overflows it. The oldest
  // sparse transaction is rich2: its sender loses its latest nonce, which is rich2 itself.
  const future = feeMarketTx(4, 7, 9000n, 1n);
  p.add(future, ctx({ local: false }));
  t.deepEqual(droppedAs('evicted'), [toHexKey(rich[2]!.hash)]);
  t.is(p.size, 6);
  t.true(p.layerStats().sparse.bytes <= 3 * unit + 8);
  t.true(p.layerStats().ready.bytes <= 3 * unit + 8);
  // Next the oldest is poor0, and `poor` loses its latest nonce first: poor1, then poor0.
  p.add(feeMarketTx(5, 3, 9000n, 1n), ctx({ local: false }));
  t.deepEqual(droppedAs('evicted'), [toHexKey(rich[2]!.hash), toHexKey(poor[1]!.hash)]);
  t.is(p.getEntry(poor[0]!.hash)?.layer, 'sparse');
  p.add(feeMarketTx(6, 3, 9000n, 1n), ctx({ local: false }));
  t.deepEqual(droppedAs('evicted'), [toHexKey(rich[2]!.hash), toHexKey(poor[1]!.hash), toHexKey(poor[0]!.hash)]);
  t.deepEqual(p.contentFrom(addressOf(2)), { pending: [], queued: [] });
  // Ready was never touched by sparse evictions.
  t.deepEqual([rich[0], rich[1], richer].map((tx) => p.getEntry(tx!.hash)?.layer), ['ready', 'ready', 'ready']);
});

test('a newly admitted transaction that ranks lowest in a full pool is the one evicted', (t) => {
  const unit = memorySizeOf(legacyTx(1, 0, 1000n));
  const { p, droppedAs } = recordingPool({ maxPrioritized: 0, layerMaxCapacity: unit + 8 });
  const first = legacyTx(1, 5, 1000n);
  const second = legacyTx(2, 5, 1000n);
  p.add(first, ctx({ local: false }));
  // The oldest sparse transaction's sender goes first: `first`, not the newcomer.
  p.add(second, ctx({ local: false }));
  t.deepEqual(droppedAs('evicted'), [toHexKey(first.hash)]);
  t.truthy(p.getByHash(second.hash));
});

test('space freed by a block brings demoted transactions back up', (t) => {
  const unit = memorySizeOf(feeMarketTx(1, 0, 1000n, 1n));
  const p = pool({ maxPrioritized: 2, layerMaxCapacity: 2 * unit + 8 });
  const txs = [0, 1, 2, 3, 4, 5].map((n) => feeMarketTx(1, n, 1000n, 1n));
  for (const tx of txs) p.add(tx, ctx({ local: false }));
  t.deepEqual(txs.map((tx) => p.getEntry(tx.hash)?.layer), ['prioritized', 'prioritized', 'ready', 'ready', 'sparse', 'sparse']);
  p.onBlockImported([txs[0]!.hash, txs[1]!.hash], new Map());
  t.deepEqual(txs.slice(2).map((tx) => p.getEntry(tx.hash)?.layer), ['prioritized', 'prioritized', 'ready', 'ready']);
  t.deepEqual(p.layerStats(), {
    prioritized: { count: 2, byType: { 0: 0, 1: 0, 2: 2, 3: 0, 4: 0 } },
    ready: { count: 2, bytes: memorySizeOf(txs[4]!) + memorySizeOf(txs[5]!) },
    sparse: { count: 0, bytes: 0 },
  });
});

test('a fresh read with less balance takes the unaffordable out of prioritized and lets others move up', (t) => {
  const p = pool({ maxPrioritized: 2 });
  const a = [0, 1].map((n) => feeMarketTx(1, n, 1000n, 50n));
  const b0 = feeMarketTx(2, 0, 1000n, 10n);
  for (const tx of [...a, b0]) p.add(tx, ctx({ local: false }));
  t.is(p.getEntry(b0.hash)?.layer, 'ready');
  p.updateAccounts([{ address: addressOf(1), nonce: 0n, balance: 21_000n * 1000n }]);
  t.deepEqual([a[0], a[1], b0].map((tx) => p.getEntry(tx!.hash)?.layer), ['prioritized', 'sparse', 'prioritized']);
  t.deepEqual(p.selectForBlock({ gasLimit: 30_000_000n, maxCount: 10 }), [a[0], b0]);
});

test('a gap inside the prioritized run sends the transactions behind it to sparse', (t) => {
  const p = pool();
  const txs = [0, 1, 2].map((n) => legacyTx(1, n, 1000n));
  for (const tx of txs) p.add(tx, ctx());
  p.remove(txs[1]!.hash);
  t.deepEqual(txs.map((tx) => p.getEntry(tx.hash)?.layer), ['prioritized', undefined, 'sparse']);
  t.deepEqual(p.layerStats().prioritized.count, 1);
});

/** Checks the layers against what the pool holds: counts, bytes, limits, and nonce order per sender. */
function checkLayers(t: ExecutionContext, p: TransactionPool, options: Partial<TransactionPoolOptions>): void {
  const entries = [...p.entries()];
  const stats = p.layerStats();
  const of = (layer: string) => entries.filter((e) => e.layer === layer);
  const bytes = (list: PoolEntry[]) => list.reduce((sum, e) => sum + e.size, 0);
  t.is(stats.prioritized.count, of('prioritized').length);
  t.is(stats.ready.count, of('ready').length);
  t.is(stats.ready.bytes, bytes(of('ready')));
  t.is(stats.sparse.count, of('sparse').length);
  t.is(stats.sparse.bytes, bytes(of('sparse')));
  t.true(stats.prioritized.count <= (options.maxPrioritized ?? 4000));
  for (const [type, cap] of Object.entries(options.maxPrioritizedByType ?? {})) t.true(stats.prioritized.byType[Number(type) as 0] <= cap);
  t.true(stats.ready.bytes <= (options.layerMaxCapacity ?? 25_000_000));
  t.true(stats.sparse.bytes <= (options.layerMaxCapacity ?? 25_000_000));
  const rank = { prioritized: 0, ready: 1, sparse: 2 } as const;
  for (const sender of new Set(entries.map((e) => e.senderKey))) {
    const { pending, queued } = p.contentFrom(sender);
    const layers = [...pending, ...queued].map((tx) => rank[p.getEntry(tx.hash)!.layer]);
    t.deepEqual(layers, [...layers].sort(), `layers follow nonce order for ${sender}`);
    t.true(queued.every((tx) => p.getEntry(tx.hash)!.layer === 'sparse'), 'queued transactions are sparse');
  }
}

test('random admissions, blocks, rejections and removals keep the layers consistent and within limits', (t) => {
  // mulberry32: a small seeded generator, so a failure replays.
  let seed = 42;
  const random = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const unit = memorySizeOf(feeMarketTx(1, 0, 1000n, 1n));
  const options: Partial<TransactionPoolOptions> = { maxPrioritized: 6, maxPrioritizedByType: { 0: 2 }, layerMaxCapacity: 5 * unit };
  const { p, droppedAs } = recordingPool(options);
  const nonces = new Map<number, bigint>();
  let mined = 0;
  for (let step = 0; step < 400; step++) {
    const op = random(10);
    if (op < 7) {
      const sender = 200 + random(8);
      const nonce = (nonces.get(sender) ?? 0n) + BigInt(random(5));
      const fee = BigInt(1000 + random(5) * 100);
      const tx = random(3) === 0 ? legacyTx(sender, Number(nonce), fee) : feeMarketTx(sender, Number(nonce), fee, BigInt(random(50)));
      const balance = random(4) === 0 ? 21_000n * fee * 2n : RICH;
      try {
        p.add(tx, ctx({ local: false, account: { nonce: nonces.get(sender) ?? 0n, balance } }));
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
      }
    } else if (op < 9) {
      const block = p.selectForBlock({ gasLimit: BigInt(1 + random(4)) * 21_000n, maxCount: 10 });
      for (const tx of block) nonces.set([...keys.keys()].find((k) => addressKey(k) === toHexKey(tx.sender))!, tx.nonce + 1n);
      p.onBlockImported(block.map((tx) => tx.hash), new Map());
      mined += block.length;
    } else {
      const all = [...p.entries()];
      const victim = all[random(Math.max(1, all.length))];
      if (victim !== undefined) {
        const reasons = ['nonce-too-high', 'insufficient-funds', 'invalid'] as const;
        if (random(2) === 0) p.onBuildRejected([{ hash: victim.tx.hash, reason: reasons[random(3)]! }]);
        else p.updateAccounts([{ address: victim.senderKey, nonce: 0n, balance: RICH }]);
      }
    }
    checkLayers(t, p, options);
  }
  // The run went through every path that moves transactions.
  t.true(p.size > 0 && mined > 0);
  t.true(droppedAs('evicted').length > 0 && droppedAs('invalid').length > 0 && droppedAs('replaced').length > 0);
  t.log(`${mined} mined, ${droppedAs('evicted').length} evicted, ${p.size} left: ${JSON.stringify(p.layerStats())}`);
});

/**
 * As block building asks: a whole selection when a block starts, then again and again from where the
 * last answer stopped, while transactions arrive, are replaced, rejected, re-read or removed. The pool
 * may answer a continuation from the newcomers alone (selectForBlock); a selection from the caller's
 * nonces (`senderNonce`, here always the pool's own) is always a whole one, so it is the reference:
 * the same transactions, each sender's in nonce order. Returns how many continuations there were and
 * how many brought transactions.
 */
function checkContinuedSelections(t: ExecutionContext, options: Partial<TransactionPoolOptions>, seed: number): { continued: number; answered: number } {
  const random = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const p = pool(options);
  const nonces = new Map<number, bigint>();
  const senderOf = (tx: DecodedTx): number => [...keys.keys()].find((k) => addressKey(k) === toHexKey(tx.sender))!;
  const sorted = (txs: DecodedTx[]): string[] => txs.map((tx) => toHexKey(tx.hash)).sort();
  let continued = 0;
  let answered = 0;
  for (let block = 1; block <= 40; block++) {
    const request = {
      gasLimit: random(4) === 0 ? BigInt(10 + random(30)) * 21_000n : 30_000_000n,
      maxCount: random(4) === 0 ? 10 + random(30) : 1000,
      ...(random(3) === 0 ? {} : { baseFee: BigInt(900 + random(4) * 50) }),
    };
    let point = p.arrivalSequence;
    const inBlock = p.selectForBlock(request);
    for (let step = 0; step < 40; step++) {
      const op = random(20);
      if (op < 16) {
        const sender = 300 + random(12);
        // Mostly the sender's next nonce; sometimes one past it (a gap) or a replacement.
        const next = p.nextNonce(addressOf(sender)) ?? nonces.get(sender) ?? 0n;
        const nonce = [next, next, next, next + 1n, next > 0n ? next - 1n : next][random(5)]!;
        const fee = BigInt(900 + random(6) * 50);
        const shape = { gasLimit: random(4) === 0 ? 60_000n : 21_000n };
        const tx = random(3) === 0 ? legacyTx(sender, Number(nonce), fee, shape) : feeMarketTx(sender, Number(nonce), fee, BigInt(random(60)), shape);
        try {
          p.add(tx, ctx({ local: random(4) === 0, account: { nonce: nonces.get(sender) ?? 0n, balance: random(6) === 0 ? 21_000n * fee * 3n : RICH } }));
        } catch (err) {
          if (!(err instanceof RpcError)) throw err;
        }
      } else {
        const all = [...p.entries()];
        const victim = all[random(Math.max(1, all.length))];
        if (victim !== undefined) {
          if (op === 16) p.onBuildRejected([{ hash: victim.tx.hash, reason: random(2) === 0 ? 'insufficient-funds' : 'invalid' }]);
          else if (op === 17) p.updateAccounts([{ address: victim.senderKey, nonce: 0n, balance: RICH }]);
          else if (op === 18) p.remove(victim.tx.hash);
        }
      }
      const from = point;
      point = p.arrivalSequence;
      // Now and then another question than the block's (another base fee, less gas or room).
      const asked = [request, request, request, request, request, request, { ...request, baseFee: 1000n }, { ...request, gasLimit: 100_000n }, { ...request, maxCount: 3 }][random(9)]!;
      const answer = p.selectForBlock({ ...asked, fromSequence: from });
      const whole = p.selectForBlock({ ...asked, fromSequence: from, senderNonce: () => undefined });
      t.deepEqual(sorted(answer), sorted(whole), `block ${block}, step ${step}`);
      const lastNonce = new Map<string, bigint>();
      for (const tx of answer) {
        const key = toHexKey(tx.sender);
        t.true((lastNonce.get(key) ?? -1n) < tx.nonce, 'each sender in nonce order');
        lastNonce.set(key, tx.nonce);
      }
      continued++;
      if (answer.length > 0) answered++;
      if (asked === request) inBlock.push(...answer);
    }
    // The block ends: what it took is mined (each sender's nonces up to the last taken).
    for (const tx of inBlock) nonces.set(senderOf(tx), maxOf(nonces.get(senderOf(tx)) ?? 0n, tx.nonce + 1n));
    p.setHead(BigInt(block), undefined);
    p.onBlockImported(inBlock.map((tx) => tx.hash), new Map());
    checkLayers(t, p, options);
  }
  return { continued, answered };
}

const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);

test('selections continued from an arrival point answer what a whole selection from that point answers', (t) => {
  // Room for everything: most continuations bring newcomers.
  const roomy = checkContinuedSelections(t, { maxPrioritized: 120 }, 7);
  // A prioritized layer of 8: newcomers push others out and are pushed out themselves.
  const tight = checkContinuedSelections(t, { maxPrioritized: 8 }, 11);
  t.true(roomy.answered > roomy.continued / 5 && tight.answered > tight.continued / 20, JSON.stringify({ roomy, tight }));
  t.log(`continued selections with transactions: ${roomy.answered} of ${roomy.continued} (roomy), ${tight.answered} of ${tight.continued} (tight)`);
});

// ---------------------------------------------------------------------------------------------------
// Blob transactions (fields set by hand: the pool does not look at blobs themselves)

function asBlobTx(base: DecodedTx, blobCount: number, maxFeePerBlobGas: bigint): DecodedTx {
  return { ...base, type: 3, blobVersionedHashes: Array.from({ length: blobCount }, () => new Uint8Array(32)), maxFeePerBlobGas };
}

test('a blob transaction\'s upfront cost includes blob gas × max fee per blob gas', (t) => {
  const blob = asBlobTx(feeMarketTx(1, 0, 1000n, 1n), 2, 10n);
  const upfront = 21_000n * 1000n + 2n * 131_072n * 10n;
  t.is(rejection(() => pool().add(blob, ctx({ account: { balance: upfront - 1n } }))).code, -32004);
  t.notThrows(() => pool().add(blob, ctx({ account: { balance: upfront } })));
});

test('a blob replacement needs the blob price bump on every fee, its blob fee included', (t) => {
  const p = pool();
  p.add(asBlobTx(feeMarketTx(1, 0, 1000n, 100n), 1, 50n), ctx());
  const underpriced = 'Replacement transaction underpriced';
  // 10 % is not enough for blobs: 100 % is.
  t.is(rejection(() => p.add(asBlobTx(feeMarketTx(1, 0, 1100n, 110n), 1, 100n), ctx())).message, underpriced);
  t.is(rejection(() => p.add(asBlobTx(feeMarketTx(1, 0, 2000n, 200n), 1, 99n), ctx())).message, underpriced);
  t.notThrows(() => p.add(asBlobTx(feeMarketTx(1, 0, 2000n, 200n), 1, 100n), ctx()));
  const lenient = pool({ blobPriceBump: 10 });
  lenient.add(asBlobTx(feeMarketTx(1, 0, 1000n, 100n), 1, 50n), ctx());
  t.notThrows(() => lenient.add(asBlobTx(feeMarketTx(1, 0, 1100n, 110n), 1, 55n), ctx()));
});

test('the blob type is capped at 72 prioritized transactions by default', (t) => {
  const p = pool();
  for (let s = 0; s < 80; s++) p.add(asBlobTx(feeMarketTx(100 + s, 0, 1000n, BigInt(1 + s)), 1, 1n), ctx({ local: false }));
  const stats = p.layerStats();
  t.is(stats.prioritized.byType[3], 72);
  t.is(stats.ready.count, 8);
});

// ---------------------------------------------------------------------------------------------------
// Throughput (printed, not asserted)

test('throughput: decode + add 2,000 transactions from 200 senders, then select', (t) => {
  const senders = 200;
  const perSender = 10;
  const raws: Uint8Array[] = [];
  for (let n = 0; n < perSender; n++) {
    for (let s = 0; s < senders; s++) {
      const tx = createFeeMarket1559Tx(
        { chainId: CHAIN_ID, nonce: n, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: BigInt(1 + s), gasLimit: 21000, to: RECIPIENT },
        { common },
      ).sign(keyFor(10_000 + s));
      raws.push(tx.serialize());
    }
  }
  const p = pool();
  const decodeStart = performance.now();
  const decoded = raws.map((raw) => decodeRawTransaction(raw, rules));
  const decodeMs = performance.now() - decodeStart;
  const addStart = performance.now();
  for (const tx of decoded) p.add(tx, ctx({ local: false, account: { nonce: 0n, balance: RICH } }));
  const addMs = performance.now() - addStart;
  t.is(p.size, senders * perSender);
  t.is(p.stats().pendingCount, senders * perSender);

  const selectStart = performance.now();
  const block = p.selectForBlock({ baseFee: 7n, gasLimit: 500n * 21000n, maxCount: 500 });
  const selectMs = performance.now() - selectStart;
  t.is(block.length, 500);
  const importStart = performance.now();
  p.onBlockImported(
    block.map((tx) => tx.hash),
    new Map(),
  );
  const importMs = performance.now() - importStart;
  t.is(p.size, senders * perSender - 500);

  const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);
  t.log(
    `decode ${decodeMs.toFixed(0)} ms (${rate(raws.length, decodeMs)} tx/s single-threaded), ` +
      `add ${addMs.toFixed(1)} ms (${rate(raws.length, addMs)} tx/s), ` +
      `select 500 of 2000 ${selectMs.toFixed(1)} ms, onBlockImported ${importMs.toFixed(1)} ms`,
  );
});
