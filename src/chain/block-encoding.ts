/**
 * A built block's RLP from its transactions' bytes as the pool received them. ethereumjs serialises a
 * block by re-encoding every transaction (tens of microseconds each for a 1559 transfer), and a block
 * we build is serialised twice (for consensus, then sealed for storage): its transactions are already
 * bytes, which only need their list framing.
 */
import type { Block } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';

/**
 * The block-body item of each transaction, from its serialised form: a typed transaction is an RLP
 * string holding its envelope; a legacy one is its RLP list as it is.
 */
export function transactionItems(serialised: readonly Uint8Array[]): Uint8Array[] {
  return serialised.map((bytes) => (bytes.length > 0 && bytes[0]! >= 0xc0 ? bytes : RLP.encode(bytes)));
}

/** `block.serialize()`, with the transactions' body items given (transactionItems) instead of re-encoded. */
export function encodeBlock(block: Block, txItems: readonly Uint8Array[]): Uint8Array {
  const items = [RLP.encode(block.header.raw()), listOfEncoded(txItems), RLP.encode(block.uncleHeaders.map((uncle) => uncle.raw()))];
  if (block.withdrawals !== undefined) items.push(RLP.encode(block.withdrawals.map((withdrawal) => withdrawal.raw())));
  return listOfEncoded(items);
}

/** The RLP list whose items are `encoded`, each already an RLP item. */
function listOfEncoded(encoded: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const item of encoded) length += item.length;
  const prefix = listPrefix(length);
  const out = new Uint8Array(prefix.length + length);
  out.set(prefix, 0);
  let at = prefix.length;
  for (const item of encoded) {
    out.set(item, at);
    at += item.length;
  }
  return out;
}

function listPrefix(payloadLength: number): Uint8Array {
  if (payloadLength < 56) return Uint8Array.of(0xc0 + payloadLength);
  const lengthBytes: number[] = [];
  for (let rest = payloadLength; rest > 0; rest = Math.floor(rest / 256)) lengthBytes.unshift(rest % 256);
  return Uint8Array.of(0xf7 + lengthBytes.length, ...lengthBytes);
}
