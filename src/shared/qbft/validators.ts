/**
 * Who the validators are at each height (qbft-and-p2p.md §3.3, §6.3, §7, §8).
 *
 * Block-header mode: validators(h) is the vote tally after block h-1. The tally restarts from the
 * validator list of every epoch block (its own vote ignored) and from every transition override;
 * between them each block's vote (voter = the block's coinbase) moves a validator in or out once more
 * than half of the current validators agree.
 * Contract mode: validators(h) is `getValidators()` of the transition's contract, called on the state
 * after block h-1.
 *
 * The tally logic is pure; reading headers and calling the contract go through a
 * `ValidatorChainView`, the chain actor in the node and a fake chain in the simulation.
 */
import type { HeightContext, ParentInfo } from './height-context.js';
import { decodeExtraData } from './extra-data.js';
import { compareAddresses } from './seal.js';
import { bytesToHex, hexToBytes } from '../util/bytes.js';
import type { QbftSchedule } from './schedule.js';

export interface HeaderSummary {
  number: bigint;
  /** On-chain hash. */
  hash: Uint8Array;
  coinbase: Uint8Array;
  extraData: Uint8Array;
  timestamp: bigint;
  gasLimit: bigint;
}

export interface ValidatorChainView {
  /** Canonical headers `from..to` inclusive, ascending (shorter if the chain ends earlier). */
  headers(from: bigint, to: bigint): Promise<HeaderSummary[]>;
  /** Return data of a read-only call of `contract` with `data` on the state after block `blockNumber`. */
  callContract(blockNumber: bigint, contract: Uint8Array, data: Uint8Array): Promise<Uint8Array>;
}

/** An address as the tally keys it: lower-case `0x` hex. */
export function addressHex(address: Uint8Array): string {
  return bytesToHex(address);
}

/** The validator set and the outstanding votes after some block (Besu's VoteTally). */
export class VoteTally {
  private constructor(
    private readonly members: ReadonlySet<string>,
    /** recipient → voters who want it added. */
    private readonly addVotes: ReadonlyMap<string, ReadonlySet<string>>,
    /** recipient → voters who want it dropped. */
    private readonly dropVotes: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  /** A fresh tally: exactly these validators, no outstanding votes. */
  static of(validators: readonly Uint8Array[]): VoteTally {
    return new VoteTally(new Set(validators.map(addressHex)), new Map(), new Map());
  }

  /** Sorted ascending. */
  get validators(): Uint8Array[] {
    return [...this.members].map(hexToBytes).sort(compareAddresses);
  }

  get size(): number {
    return this.members.size;
  }

  isValidator(address: Uint8Array): boolean {
    return this.members.has(addressHex(address));
  }

  hasAddVote(voter: Uint8Array, recipient: Uint8Array): boolean {
    return this.addVotes.get(addressHex(recipient))?.has(addressHex(voter)) ?? false;
  }

  hasDropVote(voter: Uint8Array, recipient: Uint8Array): boolean {
    return this.dropVotes.get(addressHex(recipient))?.has(addressHex(voter)) ?? false;
  }

  /** The tally after `voter` votes to add (or drop) `recipient`. */
  withVote(voter: Uint8Array, recipient: Uint8Array, add: boolean): VoteTally {
    const voterKey = addressHex(voter);
    const recipientKey = addressHex(recipient);
    const members = new Set(this.members);
    const addVotes = new Map([...this.addVotes].map(([k, v]) => [k, new Set(v)] as const));
    const dropVotes = new Map([...this.dropVotes].map(([k, v]) => [k, new Set(v)] as const));
    const addFor = addVotes.get(recipientKey) ?? new Set<string>();
    const dropFor = dropVotes.get(recipientKey) ?? new Set<string>();
    addVotes.set(recipientKey, addFor);
    dropVotes.set(recipientKey, dropFor);
    if (add) {
      addFor.add(voterKey);
      dropFor.delete(voterKey);
    } else {
      dropFor.add(voterKey);
      addFor.delete(voterKey);
    }
    // More than half of the validators counted before this vote.
    const threshold = Math.floor(this.members.size / 2) + 1;
    if (addFor.size >= threshold) {
      members.add(recipientKey);
      addVotes.delete(recipientKey);
      dropVotes.delete(recipientKey);
    }
    if (dropFor.size >= threshold) {
      members.delete(recipientKey);
      addVotes.delete(recipientKey);
      dropVotes.delete(recipientKey);
      // A removed validator's own votes no longer count.
      for (const voters of addVotes.values()) voters.delete(recipientKey);
      for (const voters of dropVotes.values()) voters.delete(recipientKey);
    }
    return new VoteTally(members, addVotes, dropVotes);
  }
}

/** The tally after `header`, given the tally after its parent (§6.3). */
export function tallyAfterHeader(previous: VoteTally, header: HeaderSummary, epochLength: bigint): VoteTally {
  const extra = decodeExtraData(header.extraData);
  // Epoch blocks restart the tally from their own list; their vote is ignored.
  if (header.number % epochLength === 0n) return VoteTally.of(extra.validators);
  if (!extra.vote) return previous;
  return previous.withVote(header.coinbase, extra.vote.recipient, extra.vote.add);
}

/** `getValidators()` (§7). */
export const GET_VALIDATORS_CALL = Uint8Array.of(0xb7, 0xab, 0x4d, 0xb5);

/** ABI-decodes an `address[]` return value. Throws when the data is not one. */
export function decodeAddressArray(data: Uint8Array): Uint8Array[] {
  const word = (offset: number): bigint => {
    if (offset + 32 > data.length) throw new Error('validator contract returned truncated data');
    return BigInt('0x' + Buffer.from(data.subarray(offset, offset + 32)).toString('hex'));
  };
  const start = word(0);
  if (start > BigInt(data.length)) throw new Error('validator contract returned a bad array offset');
  const length = word(Number(start));
  if (length > BigInt(data.length)) throw new Error('validator contract returned a bad array length');
  const addresses: Uint8Array[] = [];
  for (let i = 0; i < Number(length); i++) {
    const offset = Number(start) + 32 + i * 32;
    word(offset);
    addresses.push(data.slice(offset + 12, offset + 32));
  }
  return addresses;
}

const TALLY_CACHE_SIZE = 256;
const CONTRACT_CACHE_SIZE = 100;
const HEADER_BATCH = 1024n;

/** Computes validators(h) per the schedule, reading the chain through a view. */
export class ValidatorTracker {
  private readonly tallies = new Map<bigint, VoteTally>();
  private readonly contractResults = new Map<string, Uint8Array[]>();

  constructor(
    readonly schedule: QbftSchedule,
    private readonly view: ValidatorChainView,
  ) {}

  /** What the state machine needs about the height after `parent`. */
  async heightContext(parent: ParentInfo): Promise<HeightContext> {
    const height = parent.number + 1n;
    // The block does not exist yet: settings at the earliest timestamp it can carry.
    const settings = this.schedule.settingsAfter(parent);
    const london = this.schedule.londonBlock === undefined ? {} : { londonBlock: this.schedule.londonBlock };
    if (settings.validatorSelectionMode === 'contract') {
      const validators = await this.contractValidators(parent.number, settings.validatorContractAddress!);
      return { height, parent, settings, validators, ...london };
    }
    const tally = await this.tallyAfter(parent.number);
    return { height, parent, settings, validators: tally.validators, tally, ...london };
  }

  /** validators(h) of the block that would follow `parent` (which is the head, say). */
  async validatorsAfter(parent: { number: bigint; timestamp: bigint }): Promise<Uint8Array[]> {
    const settings = this.schedule.settingsAfter(parent);
    if (settings.validatorSelectionMode === 'contract') return this.contractValidators(parent.number, settings.validatorContractAddress!);
    return (await this.tallyAfter(parent.number)).validators;
  }

  /**
   * validators(h): the set that must sign block h, sorted ascending. `timestamp` is block h's; it
   * may be left out on a chain without timestamp transitions.
   */
  async validatorsFor(height: bigint, timestamp?: bigint): Promise<Uint8Array[]> {
    if (height <= 0n) throw new RangeError('the genesis block has no signers');
    const settings = this.schedule.settingsFor(height, timestamp);
    if (settings.validatorSelectionMode === 'contract') {
      return this.contractValidators(height - 1n, settings.validatorContractAddress!);
    }
    return (await this.tallyAfter(height - 1n)).validators;
  }

  /** `getValidators()` of `contract` on the state after `blockNumber`, sorted (cached by block). */
  async contractValidators(blockNumber: bigint, contract: Uint8Array): Promise<Uint8Array[]> {
    const key = `${blockNumber}:${addressHex(contract)}`;
    const cached = this.contractResults.get(key);
    if (cached) return cached;
    const result = await this.view.callContract(blockNumber, contract, GET_VALIDATORS_CALL);
    const validators = decodeAddressArray(result).sort(compareAddresses);
    if (validators.length === 0) throw new Error(`validator contract ${addressHex(contract)} returned no validators at block ${blockNumber}`);
    remember(this.contractResults, key, validators, CONTRACT_CACHE_SIZE);
    return validators;
  }

  /** The block-header-mode tally after block `number` (the set for block number+1 and its votes). */
  async tallyAfter(number: bigint): Promise<VoteTally> {
    const cached = this.tallies.get(number);
    if (cached) return cached;
    const epoch = this.schedule.fixed.epochLength;
    // Walk back to the nearest point whose tally is known without earlier blocks.
    let anchor = number;
    let tally: VoteTally | undefined;
    for (;;) {
      const known = this.tallies.get(anchor);
      if (known) {
        tally = known;
        break;
      }
      const override = this.schedule.validatorOverrideAt(anchor + 1n);
      if (override) {
        tally = VoteTally.of(override);
        break;
      }
      if (anchor % epoch === 0n) break;
      anchor -= 1n;
    }
    if (!tally) {
      const [epochHeader] = await this.view.headers(anchor, anchor);
      if (!epochHeader) throw new Error(`block ${anchor} is not in the chain`);
      tally = tallyAfterHeader(VoteTally.of([]), epochHeader, epoch);
    }
    remember(this.tallies, anchor, tally, TALLY_CACHE_SIZE);
    for (let from = anchor + 1n; from <= number; from += HEADER_BATCH) {
      const to = from + HEADER_BATCH - 1n < number ? from + HEADER_BATCH - 1n : number;
      const headers = await this.view.headers(from, to);
      if (headers.length !== Number(to - from + 1n)) throw new Error(`blocks ${from}..${to} are not all in the chain`);
      for (const header of headers) {
        // A transition override replaces the tally after the block before it.
        const override = this.schedule.validatorOverrideAt(header.number + 1n);
        tally = override ? VoteTally.of(override) : tallyAfterHeader(tally, header, epoch);
        if (number - header.number < BigInt(TALLY_CACHE_SIZE)) remember(this.tallies, header.number, tally, TALLY_CACHE_SIZE);
      }
    }
    return tally;
  }

  /** Forgets cached results for blocks above `number` (after the chain was rewound). */
  forgetAbove(number: bigint): void {
    for (const key of [...this.tallies.keys()]) if (key > number) this.tallies.delete(key);
    for (const key of [...this.contractResults.keys()]) if (BigInt(key.split(':')[0]!) > number) this.contractResults.delete(key);
  }
}

function remember<K, V>(cache: Map<K, V>, key: K, value: V, limit: number): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > limit) cache.delete(cache.keys().next().value as K);
}
