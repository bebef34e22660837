/**
 * eth/68 Status and the EIP-2124 fork id (qbft-and-p2p.md §10).
 *
 * Status = `[68, networkId, totalDifficulty, bestHash, genesisHash, [forkHash, forkNext]]`.
 * Fork id: CRC32 over the genesis hash followed by every passed fork activation as a big-endian
 * uint64; block forks first (activations > 0), then time forks (activations > genesis timestamp),
 * each list ascending and without duplicates. QBFT transitions are not forks here.
 */
import { crc32 } from 'node:zlib';
import { RLP } from '@ethereumjs/rlp';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { ETH_PROTOCOL_VERSION } from '../shared/ethereum/eth-protocol.js';

export { ETH_PROTOCOL_VERSION };

/** eth/68 message codes 0x00–0x10. */
export const ETH_PROTOCOL_LENGTH = 17;
export const EthCode = { STATUS: 0x00 } as const;
const TIMESTAMP_THRESHOLD = 1_438_269_973n;

export interface ForkSchedule {
  genesisHash: Uint8Array;
  blocks: bigint[];
  times: bigint[];
}

export interface ForkId {
  hash: Uint8Array;
  next: bigint;
}

export interface EthStatus {
  version: number;
  networkId: bigint;
  totalDifficulty: bigint;
  bestHash: Uint8Array;
  genesisHash: Uint8Array;
  forkId: ForkId;
}

export function forkSchedule(genesis: Genesis, genesisHash: Uint8Array): ForkSchedule {
  const blocks = new Set<bigint>();
  const times = new Set<bigint>();
  for (const fork of genesis.config.forks) {
    if (fork.block !== undefined) {
      if (fork.block > 0n) blocks.add(fork.block);
    } else if (fork.timestamp > genesis.header.timestamp) {
      times.add(fork.timestamp);
    }
  }
  const ascending = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);
  return { genesisHash, blocks: [...blocks].sort(ascending), times: [...times].sort(ascending) };
}

/** Every fork with its kind, in order: block forks, then time forks. */
function activations(schedule: ForkSchedule): { at: bigint; kind: 'block' | 'time' }[] {
  return [
    ...schedule.blocks.map((at) => ({ at, kind: 'block' as const })),
    ...schedule.times.map((at) => ({ at, kind: 'time' as const })),
  ];
}

/** The running checksums: `sums[i]` covers the first i forks (sums[0] = genesis only). */
function checksums(schedule: ForkSchedule): number[] {
  const sums = [crc32(schedule.genesisHash) >>> 0];
  for (const { at } of activations(schedule)) sums.push(crc32(uint64(at), sums[sums.length - 1]!) >>> 0);
  return sums;
}

export function forkIdAt(schedule: ForkSchedule, head: { number: bigint; timestamp: bigint }): ForkId {
  const forks = activations(schedule);
  const sums = checksums(schedule);
  let passed = 0;
  while (passed < forks.length && isPassed(forks[passed]!, head)) passed++;
  return { hash: uint32(sums[passed]!), next: forks[passed]?.at ?? 0n };
}

function isPassed(fork: { at: bigint; kind: 'block' | 'time' }, head: { number: bigint; timestamp: bigint }): boolean {
  return fork.kind === 'block' ? head.number >= fork.at : head.timestamp >= fork.at;
}

/**
 * EIP-2124 validation of a peer's fork id against our schedule and head. Answers a reason when the
 * peer is incompatible, undefined when it may stay.
 */
export function checkRemoteForkId(schedule: ForkSchedule, head: { number: bigint; timestamp: bigint }, remote: ForkId): string | undefined {
  const forks = activations(schedule);
  const sums = checksums(schedule);
  const remoteHash = Buffer.from(remote.hash).readUInt32BE(0);
  let passed = 0;
  while (passed < forks.length && isPassed(forks[passed]!, head)) passed++;

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
    if (sums[i] === remoteHash) return remote.next === forks[i]!.at ? undefined : 'remote is stale (misses a fork this node has)';
  }
  // The peer is ahead: its checksum is one of our future ones.
  for (let i = passed + 1; i < sums.length; i++) {
    if (sums[i] === remoteHash) return undefined;
  }
  return 'fork id mismatch';
}

export function encodeStatus(status: EthStatus): Uint8Array {
  return RLP.encode([
    status.version,
    status.networkId,
    status.totalDifficulty,
    status.bestHash,
    status.genesisHash,
    [status.forkId.hash, status.forkId.next],
  ]);
}

export class StatusError extends Error {}

export function decodeStatus(payload: Uint8Array): EthStatus {
  const decoded = RLP.decode(payload);
  if (!Array.isArray(decoded) || decoded.length < 6) throw new StatusError('status is not a 6-item list');
  const [version, networkId, td, bestHash, genesisHash, forkId] = decoded;
  if (!(version instanceof Uint8Array) || !(networkId instanceof Uint8Array) || !(td instanceof Uint8Array)) {
    throw new StatusError('bad status scalars');
  }
  if (!(bestHash instanceof Uint8Array) || bestHash.length !== 32 || !(genesisHash instanceof Uint8Array) || genesisHash.length !== 32) {
    throw new StatusError('bad status hashes');
  }
  if (!Array.isArray(forkId) || !(forkId[0] instanceof Uint8Array) || forkId[0].length !== 4 || !(forkId[1] instanceof Uint8Array)) {
    throw new StatusError('bad fork id');
  }
  return {
    version: Number(toBigInt(version)),
    networkId: toBigInt(networkId),
    totalDifficulty: toBigInt(td),
    bestHash,
    genesisHash,
    forkId: { hash: forkId[0], next: toBigInt(forkId[1]) },
  };
}

/** Why a peer's Status is unacceptable (Besu disconnects with 0x10), or undefined. */
export function checkRemoteStatus(
  local: { networkId: bigint; schedule: ForkSchedule; head: { number: bigint; timestamp: bigint } },
  remote: EthStatus,
): string | undefined {
  if (remote.networkId !== local.networkId) return `network id ${remote.networkId} differs from ${local.networkId}`;
  if (!bytesEqual(remote.genesisHash, local.schedule.genesisHash)) return 'genesis hash differs';
  return checkRemoteForkId(local.schedule, local.head, remote.forkId);
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

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
