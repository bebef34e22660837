import type { StateManagerInterface } from '@ethereumjs/common';
import type { TypedTransaction } from '@ethereumjs/tx';
import type { Address } from '@ethereumjs/util';
import type { AccountSnapshot } from '../shared/actors/messages.js';

/**
 * A new head carries the post-block accounts of the block's senders, up to this many, for the pool:
 * under load the same senders send again at once, and their admission then waits for no account read
 * (a read from the chain while it executes the next block). Blocks with more senders leave the reads
 * to the pool.
 */
export const SENDER_ACCOUNTS_CARRIED = 256;

/** An EIP-7702 delegation (0xef0100 ‖ address) is code that may still send transactions. */
function isDelegation(code: Uint8Array): boolean {
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00;
}

/** What the pool needs of an account to admit its transactions, as `stateManager` holds it. */
export async function accountSnapshot(stateManager: StateManagerInterface, address: Address): Promise<AccountSnapshot> {
  const account = await stateManager.getAccount(address);
  const hasCode = account?.isContract() === true && !isDelegation(await stateManager.getCode(address));
  return { nonce: account?.nonce ?? 0n, balance: account?.balance ?? 0n, hasCode };
}

/** The distinct senders of `transactions`, by address hex, in the order they first send. */
export function sendersOf(transactions: Iterable<TypedTransaction>): Map<string, Address> {
  const senders = new Map<string, Address>();
  for (const tx of transactions) {
    const sender = tx.getSenderAddress();
    senders.set(sender.toString(), sender);
  }
  return senders;
}

/** `senders` (address hex → address) with their accounts, or undefined past the limit. */
export async function senderAccounts(
  stateManager: StateManagerInterface,
  senders: ReadonlyMap<string, Address>,
): Promise<[string, AccountSnapshot][] | undefined> {
  if (senders.size > SENDER_ACCOUNTS_CARRIED) return undefined;
  const accounts = await Promise.all([...senders.values()].map((address) => accountSnapshot(stateManager, address)));
  return [...senders.keys()].map((key, i) => [key, accounts[i]!]);
}
