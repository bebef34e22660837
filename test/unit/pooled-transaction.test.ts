/**
 * The chain's own construction of a pool candidate (`pooledTransaction`) against ethereumjs'
 * `createTxFromRLP`, which it replaces for EIP-1559 transactions: the same object for any fields, and,
 * where the block's fork refuses the transaction, the same error.
 */
import test from 'ava';
import fc from 'fast-check';
import { createFeeMarket1559Tx, createLegacyTx, createTxFromRLP } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { pooledTransaction } from '../../src/chain/pooled-transaction.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';

const KEY = hexToBytes(`0x${'42'.repeat(32)}`);
const prague = txCommonFor(1337n, 'prague');

function sameTransaction(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void; is: (a: unknown, b: unknown, m?: string) => void }, ours: TypedTransaction, theirs: TypedTransaction): void {
  t.deepEqual(Object.keys(ours), Object.keys(theirs), 'same fields in the same order (one object shape)');
  t.deepEqual(ours.toJSON(), theirs.toJSON());
  t.is(bytesToHex(ours.serialize()), bytesToHex(theirs.serialize()));
  t.is(bytesToHex(ours.hash()), bytesToHex(theirs.hash()));
  t.is(ours.getSenderAddress().toString(), theirs.getSenderAddress().toString());
  t.is(ours.getUpfrontCost(7n), theirs.getUpfrontCost(7n));
  t.is(ours.getIntrinsicGas(), theirs.getIntrinsicGas());
  // A base fee above the transaction's max fee throws: the same way for both.
  t.is(outcome(() => ours.getEffectivePriorityFee(7n)), outcome(() => theirs.getEffectivePriorityFee(7n)));
  t.is(ours.isSigned(), theirs.isSigned());
  t.is(ours.supports(1559), theirs.supports(1559));
  t.is(ours.supports(2930), theirs.supports(2930));
  t.is(Object.isFrozen(ours), Object.isFrozen(theirs));
}

/** What `f` answers, or what it throws. */
function outcome(f: () => unknown): unknown {
  try {
    return f();
  } catch (err) {
    return `threw ${err instanceof Error ? err.message : String(err)}`;
  }
}

const hexBytes = (min: number, max: number) => fc.uint8Array({ minLength: min, maxLength: max }).map((b) => bytesToHex(b));

test('an EIP-1559 transaction: the same object as createTxFromRLP, for any fields', (t) => {
  fc.assert(
    fc.property(
      fc.record({
        nonce: fc.bigInt({ min: 0n, max: 2n ** 64n - 2n }),
        gasLimit: fc.bigInt({ min: 21_000n, max: 2n ** 24n }),
        maxPriorityFeePerGas: fc.bigInt({ min: 0n, max: 10n ** 12n }),
        extraFee: fc.bigInt({ min: 0n, max: 10n ** 12n }),
        value: fc.bigInt({ min: 0n, max: 2n ** 200n }),
        to: fc.option(hexBytes(20, 20), { nil: undefined }),
        data: hexBytes(0, 64),
        accessList: fc.array(fc.record({ address: hexBytes(20, 20), storageKeys: fc.array(hexBytes(32, 32), { maxLength: 2 }) }), { maxLength: 2 }),
      }),
      ({ extraFee, to, ...fields }) => {
        const signed = createFeeMarket1559Tx(
          { ...fields, chainId: 1337n, maxFeePerGas: fields.maxPriorityFeePerGas + extraFee, ...(to === undefined ? {} : { to }) },
          { common: prague },
        ).sign(KEY);
        const raw = signed.serialize();
        sameTransaction(t, pooledTransaction(raw, prague), createTxFromRLP(raw, { common: prague, freeze: false }));
      },
    ),
    { numRuns: 60 },
  );
});

test('where the block fork refuses an admitted transaction, the same error as createTxFromRLP', (t) => {
  const overOsakaCap = createFeeMarket1559Tx({ chainId: 1337n, gasLimit: 2n ** 24n + 1n, maxFeePerGas: 10n, to: `0x${'11'.repeat(20)}` }, { common: prague }).sign(KEY).serialize();
  // Admitted before Shanghai, where initcode had no size limit (49,152 bytes from EIP-3860 on).
  const paris = txCommonFor(1337n, 'paris');
  const largeInitcode = createFeeMarket1559Tx({ chainId: 1337n, gasLimit: 16_000_000n, maxFeePerGas: 10n, data: new Uint8Array(49_153) }, { common: paris }).sign(KEY).serialize();
  const cases: [string, Uint8Array, ReturnType<typeof txCommonFor>][] = [
    ['gas over the EIP-7825 cap under Osaka', overOsakaCap, txCommonFor(1337n, 'osaka')],
    ['a creation over the EIP-3860 initcode limit under Shanghai', largeInitcode, txCommonFor(1337n, 'shanghai')],
    ['EIP-1559 not yet active (Berlin)', overOsakaCap, txCommonFor(1337n, 'berlin')],
    ['another chain id', overOsakaCap, txCommonFor(1338n, 'prague')],
  ];
  for (const [why, raw, common] of cases) {
    const expected = outcome(() => createTxFromRLP(raw, { common, freeze: false }));
    t.regex(String(expected), /^threw /, why);
    t.is(outcome(() => pooledTransaction(raw, common)), expected, why);
  }
  t.is(pooledTransaction(overOsakaCap, prague).gasLimit, 2n ** 24n + 1n, 'under Prague the same bytes are a valid transaction');
  t.is(pooledTransaction(largeInitcode, paris).data.length, 49_153, 'and under Paris the large creation');
});

test('other transaction types are left to createTxFromRLP', (t) => {
  const legacy = createLegacyTx({ nonce: 3n, gasLimit: 21_000n, gasPrice: 10n, to: `0x${'11'.repeat(20)}`, value: 5n }, { common: prague }).sign(KEY).serialize();
  sameTransaction(t, pooledTransaction(legacy, prague), createTxFromRLP(legacy, { common: prague, freeze: false }));
});
