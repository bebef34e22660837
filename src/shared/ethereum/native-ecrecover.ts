import { calculateSigRecovery, setLengthLeft } from '@ethereumjs/util';
import nativeSecp from 'secp256k1';

/**
 * Drop-in for @ethereumjs/util's `ecrecover` backed by libsecp256k1 (~40x faster than the pure-JS
 * one; sender recovery dominates block import). Same contract: 64-byte public key, throws on an
 * invalid v or an unrecoverable signature.
 */
export function nativeEcrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const recovery = calculateSigRecovery(v, chainId);
  if (recovery !== 0n && recovery !== 1n) throw new Error('Invalid signature v value');
  const signature = new Uint8Array(64);
  signature.set(setLengthLeft(r, 32), 0);
  signature.set(setLengthLeft(s, 32), 32);
  return nativeSecp.ecdsaRecover(signature, Number(recovery), msgHash, false).subarray(1);
}
