/**
 * eth_config (EIP-7910): the fork configuration in force at the head, the next scheduled one and the
 * last scheduled one. Besu prints every object with its keys sorted, so this does too.
 */
import type { HardforkTransitionConfig } from '@ethereumjs/common';
import type { Json } from '../shared/rpc/types.js';
import type { BlobScheduleEntry } from '../shared/ethereum/genesis.js';
import { forkHashHex, forkIdAtActivation, forkSchedule, hardforkActivation } from '../shared/ethereum/fork-id.js';

/** Where each precompile arrives (EIP-7910 names). */
const PRECOMPILES: readonly { name: string; address: number; fork: string }[] = [
  { name: 'ECREC', address: 0x01, fork: 'chainstart' },
  { name: 'SHA256', address: 0x02, fork: 'chainstart' },
  { name: 'RIPEMD160', address: 0x03, fork: 'chainstart' },
  { name: 'ID', address: 0x04, fork: 'chainstart' },
  { name: 'MODEXP', address: 0x05, fork: 'byzantium' },
  { name: 'BN254_ADD', address: 0x06, fork: 'byzantium' },
  { name: 'BN254_MUL', address: 0x07, fork: 'byzantium' },
  { name: 'BN254_PAIRING', address: 0x08, fork: 'byzantium' },
  { name: 'BLAKE2F', address: 0x09, fork: 'istanbul' },
  { name: 'KZG_POINT_EVALUATION', address: 0x0a, fork: 'cancun' },
  { name: 'BLS12_G1ADD', address: 0x0b, fork: 'prague' },
  { name: 'BLS12_G1MSM', address: 0x0c, fork: 'prague' },
  { name: 'BLS12_G2ADD', address: 0x0d, fork: 'prague' },
  { name: 'BLS12_G2MSM', address: 0x0e, fork: 'prague' },
  { name: 'BLS12_PAIRING_CHECK', address: 0x0f, fork: 'prague' },
  { name: 'BLS12_MAP_FP_TO_G1', address: 0x10, fork: 'prague' },
  { name: 'BLS12_MAP_FP2_TO_G2', address: 0x11, fork: 'prague' },
  { name: 'P256VERIFY', address: 0x100, fork: 'osaka' },
];

const SYSTEM_CONTRACTS: readonly { name: string; address: string; fork: string }[] = [
  { name: 'BEACON_ROOTS_ADDRESS', address: '0x000f3df6d732807ef1319fb7b8bb8522d0beac02', fork: 'cancun' },
  { name: 'CONSOLIDATION_REQUEST_PREDEPLOY_ADDRESS', address: '0x0000bbddc7ce488642fb579f8b00f3a590007251', fork: 'prague' },
  { name: 'HISTORY_STORAGE_ADDRESS', address: '0x0000f90827f1c53a10cb7a02335b175320002935', fork: 'prague' },
  { name: 'WITHDRAWAL_REQUEST_PREDEPLOY_ADDRESS', address: '0x00000961ef480eb55e80d19ad83579a64c007002', fork: 'prague' },
];

export interface ForkConfigContext {
  /** The hardfork list the chain's Common runs (src/chain/common.ts hardforkSchedule). */
  schedule: readonly HardforkTransitionConfig[];
  chainId: bigint;
  genesisHash: Uint8Array;
  genesisTimestamp: bigint;
  /** The hardfork of the head block. */
  headFork: string;
  /** `depositContractAddress` of the genesis, a Prague system contract when configured. */
  depositContractAddress?: string;
  /** The blob parameters in force under a hardfork (genesis blobSchedule or Besu's defaults); undefined before Cancun. */
  blobSchedule(hardfork: string): BlobScheduleEntry | undefined;
  /** Timestamp of a canonical block, for forks scheduled by block number (undefined past the head). */
  blockTimestamp(number: bigint): Promise<bigint | undefined>;
}

interface Activation {
  /** The forks that switch on together; the last one is the rule set in force. */
  forks: string[];
  block?: bigint;
  timestamp?: bigint;
}

/** The eth_config answer: `{current, next, last}` (next/last null when nothing more is scheduled). */
export async function ethConfig(ctx: ForkConfigContext): Promise<Json> {
  const activations = groupActivations(ctx.schedule);
  const forkIds = forkSchedule(ctx.genesisHash, ctx.genesisTimestamp, activations);
  const current = activations.findIndex((a) => a.forks.includes(ctx.headFork));
  if (current < 0) throw new Error(`the head's hardfork ${ctx.headFork} is not in the schedule`);
  const describe = async (index: number): Promise<Json> => {
    const activation = activations[index]!;
    const forksSoFar = activations.slice(0, index + 1).flatMap((a) => a.forks);
    const config: { [key: string]: Json } = {};
    config.activationTime = await activationTime(activation, ctx);
    const blobs = ctx.blobSchedule(activation.forks[activation.forks.length - 1]!);
    if (blobs) config.blobSchedule = { baseFeeUpdateFraction: blobs.baseFeeUpdateFraction, max: blobs.max, target: blobs.target };
    config.chainId = `0x${ctx.chainId.toString(16)}`;
    config.forkId = forkHashHex(forkIdAtActivation(forkIds, activation));
    config.precompiles = sortedObject(
      PRECOMPILES.filter((p) => forksSoFar.includes(p.fork)).map((p) => [p.name, `0x${p.address.toString(16).padStart(40, '0')}`]),
    );
    const system = SYSTEM_CONTRACTS.filter((c) => forksSoFar.includes(c.fork)).map((c): [string, string] => [c.name, c.address]);
    if (forksSoFar.includes('prague') && ctx.depositContractAddress !== undefined) {
      system.push(['DEPOSIT_CONTRACT_ADDRESS', ctx.depositContractAddress.toLowerCase()]);
    }
    if (system.length > 0) config.systemContracts = sortedObject(system);
    return config;
  };
  const lastIndex = activations.length - 1;
  return {
    current: await describe(current),
    next: current < lastIndex ? await describe(current + 1) : null,
    last: current < lastIndex ? await describe(lastIndex) : null,
  };
}

/** Consecutive schedule entries with the same activation switch on together. */
function groupActivations(schedule: readonly HardforkTransitionConfig[]): Activation[] {
  const groups: Activation[] = [];
  for (const entry of schedule) {
    const { block, timestamp } = hardforkActivation(entry);
    // A fork with neither (Paris by total difficulty) switches with the previous group.
    const previous = groups[groups.length - 1];
    if (previous && ((block === undefined && timestamp === undefined) || (block !== undefined && previous.block === block) || (timestamp !== undefined && previous.timestamp === timestamp))) {
      previous.forks.push(entry.name);
    } else {
      groups.push({ forks: [entry.name], ...(block === undefined ? {} : { block }), ...(timestamp === undefined ? {} : { timestamp }) });
    }
  }
  return groups;
}

async function activationTime(activation: Activation, ctx: ForkConfigContext): Promise<Json> {
  if (activation.timestamp !== undefined) return Number(activation.timestamp);
  if (activation.block === undefined || activation.block === 0n) return 0;
  const timestamp = await ctx.blockTimestamp(activation.block);
  return timestamp === undefined ? null : Number(timestamp);
}

function sortedObject(entries: readonly (readonly [string, Json])[]): { [key: string]: Json } {
  const object: { [key: string]: Json } = {};
  for (const [key, value] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) object[key] = value;
  return object;
}
