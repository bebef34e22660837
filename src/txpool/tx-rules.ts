/** Which transaction types the pool admits at a fork; handed to every decode task. */
import type { TxRules, TxType } from '../shared/ethereum/decoded-tx.js';
import { FORK_ORDER } from '../shared/ethereum/genesis.js';
import type { ForkName } from '../shared/ethereum/genesis.js';

/**
 * The fork that brings each typed transaction: EIP-2930 (type 1) with Berlin, EIP-1559 (type 2) with
 * London, EIP-4844 (type 3) with Cancun, EIP-7702 (type 4) with Prague. Read from the fork order, not
 * from an ethereumjs Common, so that the pool's thread does not load @ethereumjs/common for it.
 */
const TYPE_FORKS: ReadonlyArray<[TxType, ForkName]> = [
  [1, 'berlin'],
  [2, 'london'],
  [3, 'cancun'],
  [4, 'prague'],
];

/** The rules for a chain at a fork (ethereumjs' hardfork names; `chainstart` admits legacy transactions only). */
export function txRulesFor(chainId: bigint, hardfork: string): TxRules {
  // -1 for chainstart: before every fork of the order.
  const position = FORK_ORDER.indexOf(hardfork as ForkName);
  if (position === -1 && hardfork !== 'chainstart') throw new Error(`no transaction rules for the unknown fork ${hardfork}`);
  const allowedTypes: TxType[] = [0];
  for (const [type, fork] of TYPE_FORKS) if (position >= FORK_ORDER.indexOf(fork)) allowedTypes.push(type);
  return { chainId, hardfork, allowedTypes };
}
