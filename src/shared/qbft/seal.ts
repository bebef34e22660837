/**
 * Commit seals, validator addresses, quorum and proposer rotation (qbft-and-p2p.md §2.6, §3.1, §3.2).
 *
 * Signatures must be byte-identical to Besu's: deterministic RFC 6979 nonces (HMAC-SHA256, no extra
 * entropy) and low-s. Both @noble/secp256k1 and native libsecp256k1 produce exactly that; consensus
 * signs several messages per block per validator, so it signs with the native binding (~15x faster);
 * the tests check it against noble (test/harness/noble-signing.ts) and the spec vectors. Recovery is native too.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import nativeSecp from 'secp256k1';

const SEAL_LENGTH = 65;

/**
 * Sign a 32-byte hash (committed-seal hash or message hash) with no prefix.
 * Returns r(32) || s(32) || v(1) with v ∈ {0, 1}, the layout Besu uses everywhere.
 */
export function signCommitSeal(sealHash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  return signHash(sealHash, privateKey);
}

/**
 * Sign any 32-byte hash (a QBFT message hash or a committed-seal hash) with native libsecp256k1:
 * RFC 6979 nonce, low-s, r(32) || s(32) || v(1) with v ∈ {0, 1}.
 */
export function signHash(hash: Uint8Array, privateKey: Uint8Array): Uint8Array {
  if (hash.length !== 32) throw new RangeError(`hash to sign must be 32 bytes, got ${hash.length}`);
  const { signature, recid } = nativeSecp.ecdsaSign(hash, privateKey);
  if (recid > 1) throw new Error(`signature recovery id ${recid} cannot be encoded as a QBFT signature`);
  const out = new Uint8Array(SEAL_LENGTH);
  out.set(signature, 0);
  out[64] = recid;
  return out;
}

/** keccak256(uncompressed public key without its 0x04 prefix)[12..32]. */
function addressOfPublicKey(uncompressed65: Uint8Array): Uint8Array {
  return keccak_256(uncompressed65.subarray(1)).slice(12);
}

/** Address of a 64-byte node id (uncompressed public key without the 0x04 prefix). */
export function addressFromPublicKey(nodeId: Uint8Array): Uint8Array {
  if (nodeId.length !== 64) throw new RangeError(`public key must be 64 bytes, got ${nodeId.length}`);
  return keccak_256(nodeId).slice(12);
}

/**
 * Address of the signer of `seal` over `sealHash`. Throws if the signature cannot be recovered
 * (malformed seals are already rejected by the extraData decoder).
 */
export function recoverSealSigner(sealHash: Uint8Array, seal: Uint8Array): Uint8Array {
  if (seal.length !== SEAL_LENGTH) throw new RangeError(`seal must be 65 bytes, got ${seal.length}`);
  const recovery = seal[64];
  if (recovery !== 0 && recovery !== 1) throw new RangeError(`seal recovery id must be 0 or 1, got ${recovery}`);
  const publicKey = nativeSecp.ecdsaRecover(seal.subarray(0, 64), recovery, sealHash, false);
  return addressOfPublicKey(publicKey);
}

/** Uncompressed 64-byte public key (no 0x04 prefix) — the devp2p node id. */
export function publicKeyOf(privateKey: Uint8Array): Uint8Array {
  return nativeSecp.publicKeyCreate(privateKey, false).slice(1);
}

/** Validator / account address of a private key. */
export function addressOf(privateKey: Uint8Array): Uint8Array {
  return addressOfPublicKey(nativeSecp.publicKeyCreate(privateKey, false));
}

/** Number of matching prepares/commits/round changes/seals needed: floor((2n-1)/3)+1 = ceil(2n/3). */
export function quorum(validatorCount: number): number {
  if (!Number.isInteger(validatorCount) || validatorCount < 0) {
    throw new RangeError(`validator count must be a non-negative integer, got ${validatorCount}`);
  }
  if (validatorCount === 0) return 0;
  return Math.floor((2 * validatorCount - 1) / 3) + 1;
}

/** Tolerated faulty validators f(n) = floor((n-1)/3). f+1 is the early round-change threshold. */
export function faultTolerance(validatorCount: number): number {
  return validatorCount === 0 ? 0 : Math.floor((validatorCount - 1) / 3);
}

/** Unsigned lexicographic byte order — the order Besu sorts validators in. */
export function compareAddresses(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}

/**
 * Round-robin proposer for (height h, round r) given validators(h) sorted ascending and the coinbase
 * of block h-1 (§3.2). If the previous proposer is no longer a validator (or is the zero genesis
 * coinbase), rotation restarts from the first validator above it, without the usual +1 step.
 */
export function proposerFor(validatorsSorted: Uint8Array[], previousProposer: Uint8Array, round: number): Uint8Array {
  const n = validatorsSorted.length;
  if (n === 0) throw new Error('cannot select a proposer from an empty validator set');
  if (!Number.isInteger(round) || round < 0) throw new RangeError(`round must be a non-negative integer, got ${round}`);
  const previousIndex = validatorsSorted.findIndex((v) => compareAddresses(v, previousProposer) === 0);
  let startIndex: number;
  if (previousIndex >= 0) {
    startIndex = previousIndex + 1;
  } else {
    const firstAbove = validatorsSorted.findIndex((v) => compareAddresses(v, previousProposer) > 0);
    startIndex = firstAbove >= 0 ? firstAbove : 0;
  }
  return validatorsSorted[(startIndex + round) % n];
}
