/**
 * The reference signer the native QBFT signer is tested against (@noble/secp256k1: RFC 6979 nonce,
 * low-s). Test-only: the node signs with native libsecp256k1 (src/shared/qbft/seal.ts).
 */
import * as nobleSecp from '@noble/secp256k1';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

nobleSecp.hashes.sha256 ??= sha256;
nobleSecp.hashes.hmacSha256 ??= (key, message) => hmac(sha256, key, message);

const SEAL_LENGTH = 65;

/** The same signature computed with @noble/secp256k1 — the reference the native signer is tested against. */
export function signHashWithNoble(sealHash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  if (sealHash.length !== 32) throw new RangeError(`seal hash must be 32 bytes, got ${sealHash.length}`);
  // 'recovered' format is recovery(1) || r(32) || s(32); Besu wants the recovery id last.
  const recovered = nobleSecp.sign(sealHash, privateKey, { prehash: false, lowS: true, format: 'recovered' });
  const recovery = recovered[0];
  if (recovery > 1) {
    // Only possible when r overflowed the group order (probability ~2^-128); Besu cannot express it.
    throw new Error(`signature recovery id ${recovery} cannot be encoded as a QBFT seal`);
  }
  const seal = new Uint8Array(SEAL_LENGTH);
  seal.set(recovered.subarray(1, 65), 0);
  seal[64] = recovery;
  return seal;
}
