import test from 'ava';
import { encodeReceipt } from '@ethereumjs/vm';
import type { TxReceipt } from '@ethereumjs/vm';
import type { RawLog } from '../../src/shared/ethereum/chain-records.js';
import { encodeConsensusReceipt, type ConsensusReceiptFields } from '../../src/shared/ethereum/consensus-receipt.js';

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

function log(i: number, topics: number, dataLength: number): RawLog {
  return [bytes(20, i), Array.from({ length: topics }, (_, t) => bytes(32, i + t)), bytes(dataLength, 0xab)];
}

function ethereumjsEncoding(r: ConsensusReceiptFields): Uint8Array {
  const base = { cumulativeBlockGasUsed: r.cumulativeGasUsed, bitvector: r.logsBloom, logs: r.logs };
  const receipt: TxReceipt = r.root !== undefined ? { ...base, stateRoot: r.root } : { ...base, status: r.status ?? 0 };
  return encodeReceipt(receipt, r.txType as never);
}

test('a receipt encodes byte for byte as ethereumjs encodeReceipt: every type, status, root, no log or many', (t) => {
  const logSets: RawLog[][] = [[], [log(1, 3, 32)], [log(2, 0, 0), log(3, 4, 300), log(4, 1, 55)], Array.from({ length: 40 }, (_, i) => log(i, 2, 64))];
  let cases = 0;
  for (const txType of [0, 1, 2, 3, 4]) {
    for (const outcome of [{ status: 1 as const }, { status: 0 as const }, { root: bytes(32, 0x5c) }]) {
      for (const cumulativeGasUsed of [21_000n, 0x7fn, 0x80n, 29_999_999n, 2n ** 64n - 1n]) {
        for (const logs of logSets) {
          const receipt: ConsensusReceiptFields = { ...outcome, cumulativeGasUsed, logsBloom: bytes(256, cases % 256), logs, txType };
          t.deepEqual(encodeConsensusReceipt(receipt), ethereumjsEncoding(receipt), `type ${txType}, ${JSON.stringify(outcome)}, gas ${cumulativeGasUsed}, ${logs.length} logs`);
          cases++;
        }
      }
    }
  }
  t.is(cases, 300);
});

test('a typed receipt starts with its type byte and a legacy one with its RLP list prefix', (t) => {
  const receipt = { status: 1 as const, cumulativeGasUsed: 21_000n, logsBloom: bytes(256, 0), logs: [] };
  t.is(encodeConsensusReceipt({ ...receipt, txType: 2 })[0], 2);
  t.true(encodeConsensusReceipt({ ...receipt, txType: 0 })[0]! >= 0xc0);
});
