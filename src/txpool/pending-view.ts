/**
 * The pending-transaction JSON of a pooled transaction (eth_getTransactionByHash, txpool_besu*),
 * which format.ts builds from an ethereumjs transaction. The pool loads this module at the first such
 * view: @ethereumjs/tx, /common and /util cost a thread ~12 MB (bench/node-memory.ts), and a pool
 * that only admits and selects transactions never needs them (decoding happens in the decode threads).
 */
import { createTxFromRLP } from '@ethereumjs/tx';
import { createChainCommon } from '../shared/ethereum/common.js';
import type { DecodedTx } from '../shared/ethereum/decoded-tx.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { formatPendingTransaction } from '../shared/rpc/format.js';
import type { Json } from '../shared/rpc/types.js';

/** Formats pooled transactions with the fork rules of `hardfork` (the pool's next block's). */
export type PendingViewFormatter = (tx: DecodedTx, hardfork: string) => Json;

export function pendingViewFormatter(genesis: Genesis): PendingViewFormatter {
  const common = createChainCommon(genesis);
  return (tx, hardfork) => {
    if (common.hardfork() !== hardfork) common.setHardfork(hardfork);
    return formatPendingTransaction(createTxFromRLP(tx.canonical ?? tx.raw, { common }), { address: tx.sender, publicKey: tx.senderPublicKey });
  };
}
