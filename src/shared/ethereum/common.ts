/**
 * The ethereumjs `Common` for a Besu genesis, the genesis world state and the genesis block.
 *
 * `createCommonFromGethGenesis` alone gets a Besu chain wrong in three ways, fixed here:
 * - it only knows camelCase keys (Besu lower-cases them all);
 * - it only activates the forks that are listed, while Besu's fork specs build on every earlier fork
 *   (a genesis with only `berlinBlock: 0` runs Homestead..Istanbul rules too);
 * - with any timestamp fork present it inserts Paris (PoS: PREVRANDAO, no rewards) at block 0, even
 *   for a chain whose Shanghai is scheduled later. Here Paris activates together with the first
 *   timestamp fork, which is where Besu switches to its post-merge rules.
 * And a QBFT chain never pays ethereumjs' proof-of-work block rewards (Besu's QBFT `blockreward`
 * defaults to 0 and is credited by the consensus layer), so its consensus type is proof-of-stake.
 */
import { Common, Mainnet, parseGethGenesis } from '@ethereumjs/common';
import type { ChainConfig, HardforkTransitionConfig, ParamsDict } from '@ethereumjs/common';
import type { GethGenesis } from '@ethereumjs/common';
import { createBlock, paramsBlock } from '@ethereumjs/block';
import type { Block, HeaderData } from '@ethereumjs/block';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Account, Address } from '@ethereumjs/util';

import { BLOB_SCHEDULE_FORKS, FORK_ORDER } from './genesis.js';
import { forkHashHex, forkIdAtActivation, forkSchedule, hardforkActivation } from './fork-id.js';
import { KZG_UNAVAILABLE } from './kzg-unavailable.js';
import { nativeEcrecover } from './native-ecrecover.js';
import { keccak256 } from './keccak.js';
import { mergeTotalDifficulty } from './merge-transition.js';
import type { BlobScheduleEntry, ForkName, Genesis } from './genesis.js';

export { nativeEcrecover };

// ---------------------------------------------------------------------------------------------
// Fork schedule
// ---------------------------------------------------------------------------------------------

/**
 * Forks that a later fork builds on in Besu's protocol specs. Missing ones are activated together
 * with the next configured one. The difficulty-bomb-only forks (arrow/gray glacier), the DAO fork,
 * the merge markers and the blob-parameter-only forks are never implied.
 */
const IMPLIED_FORKS: ReadonlySet<ForkName> = new Set<ForkName>([
  'homestead',
  'tangerineWhistle',
  'spuriousDragon',
  'byzantium',
  'constantinople',
  'petersburg',
  'istanbul',
  'muirGlacier',
  'berlin',
  'london',
  'shanghai',
  'cancun',
  'prague',
  'osaka',
]);

type Activation = { block: bigint } | { timestamp: bigint };

function activationOf(genesis: Genesis, fork: ForkName): Activation | undefined {
  const configured = genesis.config.forks.find((f) => f.fork === fork);
  if (configured === undefined) return undefined;
  return configured.block !== undefined ? { block: configured.block } : { timestamp: configured.timestamp };
}

/**
 * When Paris (PoS semantics: PREVRANDAO, no block reward) applies, in ethereumjs terms. A chain that
 * merges by total difficulty has no fixed activation: see merge-transition.ts.
 */
function parisActivation(genesis: Genesis, configured: Map<ForkName, Activation>): Activation | undefined {
  if (mergeTotalDifficulty(genesis) !== undefined) return undefined;
  const netsplit = configured.get('mergeNetsplitBlock');
  if (netsplit !== undefined) return netsplit;
  if (genesis.config.terminalTotalDifficulty === 0n) return { block: 0n };
  for (const fork of FORK_ORDER) {
    const activation = configured.get(fork);
    if (activation !== undefined && 'timestamp' in activation) return activation;
  }
  return undefined;
}

/**
 * The ethereumjs hardfork list for a genesis: chainstart, then every configured or implied fork in
 * activation order. Block forks come before timestamp forks, as ethereumjs requires.
 */
export function hardforkSchedule(genesis: Genesis): HardforkTransitionConfig[] {
  const configured = new Map<ForkName, Activation>();
  for (const fork of FORK_ORDER) {
    const activation = activationOf(genesis, fork);
    if (activation !== undefined) configured.set(fork, activation);
  }
  const paris = parisActivation(genesis, configured);
  if (paris !== undefined && !configured.has('paris')) configured.set('paris', paris);

  // Walk backwards so each missing implied fork inherits the next configured activation.
  const resolved = new Map<ForkName, Activation>();
  let next: Activation | undefined;
  for (let i = FORK_ORDER.length - 1; i >= 0; i--) {
    const fork = FORK_ORDER[i];
    const own = configured.get(fork);
    if (own !== undefined) {
      resolved.set(fork, own);
      if (IMPLIED_FORKS.has(fork) || fork === 'paris') next = own;
    } else if (IMPLIED_FORKS.has(fork) && next !== undefined) {
      resolved.set(fork, next);
    }
  }

  const schedule: HardforkTransitionConfig[] = [{ name: 'chainstart', block: 0 }];
  const mergesByDifficulty = mergeTotalDifficulty(genesis) !== undefined && !configured.has('paris');
  for (const fork of FORK_ORDER) {
    // Listed in its place but unscheduled (no block, no timestamp) until the chain reaches the TTD.
    if (fork === 'paris' && mergesByDifficulty) schedule.push({ name: 'paris', block: null });
    const activation = resolved.get(fork);
    if (activation === undefined) continue;
    schedule.push(
      'block' in activation
        ? { name: fork, block: Number(activation.block) }
        : { name: fork, block: null, timestamp: Number(activation.timestamp) },
    );
  }
  // ethereumjs walks the list in order: a block fork listed after a timestamp fork would be skipped.
  const scheduled = schedule.filter((entry) => entry.block !== null || entry.timestamp !== undefined);
  let seenTimestamp = false;
  for (const entry of scheduled) {
    if (entry.block === null) seenTimestamp = true;
    else if (seenTimestamp) {
      throw new Error(`genesis fork schedule: block-numbered fork ${entry.name} follows a timestamp fork`);
    }
  }
  for (let i = 1; i < scheduled.length; i++) {
    const previous = scheduled[i - 1];
    const current = scheduled[i];
    const previousAt = previous.block ?? Number(previous.timestamp);
    const currentAt = current.block ?? Number(current.timestamp);
    if ((previous.block === null) === (current.block === null) && currentAt < previousAt) {
      throw new Error(`genesis fork schedule: ${current.name} (${currentAt}) activates before ${previous.name} (${previousAt})`);
    }
  }
  return schedule;
}

// ---------------------------------------------------------------------------------------------
// Common
// ---------------------------------------------------------------------------------------------

function quantityHex(value: bigint): `0x${string}` {
  return `0x${value.toString(16)}`;
}

function bytesHex(bytes: Uint8Array): `0x${string}` {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/** The genesis in the camelCase geth shape ethereumjs parses (accounts and the blob schedule are not needed by it). */
export function toGethGenesis(genesis: Genesis): GethGenesis {
  const { header } = genesis;
  const config: GethGenesis['config'] = { chainId: Number(genesis.chainId) };
  const geth: GethGenesis = {
    config,
    nonce: bytesHex(header.nonce),
    timestamp: quantityHex(header.timestamp),
    extraData: bytesHex(header.extraData),
    gasLimit: quantityHex(header.gasLimit),
    difficulty: quantityHex(header.difficulty),
    mixHash: bytesHex(header.mixHash),
    coinbase: bytesHex(header.coinbase),
    alloc: {},
  };
  if (header.baseFeePerGas !== undefined) geth.baseFeePerGas = quantityHex(header.baseFeePerGas);
  if (header.excessBlobGas !== undefined) geth.excessBlobGas = quantityHex(header.excessBlobGas);
  return geth;
}

// ---------------------------------------------------------------------------------------------
// Blob parameters (EIP-7840 blobSchedule, EIP-7892 blob-parameter-only forks)
// ---------------------------------------------------------------------------------------------

/** Besu's blob parameters of a fork whose genesis `blobSchedule` has no entry for it. */
const DEFAULT_BLOB_SCHEDULE: Partial<Record<ForkName, BlobScheduleEntry>> = {
  cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 },
  prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
  osaka: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 },
};

/** Blob gas per blob (EIP-4844); blob counts in a schedule become gas in ethereumjs' parameters. */
const GAS_PER_BLOB = 131072;

/**
 * The blob parameters in force from each scheduled blob fork on: the genesis entry, else Besu's
 * default for cancun/prague/osaka, else (a blob-parameter-only fork without an entry) the previous
 * fork's parameters unchanged.
 */
export function blobScheduleOf(genesis: Genesis, scheduled: ReadonlySet<string>): Map<ForkName, BlobScheduleEntry> {
  const result = new Map<ForkName, BlobScheduleEntry>();
  let previous: BlobScheduleEntry | undefined;
  for (const fork of BLOB_SCHEDULE_FORKS) {
    const entry = genesis.config.blobSchedule?.[fork] ?? DEFAULT_BLOB_SCHEDULE[fork] ?? previous;
    if (entry === undefined) continue;
    if (scheduled.has(fork)) {
      result.set(fork, entry);
      previous = entry;
    }
  }
  return result;
}

/** The blob parameters a chain's Common runs under `hardfork`; undefined before Cancun. */
export function blobParametersAt(common: Common, hardfork: string): BlobScheduleEntry | undefined {
  const at = common.copy();
  at.setHardfork(hardfork);
  if (!at.isActivatedEIP(4844)) return undefined;
  // customHardforks sets these three on every scheduled blob fork.
  return {
    target: Number(at.param('target')),
    max: Number(at.param('max')),
    baseFeeUpdateFraction: Number(at.param('blobGasPriceUpdateFraction')),
  };
}

/**
 * Parameters of EIPs that ethereumjs 10.1 defines without them. EIP-7934: an encoded block is at
 * most 10 MiB less a 2 MiB margin for the consensus-layer wrapping.
 */
const EXTRA_EIP_PARAMS = { 7934: { maxRlpBlockSize: 10_485_760 - 2_097_152 } };

/** EIPs ethereumjs 10.1 leaves out of a fork that Besu runs in it. */
const EXTRA_FORK_EIPS: Partial<Record<ForkName, number[]>> = {
  // EIP-7934 (RLP block size limit) is part of Osaka (EIP-7607); ethereumjs defines it but does not list it.
  osaka: [7934],
};

/**
 * ethereumjs' hardfork definitions replaced for the blob forks (their blob parameters) and Osaka (its
 * missing EIP). ethereumjs reads `targetBlobGasPerBlock`/`maxBlobGasPerBlock` up to Osaka and
 * `target`/`max` from bpo1 on; each entry carries both, so a chain that skips bpo1 still reads them.
 * A fork's EIPs come from ethereumjs' own definition (read off a mainnet Common).
 */
function customHardforks(genesis: Genesis, schedule: HardforkTransitionConfig[]): NonNullable<ChainConfig['customHardforks']> {
  const scheduled = new Set(schedule.map((entry) => entry.name));
  // HARDFORK_CHANGES is protected; it is ethereumjs' definition of each fork, which the library does not export otherwise.
  const library = new Map((new Common({ chain: Mainnet }) as unknown as { HARDFORK_CHANGES: [string, { eips?: number[] }][] }).HARDFORK_CHANGES);
  const custom: NonNullable<ChainConfig['customHardforks']> = {};
  for (const [fork, blobs] of blobScheduleOf(genesis, scheduled)) {
    custom[fork] = {
      eips: [...(library.get(fork)?.eips ?? []), ...(EXTRA_FORK_EIPS[fork] ?? [])],
      params: {
        targetBlobGasPerBlock: GAS_PER_BLOB * blobs.target,
        maxBlobGasPerBlock: GAS_PER_BLOB * blobs.max,
        target: blobs.target,
        max: blobs.max,
        blobGasPriceUpdateFraction: blobs.baseFeeUpdateFraction,
      },
    };
  }
  return custom;
}

/**
 * ethereumjs copies the chain's Common into every block header it constructs and merges the block
 * parameter set into the copy: JSON round trips of every EIP's parameters and a rebuild of the
 * parameter cache, ~300 kB allocated per header, a third of what an empty QBFT block allocated in the
 * chain (`bench/block-building.ts --alloc-prof`). This Common holds the block parameters from
 * construction, so its copies (which share its parameter set) skip that merge. Other sets (the VM's,
 * the EVM's) still merge as ethereumjs does. Same idea as tx-common.ts' Common for transactions.
 */
class ChainCommon extends Common {
  override updateParams(params: ParamsDict): void {
    if (params === paramsBlock) return;
    super.updateParams(params);
  }
}

/** `sets` merged per EIP, later sets winning per parameter, as successive `updateParams` calls would. */
function mergeParams(...sets: ParamsDict[]): ParamsDict {
  const merged: ParamsDict = {};
  for (const set of sets) for (const [eip, params] of Object.entries(set)) merged[eip] = { ...merged[eip], ...params };
  return merged;
}

export interface ChainCommonOptions {
  /** When known, fork hashes (EIP-2124 fork ids) are filled in. */
  genesisHash?: Uint8Array;
  /** Chain name shown by ethereumjs; defaults to "basalt-<chainId>". */
  name?: string;
}

/**
 * The ethereumjs Common for a Besu genesis, set to the genesis block's hardfork, with native
 * sender recovery. Use `common.setHardforkBy({ blockNumber, timestamp })` (or `setHardfork: true`
 * in block options) for later blocks.
 */
export function createChainCommon(genesis: Genesis, opts: ChainCommonOptions = {}): Common {
  // This is what createCommonFromGethGenesis does, except that the hardfork list and the consensus
  // type are replaced before the Common is constructed (they cannot be changed afterwards).
  const parsed = parseGethGenesis(toGethGenesis(genesis), opts.name ?? `basalt-${genesis.chainId}`);
  const schedule = hardforkSchedule(genesis);
  const chain: ChainConfig = {
    // parseGethGenesis types its hex fields as plain strings; ethereumjs makes the same cast.
    ...(parsed as unknown as ChainConfig),
    name: opts.name ?? `basalt-${genesis.chainId}`,
    hardforks: schedule,
    customHardforks: customHardforks(genesis, schedule),
    consensus:
      genesis.consensus === 'qbft'
        ? { type: 'pos', algorithm: 'casper' }
        : (parsed.consensus as ChainConfig['consensus']),
  };
  // Blocks with blob transactions must decode; see kzg-unavailable.ts for why no KZG is needed.
  const common = new ChainCommon({ chain, params: mergeParams(paramsBlock, EXTRA_EIP_PARAMS), customCrypto: { ecrecover: nativeEcrecover, keccak256, kzg: KZG_UNAVAILABLE } });
  common.setHardforkBy({ blockNumber: 0n, timestamp: genesis.header.timestamp });
  if (opts.genesisHash !== undefined) setForkHashes(common, genesis, opts.genesisHash);
  return common;
}

/**
 * Fills in each hardfork's EIP-2124 fork hash from fork-id.ts rather than ethereumjs' own computation,
 * so that the Status the devp2p library sends carries the fork id our checks and eth_config use.
 */
function setForkHashes(common: Common, genesis: Genesis, genesisHash: Uint8Array): void {
  const schedule = forkSchedule(genesisHash, genesis.header.timestamp, genesis.config.forks);
  for (const hardfork of common.hardforks()) {
    const activation = hardforkActivation(hardfork);
    if (activation.block === undefined && activation.timestamp === undefined) continue;
    hardfork.forkHash = forkHashHex(forkIdAtActivation(schedule, activation));
  }
}

// ---------------------------------------------------------------------------------------------
// Genesis state
// ---------------------------------------------------------------------------------------------

/** The part of MerkleStateManager that writing the genesis allocation needs. */
export type GenesisStateWriter = Pick<
  MerkleStateManager,
  'checkpoint' | 'commit' | 'flush' | 'putAccount' | 'putCode' | 'putStorage' | 'getStateRoot'
>;

/**
 * Write the genesis allocation (balance, nonce, code, storage) into `stateManager` and commit it
 * (for a RocksDB-backed trie this persists the nodes). Returns the resulting state root.
 * Every listed account is created, even an empty one, as Besu does.
 */
export async function writeGenesisState(stateManager: GenesisStateWriter, genesis: Genesis): Promise<Uint8Array> {
  await stateManager.checkpoint();
  for (const entry of genesis.alloc) {
    const address = new Address(entry.address);
    await stateManager.putAccount(address, new Account(entry.nonce, entry.balance));
    if (entry.code.length > 0) await stateManager.putCode(address, entry.code);
    for (const [key, value] of entry.storage) await stateManager.putStorage(address, key, value);
  }
  await stateManager.commit();
  await stateManager.flush();
  return stateManager.getStateRoot();
}

/** The genesis state root, computed in an in-memory trie. */
export async function computeGenesisStateRoot(genesis: Genesis, common: Common): Promise<Uint8Array> {
  return writeGenesisState(new MerkleStateManager({ common }), genesis);
}

// ---------------------------------------------------------------------------------------------
// Genesis block
// ---------------------------------------------------------------------------------------------

/**
 * The genesis block as Besu builds it: configured header fields, empty body, the fork's default
 * empty roots (withdrawals, requests), zero blob gas and beacon root when Cancun is active. Its hash
 * is the plain header hash for every consensus (QBFT hashes genesis unchanged, §2.5).
 */
export function genesisBlock(genesis: Genesis, common: Common, stateRoot: Uint8Array): Block {
  const { header } = genesis;
  const headerData: HeaderData = {
    parentHash: header.parentHash,
    coinbase: header.coinbase,
    stateRoot,
    difficulty: header.difficulty,
    number: 0n,
    gasLimit: header.gasLimit,
    gasUsed: 0n,
    timestamp: header.timestamp,
    extraData: header.extraData,
    mixHash: header.mixHash,
    nonce: header.nonce,
  };
  const genesisCommon = common.copy();
  genesisCommon.setHardforkBy({ blockNumber: 0n, timestamp: header.timestamp });
  // A base fee (and the Cancun fields) only exist in the header when the fork is active at genesis.
  if (genesisCommon.isActivatedEIP(1559) && header.baseFeePerGas !== undefined) {
    headerData.baseFeePerGas = header.baseFeePerGas;
  }
  if (genesisCommon.isActivatedEIP(4844)) {
    headerData.blobGasUsed = header.blobGasUsed ?? 0n;
    headerData.excessBlobGas = header.excessBlobGas ?? 0n;
  }
  if (genesisCommon.isActivatedEIP(4788)) {
    headerData.parentBeaconBlockRoot = header.parentBeaconBlockRoot ?? new Uint8Array(32);
  }
  return createBlock({ header: headerData }, { common: genesisCommon, skipConsensusFormatValidation: true });
}

export interface BuiltGenesis {
  /** Common with fork hashes set, at the genesis hardfork. */
  common: Common;
  stateRoot: Uint8Array;
  block: Block;
  hash: Uint8Array;
}

/** Everything about genesis in memory: Common, state root, block and hash (fork hashes filled in). */
export async function buildGenesis(genesis: Genesis, opts: Omit<ChainCommonOptions, 'genesisHash'> = {}): Promise<BuiltGenesis> {
  const provisional = createChainCommon(genesis, opts);
  const stateRoot = await computeGenesisStateRoot(genesis, provisional);
  const block = genesisBlock(genesis, provisional, stateRoot);
  const hash = block.hash();
  const common = createChainCommon(genesis, { ...opts, genesisHash: hash });
  return { common, stateRoot, block, hash };
}
