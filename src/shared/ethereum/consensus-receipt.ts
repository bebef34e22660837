import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import type { StoredReceipt } from './chain-records.js';
import { encodeRlp } from './rlp-encode.js';

/** What a receipt's consensus encoding holds (the rest of a stored receipt is Basalt's own). */
export type ConsensusReceiptFields = Pick<StoredReceipt, 'root' | 'status' | 'cumulativeGasUsed' | 'logsBloom' | 'logs' | 'txType'>;

const EMPTY = new Uint8Array(0);

/**
 * A receipt as the receipts root commits to it: RLP [state root before Byzantium, else status;
 * cumulative gas used; logs bloom; logs], a typed transaction's receipt prefixed with its type
 * (EIP-2718). Byte for byte ethereumjs' `encodeReceipt` (test/unit/consensus-receipt.test.ts), in one
 * buffer: ethereumjs' RLP copies each log once per nesting level, and a block builder encodes one
 * receipt per transaction on the chain thread.
 */
export function encodeConsensusReceipt(receipt: ConsensusReceiptFields): Uint8Array {
  const outcome = receipt.root ?? (receipt.status === 1 ? Uint8Array.of(1) : EMPTY);
  const fields = [outcome, bigIntToUnpaddedBytes(receipt.cumulativeGasUsed), receipt.logsBloom, receipt.logs];
  return encodeRlp(fields, receipt.txType === 0 ? undefined : receipt.txType);
}
