/**
 * The ethereumjs transaction of a pool candidate, for the block being built.
 *
 * The pool's decoder built each transaction with ethereumjs before admitting it (`decodeRawTransaction`)
 * and checked every field; `createTxFromRLP` on the chain does the same checks again (RLP, field
 * shapes, overflows, chain id, y-parity, high s), about 15 µs a transaction warm and twice that on a
 * fresh node: a tenth of the chain's time per plain transfer. For an EIP-1559 transaction, this makes the
 * same object from the fields directly, after only the checks that depend on the block's fork (the
 * fork may have changed since admission). Anything else — another type, a fork rule that now fails, a
 * malformed candidate — goes through `createTxFromRLP` as before, which throws what it always threw.
 */
import { RLP } from '@ethereumjs/rlp';
import type { Common } from '@ethereumjs/common';
import { Capability, FeeMarket1559Tx, TransactionType, createTxFromRLP } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, bytesToBigInt } from '@ethereumjs/util';

/** What `new FeeMarket1559Tx` lists; read-only for ethereumjs (`supports`), so one array serves all. */
const FEE_MARKET_CAPABILITIES: readonly number[] = Object.freeze([Capability.EIP1559FeeMarket, Capability.EIP2718TypedTransaction, Capability.EIP2930AccessLists]);

/** Options the chain builds its transactions with: unfrozen, `pinKnown` freezes them. */
const BUILD_OPTIONS = Object.freeze({ freeze: false });

type RlpItem = Uint8Array | RlpItem[];

/** Unfrozen, as `createTxFromRLP(raw, { common, freeze: false })` answers. */
export function pooledTransaction(raw: Uint8Array, common: Common): TypedTransaction {
  if (raw[0] === TransactionType.FeeMarketEIP1559) {
    const trusted = feeMarketTx(raw, common);
    if (trusted !== undefined) return trusted;
  }
  return createTxFromRLP(raw, { common, ...BUILD_OPTIONS });
}

function feeMarketTx(raw: Uint8Array, common: Common): FeeMarket1559Tx | undefined {
  const values = RLP.decode(raw.subarray(1)) as RlpItem;
  if (!Array.isArray(values) || values.length !== 12) return undefined;
  const [chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit, to, value, data, accessList, v, r, s] = values;
  if (!(chainId instanceof Uint8Array && nonce instanceof Uint8Array && maxPriorityFeePerGas instanceof Uint8Array)) return undefined;
  if (!(maxFeePerGas instanceof Uint8Array && gasLimit instanceof Uint8Array && to instanceof Uint8Array && value instanceof Uint8Array)) return undefined;
  if (!(data instanceof Uint8Array && Array.isArray(accessList) && v instanceof Uint8Array && r instanceof Uint8Array && s instanceof Uint8Array)) return undefined;
  // The fork's rules, as the constructor applies them.
  if (!common.isActivatedEIP(1559) || bytesToBigInt(chainId) !== common.chainId()) return undefined;
  const gas = bytesToBigInt(gasLimit);
  if (common.isActivatedEIP(7825) && !common.isActivatedEIP(8037) && gas > common.param('maxTransactionGasLimit')) return undefined;
  if (to.length === 0 && common.isActivatedEIP(3860) && BigInt(data.length) > common.param('maxInitCodeSize')) return undefined;

  // Fields in the order the constructor sets them, so that both kinds of object share one shape.
  const tx = Object.create(FeeMarket1559Tx.prototype) as Record<string, unknown>;
  tx.type = TransactionType.FeeMarketEIP1559;
  tx.cache = {};
  tx.activeCapabilities = FEE_MARKET_CAPABILITIES;
  tx.common = common.copy();
  tx.txOptions = BUILD_OPTIONS;
  tx.to = to.length > 0 ? new Address(to) : undefined;
  tx.nonce = bytesToBigInt(nonce);
  tx.gasLimit = gas;
  tx.value = bytesToBigInt(value);
  tx.data = data;
  // A y-parity of 0 is an empty byte string; ethereumjs reads it as 0, not as unsigned.
  tx.v = bytesToBigInt(v);
  tx.r = r.length > 0 ? bytesToBigInt(r) : undefined;
  tx.s = s.length > 0 ? bytesToBigInt(s) : undefined;
  tx.chainId = common.chainId();
  tx.accessList = accessList;
  tx.maxFeePerGas = bytesToBigInt(maxFeePerGas);
  tx.maxPriorityFeePerGas = bytesToBigInt(maxPriorityFeePerGas);
  return tx as unknown as FeeMarket1559Tx;
}
