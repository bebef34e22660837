/** JSON-RPC's two hex encodings (spec rpc-auth-cli.md §4). */

/** Quantity: `0x`-prefixed minimal hex, zero is `0x0`. */
export function toQuantity(value: bigint | number): string {
  return '0x' + value.toString(16);
}

/** Data: `0x`-prefixed lowercase hex of every byte (`0x` when empty). */
export function toData(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
