/** Piscina task: decode + recover one raw transaction. Errors cross the thread as plain `{code, message}`. */
import { toRpcErrorObject } from '../rpc/errors.js';
import type { RpcErrorObject } from '../rpc/types.js';
import { decodeRawTransaction } from './decode.js';
import type { DecodedTx, TxRules } from './types.js';

export type DecodeTaskResult = { ok: DecodedTx } | { error: RpcErrorObject };

export default function decodeTask({ raw, rules }: { raw: Uint8Array; rules: TxRules }): DecodeTaskResult {
  try {
    return { ok: decodeRawTransaction(raw, rules) };
  } catch (err) {
    return { error: toRpcErrorObject(err) };
  }
}
