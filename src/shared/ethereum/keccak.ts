/**
 * Keccak-256 for the hot paths (trie nodes, account and slot keys, transaction and block hashes):
 * hash-wasm's WebAssembly build, 4–9× faster than @noble/hashes' JavaScript on the 20–600-byte inputs
 * a trie hashes (node-libraries.md; pure-JS keccak was a quarter of the chain thread). One hasher per
 * thread, made when this module loads; hashing is synchronous, so no two uses interleave.
 *
 * Loaded from hash-wasm's keccak-only build: its index carries the WebAssembly of ~30 algorithms as
 * base64 text, which cost each thread that hashes ~4.5 MB of RSS (bench/node-memory.ts).
 */
import keccakBuild from 'hash-wasm/dist/keccak.umd.min.js';

const hasher = await keccakBuild.createKeccak(256);

export function keccak256(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}
