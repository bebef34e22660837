/**
 * This node's pending validator votes (qbft_proposeValidatorVote / qbft_discardValidatorVote) and the
 * choice of the one vote a block it creates carries (qbft-and-p2p.md §6.1, §6.2).
 *
 * Votes are local: they are never gossiped, and only reach the chain inside blocks this node
 * proposes. A proposal stays until discarded, whether or not it would still change anything.
 */
import type { BftVote } from './extra-data.js';
import type { VoteTally } from './validators.js';
import { addressHex } from './validators.js';
import { hexToBytes } from '../util/bytes.js';

export class PendingVotes {
  /** address hex → true (add) / false (drop), in the order they were first proposed. */
  private readonly proposals = new Map<string, boolean>();
  /** Besu's round-robin position over the votes that would still change something. */
  private position = 0;

  propose(address: Uint8Array, add: boolean): void {
    this.proposals.set(addressHex(address), add);
  }

  discard(address: Uint8Array): void {
    this.proposals.delete(addressHex(address));
  }

  /** `{ "0x…": true|false }` as qbft_getPendingVotes answers. */
  toJson(): Record<string, boolean> {
    return Object.fromEntries(this.proposals);
  }

  get size(): number {
    return this.proposals.size;
  }

  /**
   * The vote for a block this node creates on top of a parent whose tally is `tally`: among the
   * proposals that would still change state, the next one round-robin; none when there is none.
   */
  selectVote(localAddress: Uint8Array, tally: VoteTally): BftVote | undefined {
    const candidates: BftVote[] = [];
    for (const [hex, add] of this.proposals) {
      const recipient = hexToBytes(hex);
      const isValidator = tally.isValidator(recipient);
      const stillUseful = add
        ? (!isValidator && !tally.hasAddVote(localAddress, recipient)) || tally.hasDropVote(localAddress, recipient)
        : (isValidator && !tally.hasDropVote(localAddress, recipient)) || tally.hasAddVote(localAddress, recipient);
      if (stillUseful) candidates.push({ recipient, add });
    }
    if (candidates.length === 0) return undefined;
    this.position = (this.position + 1) % candidates.length;
    return candidates[this.position];
  }
}
