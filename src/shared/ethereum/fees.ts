import type { TypedTransaction } from '@ethereumjs/tx';
import { Capability } from '@ethereumjs/tx';

/**
 * The price per gas a transaction pays in a block: a 1559-style transaction pays
 * min(maxFee, baseFee + tip) (its maxFee when no base fee is known), a legacy one its gas price.
 * Receipts store it; the mined-transaction JSON shows it as `gasPrice`.
 */
export function effectiveGasPrice(tx: TypedTransaction, baseFee: bigint | undefined): bigint {
  if (tx.supports(Capability.EIP1559FeeMarket)) {
    const { maxFeePerGas, maxPriorityFeePerGas } = tx as unknown as { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    if (baseFee === undefined) return maxFeePerGas;
    const capped = baseFee + maxPriorityFeePerGas;
    return capped < maxFeePerGas ? capped : maxFeePerGas;
  }
  return (tx as unknown as { gasPrice: bigint }).gasPrice;
}
