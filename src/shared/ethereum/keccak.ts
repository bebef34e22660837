/**
 * Keccak-256 for the hot paths (trie nodes, account and slot keys, transaction and block hashes):
 * hash-wasm's WebAssembly build, 4–9× faster than @noble/hashes' JavaScript on the 20–600-byte inputs
 * a trie hashes (node-libraries.md; pure-JS keccak was a quarter of the chain thread). One hasher per
 * thread, made when this module loads; hashing is synchronous, so no two uses interleave.
 */
import { createKeccak } from 'hash-wasm';

const hasher = await createKeccak(256);

export function keccak256(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}
