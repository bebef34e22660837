/**
 * Piscina task: decode + recover a batch of raw transactions (those the pool received in one tick:
 * one message each way per batch, not per transaction). Errors cross the thread as plain `{code, message}`.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../../src/shared/util/hex-builtins.js';
import { toRpcErrorObject } from '../../src/shared/rpc/errors.js';
import type { RpcErrorObject } from '../../src/shared/rpc/types.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import type { BlobVerifier } from '../../src/tasks/transaction-decode.js';
import type { DecodedTx, TxRules } from '../../src/shared/ethereum/decoded-tx.js';
import { nameThisThread } from '../../src/shared/util/thread-name.js';

nameThisThread('tx-decode');

export type DecodeTaskResult = { ok: DecodedTx } | { error: RpcErrorObject };

export default async function decodeTransactions({ raws, rules }: { raws: Uint8Array[]; rules: TxRules }): Promise<DecodeTaskResult[]> {
  const results: DecodeTaskResult[] = [];
  for (const raw of raws) {
    try {
      // Blob transactions (type 3) need KZG; its trusted setup takes seconds to load, so only then.
      const kzg = raw[0] === 3 ? await loadBlobVerifier() : undefined;
      results.push({ ok: decodeRawTransaction(raw, rules, kzg) });
    } catch (err) {
      results.push({ error: toRpcErrorObject(err) });
    }
  }
  return results;
}

let verifier: Promise<BlobVerifier> | undefined;

function loadBlobVerifier(): Promise<BlobVerifier> {
  verifier ??= import('kzg-wasm').then(({ loadKZG }) => loadKZG());
  return verifier;
}
