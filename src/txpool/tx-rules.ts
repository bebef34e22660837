/** Which transaction types the pool admits at a fork; handed to every decode task. */
import { txCommonFor as commonFor } from '../shared/ethereum/tx-common.js';
import type { TxRules, TxType } from '../shared/ethereum/decoded-tx.js';

/**
 * The rules for a chain at a fork: the transaction types are derived from the EIPs that fork activates
 * (2930 → type 1, 1559 → type 2, 4844 → type 3, 7702 → type 4).
 */
export function txRulesFor(chainId: bigint, hardfork: string): TxRules {
  const common = commonFor(chainId, hardfork);
  const allowedTypes: TxType[] = [0];
  if (common.isActivatedEIP(2930)) allowedTypes.push(1);
  if (common.isActivatedEIP(1559)) allowedTypes.push(2);
  if (common.isActivatedEIP(4844)) allowedTypes.push(3);
  if (common.isActivatedEIP(7702)) allowedTypes.push(4);
  return { chainId, hardfork, allowedTypes };
}
