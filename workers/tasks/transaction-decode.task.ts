/** Piscina task: decode + recover one raw transaction. Errors cross the thread as plain `{code, message}`. */
import { toRpcErrorObject } from '../../src/shared/rpc/errors.js';
import type { RpcErrorObject } from '../../src/shared/rpc/types.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import type { BlobVerifier } from '../../src/tasks/transaction-decode.js';
import type { DecodedTx, TxRules } from '../../src/shared/ethereum/decoded-tx.js';

export type DecodeTaskResult = { ok: DecodedTx } | { error: RpcErrorObject };

export default async function decodeTransaction({ raw, rules }: { raw: Uint8Array; rules: TxRules }): Promise<DecodeTaskResult> {
  try {
    // Blob transactions (type 3) need KZG; its trusted setup takes seconds to load, so only then.
    const kzg = raw[0] === 3 ? await loadBlobVerifier() : undefined;
    return { ok: decodeRawTransaction(raw, rules, kzg) };
  } catch (err) {
    return { error: toRpcErrorObject(err) };
  }
}

let verifier: Promise<BlobVerifier> | undefined;

function loadBlobVerifier(): Promise<BlobVerifier> {
  verifier ??= import('kzg-wasm').then(({ loadKZG }) => loadKZG());
  return verifier;
}
