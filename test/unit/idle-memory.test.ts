/**
 * The pieces that keep an idle node small: byte helpers that spare a thread @ethereumjs/util, the
 * flag that starts the state readers at the first call needing one, and the one garbage collection
 * each thread runs after its start.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import * as ethereumjs from '@ethereumjs/util';
import { bigIntToUnpaddedBytes, bytesToBigInt, bytesToHex, equalsBytes } from '../../src/shared/util/bytes.js';
import { createReaderDemand, raiseReaderDemand, readerDemanded } from '../../src/shared/shared-memory/reader-demand.js';
import { collectGarbage } from '../../src/shared/util/collect-garbage.js';

test('the byte helpers answer as @ethereumjs/util does', (t) => {
  const samples = [new Uint8Array(0), new Uint8Array([0]), new Uint8Array([0, 1]), new Uint8Array([255]), ...Array.from({ length: 50 }, (_, i) => randomBytes(i))];
  for (const bytes of samples) {
    t.is(bytesToHex(bytes), ethereumjs.bytesToHex(bytes));
    t.is(bytesToBigInt(bytes), ethereumjs.bytesToBigInt(bytes));
    const copy = Uint8Array.from(bytes);
    t.is(equalsBytes(bytes, copy), true);
    if (bytes.length > 0) {
      copy[bytes.length - 1]! ^= 1;
      t.is(equalsBytes(bytes, copy), ethereumjs.equalsBytes(bytes, copy));
    }
    t.is(equalsBytes(bytes, new Uint8Array(bytes.length + 1)), false);
  }
  for (const value of [0n, 1n, 255n, 256n, 2n ** 64n - 1n, 2n ** 255n + 12345n]) {
    t.deepEqual(bigIntToUnpaddedBytes(value), ethereumjs.bigIntToUnpaddedBytes(value));
  }
  // A view into a larger buffer compares and encodes its own bytes only.
  const backing = new Uint8Array([9, 1, 2, 9]);
  t.true(equalsBytes(backing.subarray(1, 3), new Uint8Array([1, 2])));
  t.is(bytesToHex(backing.subarray(1, 3)), '0x0102');
});

test('the reader demand resolves its waiter once raised, and at once when raised before', async (t) => {
  const demand = createReaderDemand();
  let resolved = false;
  const waiting = readerDemanded(demand).then(() => (resolved = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.false(resolved, 'resolved before anyone raised the demand');
  raiseReaderDemand(demand);
  raiseReaderDemand(demand);
  await waiting;
  t.true(resolved);
  await readerDemanded(demand);
});

test('collectGarbage frees what nothing holds and leaves gc unexposed to new contexts', (t) => {
  let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, text: `entry ${i}` }));
  const withGarbage = process.memoryUsage().heapUsed;
  garbage = undefined;
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  t.is(garbage, undefined);
  t.true(after < withGarbage - 5 * 1024 * 1024, `heap used ${withGarbage} before, ${after} after`);
  t.is(runInNewContext('typeof gc'), 'undefined');
});
