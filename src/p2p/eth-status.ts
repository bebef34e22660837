/**
 * eth/68 Status (qbft-and-p2p.md §10):
 * `[68, networkId, totalDifficulty, bestHash, genesisHash, [forkHash, forkNext]]`, the fork id being
 * EIP-2124's (shared/ethereum/fork-id.ts).
 */
import { RLP } from '@ethereumjs/rlp';
import { equalsBytes } from '@ethereumjs/util';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { ETH_PROTOCOL_VERSION } from '../shared/ethereum/eth-protocol.js';
import { checkRemoteForkId, forkSchedule, type ChainPosition, type ForkId, type ForkSchedule } from '../shared/ethereum/fork-id.js';

export { ETH_PROTOCOL_VERSION };

/** eth/68 message codes 0x00–0x10. */
export const ETH_PROTOCOL_LENGTH = 17;
export const EthCode = { STATUS: 0x00 } as const;

export interface EthStatus {
  version: number;
  networkId: bigint;
  totalDifficulty: bigint;
  bestHash: Uint8Array;
  genesisHash: Uint8Array;
  forkId: ForkId;
}

/** The fork schedule a genesis announces in Status. */
export function genesisForkSchedule(genesis: Genesis, genesisHash: Uint8Array): ForkSchedule {
  return forkSchedule(genesisHash, genesis.header.timestamp, genesis.config.forks);
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
  local: { networkId: bigint; schedule: ForkSchedule; head: ChainPosition },
  remote: EthStatus,
): string | undefined {
  if (remote.networkId !== local.networkId) return `network id ${remote.networkId} differs from ${local.networkId}`;
  if (!equalsBytes(remote.genesisHash, local.schedule.genesisHash)) return 'genesis hash differs';
  return checkRemoteForkId(local.schedule, local.head, remote.forkId);
}

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}
