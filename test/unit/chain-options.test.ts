// The chain's node options in one process: Besu's gas-limit targeting rule (--target-gas-limit) and the
// stored receipt with and without a revert reason (--revert-reason-enabled).
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { MIN_GAS_LIMIT, nextGasLimit } from '../../src/chain/chain.js';
import { decodeReceipts, encodeReceipts } from '../../src/chain/receipt-codec.js';
import type { StoredReceipt } from '../../src/shared/ethereum/chain-records.js';

test('without a target the gas limit stays the parent\'s', (t) => {
  t.is(nextGasLimit(30_000_000n, undefined), 30_000_000n);
  t.is(nextGasLimit(30_000_000n, 30_000_000n), 30_000_000n);
});

test('toward a higher target: parent/1024 - 1 per block, then exactly the target', (t) => {
  const step = 30_000_000n / 1024n - 1n; // 29295
  t.is(nextGasLimit(30_000_000n, 40_000_000n), 30_000_000n + step);
  t.is(nextGasLimit(30_000_000n, 30_010_000n), 30_010_000n, 'a target within one step is reached');
  let gasLimit = 30_000_000n;
  let blocks = 0;
  while (gasLimit !== 31_000_000n) {
    const next = nextGasLimit(gasLimit, 31_000_000n);
    // The header rule: |gasLimit - parent| < parent / 1024 (strict).
    t.true(next - gasLimit < gasLimit / 1024n);
    t.true(next > gasLimit);
    gasLimit = next;
    blocks++;
  }
  t.is(blocks, 34);
});

test('toward a lower target, never below 5000', (t) => {
  t.is(nextGasLimit(30_000_000n, 1n), 30_000_000n - (30_000_000n / 1024n - 1n));
  t.is(nextGasLimit(29_990_000n, 29_980_000n), 29_980_000n);
  t.is(nextGasLimit(5_002n, 0n), MIN_GAS_LIMIT, 'a step below 5000 stops at 5000');
  t.is(nextGasLimit(5_004n, 0n), 5_001n);
  t.is(nextGasLimit(5_000n, 100n), 5_000n);
  t.is(nextGasLimit(1_024_000n, 1n), 1_024_000n - 999n);
});

test('near the top the limit stops at 2^63 - 1', (t) => {
  const max = 2n ** 63n - 1n;
  t.is(nextGasLimit(max - 5n, max + 1000n), max);
});

const baseReceipt: StoredReceipt = {
  status: 0,
  cumulativeGasUsed: 53_000n,
  gasUsed: 53_000n,
  logsBloom: new Uint8Array(256),
  logs: [],
  txType: 2,
  effectiveGasPrice: 7n,
  from: new Uint8Array(20).fill(1),
};

test('a receipt without a revert reason keeps the 12-item layout older databases hold', (t) => {
  const encoded = encodeReceipts([baseReceipt]);
  const [items] = RLP.decode(encoded) as unknown as Uint8Array[][];
  t.is(items!.length, 12);
  const [decoded] = decodeReceipts(encoded);
  t.false('revertReason' in decoded!);
  t.deepEqual(decoded, baseReceipt);
});

test('a revert reason, even an empty one, survives storage', (t) => {
  const reason = Uint8Array.from(Buffer.from('08c379a0', 'hex'));
  const [withReason, withEmpty] = decodeReceipts(encodeReceipts([{ ...baseReceipt, revertReason: reason }, { ...baseReceipt, revertReason: new Uint8Array(0) }]));
  t.deepEqual(withReason!.revertReason, reason);
  t.deepEqual(withEmpty!.revertReason, new Uint8Array(0), 'a bare REVERT is kept as empty data (0x), not as no reason');
});
