/**
 * Steps of ethereumjs' `runTx` (`@ethereumjs/vm` 10) that the node's own transaction paths repeat:
 * a plain `eth_call` run as a bare EVM message (simulation.ts) and a block's common transactions
 * (chain/block-transaction.ts). Both must end where runTx ends, so both take these from one place.
 */
import { TransactionType } from '@ethereumjs/tx';
import type { AccessList2930Tx, TypedTransaction } from '@ethereumjs/tx';
import type { Address } from '@ethereumjs/util';
import { bytesToUnprefixedHex } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';

/**
 * What runTx marks warm before the transaction's call, in its order: the access list's addresses and
 * slots (EIP-2930), then from Berlin on the precompiles, the sender and the recipient (EIP-2929), and
 * from Shanghai the coinbase (EIP-3651).
 */
export function warmTransactionAddresses(vm: VM, tx: TypedTransaction, from: Address, coinbase: Address): void {
  const journal = vm.evm.journal;
  if (tx.type !== TransactionType.Legacy) {
    for (const [address, slots] of (tx as AccessList2930Tx).accessList) {
      const addressHex = bytesToUnprefixedHex(address);
      journal.addAlwaysWarmAddress(addressHex, true);
      for (const slot of slots) journal.addAlwaysWarmSlot(addressHex, bytesToUnprefixedHex(slot), true);
    }
  }
  const common = vm.common;
  if (!common.isActivatedEIP(2929)) return;
  for (const address of vm.evm.precompiles.keys()) journal.addAlwaysWarmAddress(address);
  journal.addAlwaysWarmAddress(from.toString());
  if (tx.to !== undefined) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(tx.to.bytes));
  if (common.isActivatedEIP(3651)) journal.addAlwaysWarmAddress(bytesToUnprefixedHex(coinbase.bytes));
}

/**
 * The gas a transaction is charged, as runTx reckons it from the intrinsic gas, what the call used and
 * the call's refund counter: the refund capped at the used gas over `maxRefundQuotient` (EIP-3529), and
 * under EIP-7623 at least the calldata floor. `gasRefund` is runTx's `results.gasRefund`: the refund
 * counter before the cap, or 0 when the floor applies.
 */
export function chargedGas(vm: VM, gasUsed: bigint, refundCounter: bigint, floorGas: bigint): { totalGasSpent: bigint; gasRefund: bigint } {
  const common = vm.common;
  let totalGasSpent = gasUsed;
  if (refundCounter !== 0n) {
    const maxRefund = totalGasSpent / common.param('maxRefundQuotient');
    totalGasSpent -= refundCounter < maxRefund ? refundCounter : maxRefund;
  }
  if (common.isActivatedEIP(7623) && totalGasSpent < floorGas) return { totalGasSpent: floorGas, gasRefund: 0n };
  return { totalGasSpent, gasRefund: refundCounter };
}
