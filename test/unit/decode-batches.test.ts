/** The pool's decode batching (src/txpool/decode-batches.ts): one tick's submissions travel in at most one batch per decode thread. */
import test from 'ava';
import type { TxRules } from '../../src/shared/ethereum/decoded-tx.js';
import type { DecodedTx } from '../../src/shared/ethereum/decoded-tx.js';
import { DecodeBatches } from '../../src/txpool/decode-batches.js';

const rulesA: TxRules = { chainId: 1n, hardfork: 'cancun', allowedTypes: [0, 1, 2, 3] };
const rulesB: TxRules = { chainId: 1n, hardfork: 'prague', allowedTypes: [0, 1, 2, 3, 4] };

/** A decoder that answers each raw with its first byte as the nonce, and records the batches it got. */
function recordingDecoder(fail?: (raws: Uint8Array[]) => boolean) {
  const batches: { size: number; rules: TxRules }[] = [];
  const decode = async (raws: Uint8Array[], rules: TxRules) => {
    batches.push({ size: raws.length, rules });
    if (fail?.(raws)) throw new Error('decoder thread died');
    return raws.map((raw) => (raw[0] === 0xff ? { error: { code: -32602, message: 'Invalid params' } } : { ok: { nonce: BigInt(raw[0]!) } as DecodedTx }));
  };
  return { batches, decode };
}

test('one tick of submissions goes out in at most one batch per thread, each answer to its own caller', async (t) => {
  const { batches, decode } = recordingDecoder();
  const batcher = new DecodeBatches(decode, 2);
  const outcomes = await Promise.all(Array.from({ length: 9 }, (_, i) => batcher.decode(Uint8Array.of(i === 4 ? 0xff : i), rulesA)));
  t.deepEqual(batches.map((b) => b.size), [5, 4]);
  outcomes.forEach((outcome, i) => {
    if (i === 4) t.deepEqual(outcome, { error: { code: -32602, message: 'Invalid params' } });
    else t.is('ok' in outcome && outcome.ok.nonce, BigInt(i));
  });
  // The next tick starts new batches.
  await batcher.decode(Uint8Array.of(7), rulesA);
  t.deepEqual(batches.map((b) => b.size), [5, 4, 1]);
});

test('transactions checked against different rules (the head moved) are never in one batch; a failed batch fails only its own', async (t) => {
  const { batches, decode } = recordingDecoder((raws) => raws.includes(raws.find((raw) => raw[0] === 9)!));
  const batcher = new DecodeBatches(decode, 1);
  const a = batcher.decode(Uint8Array.of(1), rulesA);
  const b = batcher.decode(Uint8Array.of(9), rulesB);
  const c = batcher.decode(Uint8Array.of(2), rulesA);
  t.deepEqual(await a, { ok: { nonce: 1n } as DecodedTx });
  t.deepEqual(await c, { ok: { nonce: 2n } as DecodedTx });
  await t.throwsAsync(b, { message: 'decoder thread died' });
  t.deepEqual(batches, [{ size: 2, rules: rulesA }, { size: 1, rules: rulesB }]);
});

test('while every thread has a batch, new transactions wait and leave together when one finishes', async (t) => {
  const batches: number[] = [];
  const release: (() => void)[] = [];
  const batcher = new DecodeBatches(async (raws) => {
    batches.push(raws.length);
    await new Promise<void>((resolve) => release.push(resolve));
    return raws.map((raw) => ({ ok: { nonce: BigInt(raw[0]!) } as DecodedTx }));
  }, 1);
  const first = batcher.decode(Uint8Array.of(1), rulesA);
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(batches, [1]);
  // The one thread is busy: these three wait, across ticks.
  const later = [batcher.decode(Uint8Array.of(2), rulesA)];
  await new Promise((resolve) => setImmediate(resolve));
  later.push(batcher.decode(Uint8Array.of(3), rulesA), batcher.decode(Uint8Array.of(4), rulesA));
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(batches, [1]);
  release.shift()!();
  t.deepEqual(await first, { ok: { nonce: 1n } as DecodedTx });
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(batches, [1, 3]);
  release.shift()!();
  t.deepEqual(
    (await Promise.all(later)).map((outcome) => 'ok' in outcome && outcome.ok.nonce),
    [2n, 3n, 4n],
  );
});
