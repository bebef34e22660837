/**
 * The EIP-2124 fork id (with EIP-6122 time forks), computed once for the eth/68 Status (p2p) and for
 * eth_config (chain).
 *
 * Fork hash = CRC32 over the genesis hash followed by every passed fork activation as a big-endian
 * uint64: block forks first (activations > 0), then time forks (activations > the genesis timestamp),
 * each list ascending and without duplicates. QBFT transitions are not forks here.
 *
 * Why not `@ethereumjs/common`'s `forkHash`: it answers per hardfork name, so a fork sharing its
 * activation with the next one (Paris with the first time fork) gets the hash without that activation;
 * and EIP-2124 validation of a peer needs every checksum of the schedule, which it does not expose.
 */
import { crc32 } from 'node:zlib';
import type { HardforkTransitionConfig } from '@ethereumjs/common';

/** A fork as scheduled: at a block number or at a timestamp (neither: not scheduled, ignored). */
export interface ForkActivationPoint {
  readonly block?: bigint;
  readonly timestamp?: bigint;
}

/** Where an ethereumjs hardfork entry activates (Paris by total difficulty has neither). */
export function hardforkActivation(hardfork: HardforkTransitionConfig): ForkActivationPoint {
  if (hardfork.block !== null && hardfork.block !== undefined) return { block: BigInt(hardfork.block) };
  return hardfork.timestamp === undefined ? {} : { timestamp: BigInt(hardfork.timestamp) };
}

export interface ForkSchedule {
  readonly genesisHash: Uint8Array;
  /** Block forks after genesis, ascending. */
  readonly blocks: readonly bigint[];
  /** Time forks after the genesis timestamp, ascending. */
  readonly times: readonly bigint[];
  /** `checksums[i]` covers the genesis hash and the first i forks (blocks, then times). */
  readonly checksums: readonly number[];
}

export interface ForkId {
  hash: Uint8Array;
  /** The next fork's activation, 0 when none is scheduled. */
  next: bigint;
}

/** Where a chain is: its head block's number and timestamp. */
export interface ChainPosition {
  readonly number: bigint;
  readonly timestamp: bigint;
}

/** Geth's threshold for reading a peer's `next` as a timestamp too: the first mainnet block's (EIP-6122). */
const TIMESTAMP_THRESHOLD = 1_438_269_973n;

export function forkSchedule(genesisHash: Uint8Array, genesisTimestamp: bigint, forks: Iterable<ForkActivationPoint>): ForkSchedule {
  const blocks = new Set<bigint>();
  const times = new Set<bigint>();
  for (const fork of forks) {
    if (fork.block !== undefined) {
      if (fork.block > 0n) blocks.add(fork.block);
    } else if (fork.timestamp !== undefined && fork.timestamp > genesisTimestamp) {
      times.add(fork.timestamp);
    }
  }
  const ascending = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  const sortedBlocks = [...blocks].sort(ascending);
  const sortedTimes = [...times].sort(ascending);
  const checksums = [crc32(genesisHash) >>> 0];
  for (const at of [...sortedBlocks, ...sortedTimes]) checksums.push(crc32(uint64(at), checksums[checksums.length - 1]!) >>> 0);
  return { genesisHash, blocks: sortedBlocks, times: sortedTimes, checksums };
}

/** How many forks of the schedule a chain at `head` has passed. */
function passedForks(schedule: ForkSchedule, head: ChainPosition): number {
  let passed = 0;
  while (passed < schedule.blocks.length && head.number >= schedule.blocks[passed]!) passed++;
  if (passed < schedule.blocks.length) return passed;
  let passedTimes = 0;
  while (passedTimes < schedule.times.length && head.timestamp >= schedule.times[passedTimes]!) passedTimes++;
  return passed + passedTimes;
}

/** The activation of fork `index` (blocks, then times), undefined past the last. */
function activationAt(schedule: ForkSchedule, index: number): bigint | undefined {
  return index < schedule.blocks.length ? schedule.blocks[index] : schedule.times[index - schedule.blocks.length];
}

export function forkIdAt(schedule: ForkSchedule, head: ChainPosition): ForkId {
  const passed = passedForks(schedule, head);
  return { hash: uint32(schedule.checksums[passed]!), next: activationAt(schedule, passed) ?? 0n };
}

/**
 * The fork id of a chain whose head has just reached `activation`: at a block fork no time fork has
 * passed yet (time forks come after the genesis timestamp); at a time fork every block fork has.
 */
export function forkIdAtActivation(schedule: ForkSchedule, activation: ForkActivationPoint): ForkId {
  if (activation.block !== undefined) return forkIdAt(schedule, { number: activation.block, timestamp: 0n });
  const lastBlockFork = schedule.blocks[schedule.blocks.length - 1] ?? 0n;
  return forkIdAt(schedule, { number: lastBlockFork, timestamp: activation.timestamp ?? 0n });
}

/** The fork hash as JSON-RPC prints it: `0x` + 8 hex digits. */
export function forkHashHex(forkId: ForkId): `0x${string}` {
  return `0x${Buffer.from(forkId.hash).toString('hex')}`;
}

/**
 * EIP-2124 validation of a peer's fork id against our schedule and head. Answers a reason when the
 * peer is incompatible, undefined when it may stay.
 */
export function checkRemoteForkId(schedule: ForkSchedule, head: ChainPosition, remote: ForkId): string | undefined {
  const sums = schedule.checksums;
  const remoteHash = Buffer.from(remote.hash).readUInt32BE(0);
  const passed = passedForks(schedule, head);

  if (sums[passed] === remoteHash) {
    // Same fork state; the peer must not announce a fork we have already passed.
    if (remote.next === 0n) return undefined;
    // As geth: a block number always compares; a value past the first mainnet block's timestamp
    // may also be a time fork (EIP-6122).
    const reached = head.number >= remote.next || (remote.next > TIMESTAMP_THRESHOLD && head.timestamp >= remote.next);
    return reached ? 'remote announces a fork this node has passed' : undefined;
  }
  // The peer is behind: its checksum is one of our earlier ones and it must know our next fork.
  for (let i = 0; i < passed; i++) {
    if (sums[i] === remoteHash) return remote.next === activationAt(schedule, i) ? undefined : 'remote is stale (misses a fork this node has)';
  }
  // The peer is ahead: its checksum is one of our future ones.
  for (let i = passed + 1; i < sums.length; i++) {
    if (sums[i] === remoteHash) return undefined;
  }
  return 'fork id mismatch';
}

function uint64(value: bigint): Uint8Array {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(value);
  return out;
}

function uint32(value: number): Uint8Array {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return new Uint8Array(out);
}
