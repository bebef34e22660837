/**
 * The node id of a node key: its uncompressed public key without the 0x04 prefix. Apart from enode.ts,
 * which every thread loads with the method registry, so that only the threads that derive an id (p2p,
 * the main thread) load @noble/secp256k1 for it.
 */
import { getPublicKey } from '@noble/secp256k1';

export function nodeIdOf(privateKey: Uint8Array): Uint8Array {
  return getPublicKey(privateKey, false).subarray(1);
}
