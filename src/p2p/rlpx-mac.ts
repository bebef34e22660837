/**
 * The RLPx frame MACs of @ethereumjs/devp2p on hash-wasm's WebAssembly keccak. The library's MAC
 * hashes every byte a connection sends and receives with pure-JavaScript keccak: under load (QBFT
 * proposals of thousands of transactions, transaction gossip) that was a third of the p2p thread.
 * Same algorithm, same digests (test/unit/p2p-unit.test.ts compares them with the library's own):
 * the running keccak state of each MAC is kept as a hash-wasm saved state and loaded into one shared
 * hasher for each step; hashing is synchronous, so no two steps interleave.
 */
import { createCipheriv } from 'node:crypto';
import { MAC } from '@ethereumjs/devp2p';
import { createKeccak } from 'hash-wasm';

const hasher = await createKeccak(256);
hasher.init();
const INITIAL_STATE = hasher.save();

/** What the patched methods keep on a MAC instead of the library's hasher. */
interface WasmMacState {
  _secret: Uint8Array;
  _wasmState?: Uint8Array;
}

function absorb(mac: WasmMacState, data: Uint8Array): void {
  hasher.load(mac._wasmState ?? INITIAL_STATE);
  hasher.update(data);
  mac._wasmState = hasher.save();
}

/** The first 16 bytes of the digest of everything absorbed so far; the running state goes on. */
function digest16(mac: WasmMacState): Uint8Array {
  hasher.load(mac._wasmState ?? INITIAL_STATE);
  return hasher.digest('binary').slice(0, 16);
}

/** devp2p's xor: as long as the shorter input. */
function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.min(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

function encrypt(secret: Uint8Array, block: Uint8Array): Uint8Array {
  return createCipheriv('aes-256-ecb', secret, '').update(block);
}

let installed = false;

/** Puts the WebAssembly keccak under every devp2p MAC made from now on (idempotent). */
export function useWasmRlpxMac(): void {
  if (installed) return;
  installed = true;
  const proto = MAC.prototype as unknown as Record<string, unknown>;
  proto.update = function (this: WasmMacState, data: Uint8Array): void {
    absorb(this, data);
  };
  proto.updateHeader = function (this: WasmMacState, data: Uint8Array): void {
    absorb(this, xor(encrypt(this._secret, digest16(this)), data));
  };
  proto.updateBody = function (this: WasmMacState, data: Uint8Array): void {
    absorb(this, data);
    const prev = digest16(this);
    absorb(this, xor(encrypt(this._secret, prev), prev));
  };
  proto.digest = function (this: WasmMacState): Uint8Array {
    return digest16(this);
  };
}
