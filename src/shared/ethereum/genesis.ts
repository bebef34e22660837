/**
 * Besu genesis file parsing (qbft-and-p2p.md §8, §9.1, §11) and Basalt's embedded dev network.
 *
 * Besu lower-cases every key of the genesis before reading it, so `"chainId"`, `"CHAINID"` and
 * `"chainid"` are the same key here too. The result is a typed `Genesis`; building the ethereumjs
 * `Common`, the genesis state and the genesis block lives in `./common.ts`.
 */
import { readFileSync } from 'node:fs';
import { readNodeKeyFile } from './node-key.js';

/** EVM forks Basalt knows, with ethereumjs' names, in activation order. */
export const FORK_ORDER = [
  'homestead',
  'dao',
  'tangerineWhistle',
  'spuriousDragon',
  'byzantium',
  'constantinople',
  'petersburg',
  'istanbul',
  'muirGlacier',
  'berlin',
  'london',
  'arrowGlacier',
  'grayGlacier',
  'paris',
  'mergeNetsplitBlock',
  'shanghai',
  'cancun',
  'prague',
  'osaka',
  'bpo1',
  'bpo2',
  'bpo3',
  'bpo4',
  'bpo5',
] as const;
export type ForkName = (typeof FORK_ORDER)[number];

/** Besu's (lower-cased) genesis config key for each fork. Several spellings exist for some forks. */
const FORK_KEYS: ReadonlyArray<{ fork: ForkName; keys: string[]; kind: 'block' | 'timestamp' }> = [
  { fork: 'homestead', keys: ['homesteadblock'], kind: 'block' },
  { fork: 'dao', keys: ['daoforkblock'], kind: 'block' },
  { fork: 'tangerineWhistle', keys: ['eip150block'], kind: 'block' },
  { fork: 'spuriousDragon', keys: ['eip158block', 'eip155block'], kind: 'block' },
  { fork: 'byzantium', keys: ['byzantiumblock'], kind: 'block' },
  { fork: 'constantinople', keys: ['constantinopleblock'], kind: 'block' },
  { fork: 'petersburg', keys: ['petersburgblock', 'constantinoplefixblock'], kind: 'block' },
  { fork: 'istanbul', keys: ['istanbulblock'], kind: 'block' },
  { fork: 'muirGlacier', keys: ['muirglacierblock'], kind: 'block' },
  { fork: 'berlin', keys: ['berlinblock'], kind: 'block' },
  { fork: 'london', keys: ['londonblock'], kind: 'block' },
  { fork: 'arrowGlacier', keys: ['arrowglacierblock'], kind: 'block' },
  { fork: 'grayGlacier', keys: ['grayglacierblock'], kind: 'block' },
  { fork: 'mergeNetsplitBlock', keys: ['mergenetsplitblock'], kind: 'block' },
  { fork: 'shanghai', keys: ['shanghaitime'], kind: 'timestamp' },
  { fork: 'cancun', keys: ['cancuntime'], kind: 'timestamp' },
  { fork: 'prague', keys: ['praguetime'], kind: 'timestamp' },
  { fork: 'osaka', keys: ['osakatime'], kind: 'timestamp' },
  { fork: 'bpo1', keys: ['bpo1time'], kind: 'timestamp' },
  { fork: 'bpo2', keys: ['bpo2time'], kind: 'timestamp' },
  { fork: 'bpo3', keys: ['bpo3time'], kind: 'timestamp' },
  { fork: 'bpo4', keys: ['bpo4time'], kind: 'timestamp' },
  { fork: 'bpo5', keys: ['bpo5time'], kind: 'timestamp' },
];

/** A fork as written in the genesis config: activated at a block number or at a timestamp. */
export type ForkActivation =
  | { fork: ForkName; block: bigint; timestamp?: undefined }
  | { fork: ForkName; block?: undefined; timestamp: bigint };

export interface BlobScheduleEntry {
  target: number;
  max: number;
  baseFeeUpdateFraction: number;
}

export interface GenesisConfig {
  chainId: bigint;
  /** Forks exactly as configured, in activation order (earlier forks are NOT filled in here). */
  forks: ForkActivation[];
  /** EIP-7840 blob schedule, keyed by ethereumjs fork name. */
  blobSchedule?: Partial<Record<ForkName, BlobScheduleEntry>>;
  /** Besu `contractSizeLimit` (bytes), when set. */
  contractSizeLimit?: number;
  /** Besu `zeroBaseFee`: free-gas network, base fee stays 0. */
  zeroBaseFee: boolean;
  /** Besu `terminalTotalDifficulty`, when set (not used by QBFT chains). */
  terminalTotalDifficulty?: bigint;
  /** The whole config object with lower-cased keys, for anything not modelled above. */
  raw: Record<string, unknown>;
}

export interface QbftConfig {
  blockPeriodSeconds: number;
  epochLength: number;
  requestTimeoutSeconds: number;
  /** `xemptyblockperiodseconds`; 0 = disabled. */
  emptyBlockPeriodSeconds: number;
  /** `xblockperiodmilliseconds`; 0 = not used. */
  blockPeriodMilliseconds: number;
  /** Wei credited to the mining beneficiary per block. */
  blockReward: bigint;
  /** Reward/fee recipient; undefined = the block's coinbase. */
  miningBeneficiary?: Uint8Array;
  /** Present ⇒ contract-based validator selection from genesis. */
  validatorContractAddress?: Uint8Array;
  gossipedHistoryLimit: number;
  messageQueueLimit: number;
  duplicateMessageLimit: number;
  futureMessagesLimit: number;
  futureMessagesMaxDistance: number;
  /** Block at which QBFT takes over in a consensus migration (not supported by Basalt). */
  startBlock?: number;
}

/** One entry of `config.transitions.qbft`: only the keys it contains override (§8). */
export interface QbftTransition {
  block: bigint;
  blockPeriodSeconds?: number;
  emptyBlockPeriodSeconds?: number;
  blockPeriodMilliseconds?: number;
  blockReward?: bigint;
  /** null = explicitly blank: revert to "use the coinbase". */
  miningBeneficiary?: Uint8Array | null;
  validators?: Uint8Array[];
  validatorSelectionMode?: 'blockheader' | 'contract';
  validatorContractAddress?: Uint8Array;
}

export interface EthashConfig {
  /** Besu `fixeddifficulty` (the dev network uses 100). */
  fixedDifficulty?: bigint;
}

export interface GenesisAccount {
  address: Uint8Array;
  balance: bigint;
  nonce: bigint;
  /** Empty when the account has no code. */
  code: Uint8Array;
  /** 32-byte key / 32-byte value pairs; zero values are dropped (they would delete the slot). */
  storage: Array<[key: Uint8Array, value: Uint8Array]>;
}

export interface GenesisHeaderFields {
  parentHash: Uint8Array;
  coinbase: Uint8Array;
  difficulty: bigint;
  gasLimit: bigint;
  timestamp: bigint;
  extraData: Uint8Array;
  mixHash: Uint8Array;
  /** 8 bytes. */
  nonce: Uint8Array;
  /** Besu's rule: given value, else 1 gwei when londonBlock is 0, else none. */
  baseFeePerGas?: bigint;
  excessBlobGas?: bigint;
  blobGasUsed?: bigint;
  parentBeaconBlockRoot?: Uint8Array;
}

export type ConsensusKind = 'qbft' | 'ethash' | 'none';

export interface Genesis {
  chainId: bigint;
  /** A custom genesis has no network id of its own: it defaults to the chain id. */
  networkId: bigint;
  config: GenesisConfig;
  consensus: ConsensusKind;
  /** `config.qbft` with defaults applied; present iff consensus is 'qbft'. */
  qbft?: QbftConfig;
  /** `config.transitions.qbft`, sorted by block. */
  qbftTransitions: QbftTransition[];
  ethash?: EthashConfig;
  alloc: GenesisAccount[];
  header: GenesisHeaderFields;
}

/** Thrown for a genesis file Besu would refuse; the message names the offending key. */
export class GenesisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GenesisError';
  }
}

export const ONE_GWEI = 1_000_000_000n;

// ---------------------------------------------------------------------------------------------
// Small typed readers over lower-cased JSON
// ---------------------------------------------------------------------------------------------

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Besu lower-cases every key (recursively) before reading the genesis. */
function lowerCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(lowerCaseKeys);
  if (!isObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) result[key.toLowerCase()] = lowerCaseKeys(inner);
  return result;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function expectObject(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw new GenesisError(`${path}: expected an object but got ${typeName(value)}`);
  return value;
}

function stripHex(text: string): string | undefined {
  return /^0x/i.test(text) ? text.slice(2) : undefined;
}

/**
 * A non-negative integer written as a JSON number, a `0x` hex string or a decimal string
 * (Besu accepts all three for quantities such as balances, gas limit and fork blocks).
 */
function parseQuantity(value: unknown, path: string): bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new GenesisError(`${path}: ${value} is not a non-negative integer that a JSON number can carry exactly; write it as a string`);
    }
    return BigInt(value);
  }
  if (typeof value === 'string') {
    const text = value.trim();
    const hexDigits = stripHex(text);
    if (hexDigits !== undefined) {
      if (!/^[0-9a-fA-F]+$/.test(hexDigits)) throw new GenesisError(`${path}: invalid hex quantity "${value}"`);
      return BigInt('0x' + hexDigits);
    }
    if (!/^[0-9]+$/.test(text)) throw new GenesisError(`${path}: invalid quantity "${value}"`);
    return BigInt(text);
  }
  throw new GenesisError(`${path}: expected a number or numeric string but got ${typeName(value)}`);
}

/** Besu's JSON number keys: a JSON number only ("Expected number value but got string"). */
function parseNumber(value: unknown, path: string): number {
  if (typeof value !== 'number') {
    throw new GenesisError(`${path}: Expected number value but got ${typeName(value)}`);
  }
  if (!Number.isSafeInteger(value)) throw new GenesisError(`${path}: expected an integer but got ${value}`);
  return value;
}

/** A positive int given as a JSON number or a numeric string (Besu's `blockperiodseconds`). */
function parsePositiveInt(value: unknown, path: string): number {
  const parsed = typeof value === 'string' ? Number(parseQuantity(value, path)) : parseNumber(value, path);
  if (parsed <= 0 || parsed > 0x7fffffff) throw new GenesisError(`${path}: must be a positive integer, got ${parsed}`);
  return parsed;
}

/** A wei amount that Besu insists is a string (decimal or `0x` hex); a JSON number is a type error. */
function parseWeiString(value: unknown, path: string): bigint {
  if (typeof value !== 'string') throw new GenesisError(`${path}: Expected string value but got ${typeName(value)}`);
  return parseQuantity(value, path);
}

function parseHexBytes(value: unknown, path: string, expectedLength?: number): Uint8Array {
  if (typeof value !== 'string') throw new GenesisError(`${path}: expected a hex string but got ${typeName(value)}`);
  const digits = stripHex(value.trim()) ?? value.trim();
  if (!/^[0-9a-fA-F]*$/.test(digits) || digits.length % 2 !== 0) {
    throw new GenesisError(`${path}: invalid hex "${value}"`);
  }
  const bytes = Uint8Array.from(Buffer.from(digits, 'hex'));
  if (expectedLength !== undefined && bytes.length !== expectedLength) {
    throw new GenesisError(`${path}: expected ${expectedLength} bytes but got ${bytes.length}`);
  }
  return bytes;
}

function parseAddress(value: unknown, path: string): Uint8Array {
  return parseHexBytes(value, path, 20);
}

/** A hex word that may be shorter than 32 bytes (Besu reads storage as UInt256): left-padded. */
function parseWord(value: unknown, path: string): Uint8Array {
  if (typeof value !== 'string') throw new GenesisError(`${path}: expected a hex string but got ${typeName(value)}`);
  let digits = stripHex(value.trim()) ?? value.trim();
  if (!/^[0-9a-fA-F]*$/.test(digits) || digits.length > 64) throw new GenesisError(`${path}: invalid 32-byte hex "${value}"`);
  digits = digits.padStart(64, '0');
  return Uint8Array.from(Buffer.from(digits, 'hex'));
}

/** Header nonce: a 64-bit quantity stored as 8 bytes. */
function parseNonce(value: unknown, path: string): Uint8Array {
  const nonce = parseQuantity(value, path);
  if (nonce >= 1n << 64n) throw new GenesisError(`${path}: nonce does not fit in 8 bytes`);
  return Uint8Array.from(Buffer.from(nonce.toString(16).padStart(16, '0'), 'hex'));
}

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

function parseForks(config: JsonObject, genesisTimestamp: bigint): ForkActivation[] {
  const forks: ForkActivation[] = [];
  for (const { fork, keys, kind } of FORK_KEYS) {
    const key = keys.find((k) => config[k] !== undefined && config[k] !== null);
    if (key === undefined) continue;
    const value = parseQuantity(config[key], `config.${key}`);
    if (kind === 'block') {
      forks.push({ fork, block: value });
    } else {
      // A time fork at or before genesis is simply active from genesis (EIP-6122 leaves it out of
      // the fork id); normalising to 0 keeps ethereumjs' ordering and fork hash right.
      forks.push({ fork, timestamp: value <= genesisTimestamp ? 0n : value });
    }
  }
  return forks;
}

/** The forks a Besu `blobSchedule` may name (Besu's BlobScheduleOptions); other entries are ignored, as Besu does. */
export const BLOB_SCHEDULE_FORKS = ['cancun', 'prague', 'osaka', 'bpo1', 'bpo2', 'bpo3', 'bpo4', 'bpo5'] as const satisfies readonly ForkName[];

function parseBlobSchedule(value: unknown): GenesisConfig['blobSchedule'] {
  if (value === undefined || value === null) return undefined;
  const schedule = expectObject(value, 'config.blobschedule');
  const result: Partial<Record<ForkName, BlobScheduleEntry>> = {};
  for (const [name, entryValue] of Object.entries(schedule)) {
    const fork = BLOB_SCHEDULE_FORKS.find((f) => f === name);
    if (fork === undefined) continue;
    const entry = expectObject(entryValue, `config.blobschedule.${name}`);
    result[fork] = {
      target: parseNumber(entry.target, `config.blobschedule.${name}.target`),
      max: parseNumber(entry.max, `config.blobschedule.${name}.max`),
      baseFeeUpdateFraction: parseNumber(
        entry.basefeeupdatefraction,
        `config.blobschedule.${name}.baseFeeUpdateFraction`,
      ),
    };
    if (result[fork].target > result[fork].max) {
      throw new GenesisError(`config.blobschedule.${name}: target ${result[fork].target} is above max ${result[fork].max}`);
    }
  }
  return result;
}

/**
 * Forks Besu schedules but Basalt cannot run: a genesis naming one is refused rather than run
 * without it (its blocks would differ from Besu's). Fork keys neither Besu nor Basalt know are
 * ignored, as Besu ignores them.
 */
const UNSUPPORTED_FORK_KEYS: ReadonlyArray<{ key: string; name: string }> = [
  { key: 'amsterdamtime', name: 'amsterdamTime' },
  { key: 'futureeipstime', name: 'futureEipsTime' },
  { key: 'experimentaleipstime', name: 'experimentalEipsTime' },
];

function refuseUnsupportedForks(config: JsonObject): void {
  for (const { key, name } of UNSUPPORTED_FORK_KEYS) {
    if (config[key] !== undefined && config[key] !== null) {
      throw new GenesisError(`config.${name}: Basalt runs forks up to the blob-parameter-only forks after Osaka (bpo5Time); remove ${name}`);
    }
  }
}

const QBFT_DEFAULTS = {
  blockPeriodSeconds: 1,
  epochLength: 30000,
  requestTimeoutSeconds: 1,
  emptyBlockPeriodSeconds: 0,
  blockPeriodMilliseconds: 0,
  gossipedHistoryLimit: 1000,
  messageQueueLimit: 1000,
  duplicateMessageLimit: 100,
  futureMessagesLimit: 1000,
  futureMessagesMaxDistance: 10,
} as const;

function optional<T>(section: JsonObject, key: string, read: (value: unknown, path: string) => T, path: string): T | undefined {
  const value = section[key];
  return value === undefined || value === null ? undefined : read(value, `${path}.${key}`);
}

function parseQbftConfig(value: unknown): QbftConfig {
  const path = 'config.qbft';
  const qbft = expectObject(value, path);
  const epochLength = optional(qbft, 'epochlength', parseNumber, path) ?? QBFT_DEFAULTS.epochLength;
  if (epochLength <= 0) throw new GenesisError(`${path}.epochlength: must be greater than 0, got ${epochLength}`);
  const beneficiaryText = qbft.miningbeneficiary;
  const config: QbftConfig = {
    blockPeriodSeconds: optional(qbft, 'blockperiodseconds', parsePositiveInt, path) ?? QBFT_DEFAULTS.blockPeriodSeconds,
    epochLength,
    requestTimeoutSeconds: optional(qbft, 'requesttimeoutseconds', parseNumber, path) ?? QBFT_DEFAULTS.requestTimeoutSeconds,
    emptyBlockPeriodSeconds:
      optional(qbft, 'xemptyblockperiodseconds', parseNumber, path) ?? QBFT_DEFAULTS.emptyBlockPeriodSeconds,
    blockPeriodMilliseconds:
      optional(qbft, 'xblockperiodmilliseconds', parseNumber, path) ?? QBFT_DEFAULTS.blockPeriodMilliseconds,
    blockReward: optional(qbft, 'blockreward', parseWeiString, path) ?? 0n,
    gossipedHistoryLimit: optional(qbft, 'gossipedhistorylimit', parseNumber, path) ?? QBFT_DEFAULTS.gossipedHistoryLimit,
    messageQueueLimit: optional(qbft, 'messagequeuelimit', parseNumber, path) ?? QBFT_DEFAULTS.messageQueueLimit,
    duplicateMessageLimit:
      optional(qbft, 'duplicatemessagelimit', parseNumber, path) ?? QBFT_DEFAULTS.duplicateMessageLimit,
    futureMessagesLimit: optional(qbft, 'futuremessageslimit', parseNumber, path) ?? QBFT_DEFAULTS.futureMessagesLimit,
    futureMessagesMaxDistance:
      optional(qbft, 'futuremessagesmaxdistance', parseNumber, path) ?? QBFT_DEFAULTS.futureMessagesMaxDistance,
  };
  if (typeof beneficiaryText === 'string' && beneficiaryText.trim() !== '') {
    config.miningBeneficiary = parseAddress(beneficiaryText, `${path}.miningbeneficiary`);
  }
  const contract = optional(qbft, 'validatorcontractaddress', parseAddress, path);
  if (contract !== undefined) config.validatorContractAddress = contract;
  const startBlock = optional(qbft, 'startblock', parseNumber, path);
  if (startBlock !== undefined) config.startBlock = startBlock;
  return config;
}

function parseQbftTransitions(config: JsonObject): QbftTransition[] {
  const transitions = config.transitions;
  if (transitions === undefined || transitions === null) return [];
  const list = expectObject(transitions, 'config.transitions').qbft;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new GenesisError(`config.transitions.qbft: expected an array but got ${typeName(list)}`);
  const result = list.map((entryValue, index): QbftTransition => {
    const path = `config.transitions.qbft[${index}]`;
    const entry = expectObject(entryValue, path);
    if (entry.block === undefined || entry.block === null) throw new GenesisError(`${path}.block: required`);
    const block = BigInt(parseNumber(entry.block, `${path}.block`));
    if (block <= 0n) throw new GenesisError(`${path}.block: must be greater than 0, got ${block}`);
    const transition: QbftTransition = { block };
    const period = optional(entry, 'blockperiodseconds', parsePositiveInt, path);
    if (period !== undefined) transition.blockPeriodSeconds = period;
    const emptyPeriod = optional(entry, 'xemptyblockperiodseconds', parseNumber, path);
    if (emptyPeriod !== undefined) transition.emptyBlockPeriodSeconds = emptyPeriod;
    const periodMs = optional(entry, 'xblockperiodmilliseconds', parseNumber, path);
    if (periodMs !== undefined) transition.blockPeriodMilliseconds = periodMs;
    const reward = optional(entry, 'blockreward', parseWeiString, path);
    if (reward !== undefined) transition.blockReward = reward;
    if (entry.miningbeneficiary !== undefined && entry.miningbeneficiary !== null) {
      const text = entry.miningbeneficiary;
      transition.miningBeneficiary =
        typeof text === 'string' && text.trim() === '' ? null : parseAddress(text, `${path}.miningbeneficiary`);
    }
    if (entry.validators !== undefined && entry.validators !== null) {
      if (!Array.isArray(entry.validators)) {
        throw new GenesisError(`${path}.validators: expected an array but got ${typeName(entry.validators)}`);
      }
      transition.validators = entry.validators.map((v, i) => parseAddress(v, `${path}.validators[${i}]`));
    }
    if (entry.validatorselectionmode !== undefined && entry.validatorselectionmode !== null) {
      const mode = String(entry.validatorselectionmode).toLowerCase();
      if (mode !== 'blockheader' && mode !== 'contract') {
        throw new GenesisError(`${path}.validatorselectionmode: expected "blockheader" or "contract", got "${mode}"`);
      }
      transition.validatorSelectionMode = mode;
    }
    const contract = optional(entry, 'validatorcontractaddress', parseAddress, path);
    if (contract !== undefined) transition.validatorContractAddress = contract;
    if (transition.validatorSelectionMode === 'contract' && transition.validatorContractAddress === undefined) {
      throw new GenesisError(`${path}: validatorselectionmode "contract" requires validatorcontractaddress`);
    }
    return transition;
  });
  const seen = new Set<bigint>();
  for (const t of result) {
    if (seen.has(t.block)) throw new GenesisError(`config.transitions.qbft: duplicate transition for block ${t.block}`);
    seen.add(t.block);
  }
  return result.sort((a, b) => (a.block < b.block ? -1 : a.block > b.block ? 1 : 0));
}

function parseAlloc(value: unknown): GenesisAccount[] {
  if (value === undefined || value === null) return [];
  const alloc = expectObject(value, 'alloc');
  return Object.entries(alloc).map(([addressKey, accountValue]) => {
    const path = `alloc.${addressKey}`;
    const account = expectObject(accountValue, path);
    const storage: Array<[Uint8Array, Uint8Array]> = [];
    if (account.storage !== undefined && account.storage !== null) {
      for (const [slot, word] of Object.entries(expectObject(account.storage, `${path}.storage`))) {
        const storageValue = parseWord(word, `${path}.storage.${slot}`);
        // Writing zero deletes a slot: it never appears in the state trie.
        if (storageValue.some((b) => b !== 0)) storage.push([parseWord(slot, `${path}.storage key`), storageValue]);
      }
    }
    return {
      address: parseAddress(addressKey, `${path} (address)`),
      balance: optional(account, 'balance', parseQuantity, path) ?? 0n,
      nonce: optional(account, 'nonce', parseQuantity, path) ?? 0n,
      code: optional(account, 'code', parseHexBytes, path) ?? new Uint8Array(0),
      storage,
    };
  });
}

function parseConsensus(config: JsonObject): { consensus: ConsensusKind; qbft?: QbftConfig; ethash?: EthashConfig } {
  for (const unsupported of ['ibft2', 'clique', 'ibft'] as const) {
    if (config[unsupported] !== undefined && config.qbft === undefined) {
      throw new GenesisError(`config.${unsupported}: this consensus is not supported by Basalt (QBFT only)`);
    }
  }
  if (config.qbft !== undefined && config.qbft !== null) return { consensus: 'qbft', qbft: parseQbftConfig(config.qbft) };
  if (config.ethash !== undefined && config.ethash !== null) {
    const ethash = expectObject(config.ethash, 'config.ethash');
    const fixed = optional(ethash, 'fixeddifficulty', parseQuantity, 'config.ethash');
    return { consensus: 'ethash', ethash: fixed === undefined ? {} : { fixedDifficulty: fixed } };
  }
  return { consensus: 'none' };
}

/** Parse an already JSON-decoded Besu genesis file. */
export function parseGenesis(json: unknown): Genesis {
  const root = expectObject(lowerCaseKeys(json), 'genesis');
  const config = expectObject(root.config, 'config');
  if (config.chainid === undefined || config.chainid === null) throw new GenesisError('config.chainId: required');
  const chainId = parseQuantity(config.chainid, 'config.chainId');

  const timestamp = optional(root, 'timestamp', parseQuantity, 'genesis') ?? 0n;
  refuseUnsupportedForks(config);
  const forks = parseForks(config, timestamp);
  const londonBlock = forks.find((f) => f.fork === 'london')?.block;
  const explicitBaseFee = optional(root, 'basefeepergas', parseQuantity, 'genesis');

  const header: GenesisHeaderFields = {
    parentHash: optional(root, 'parenthash', (v, p) => parseHexBytes(v, p, 32), 'genesis') ?? new Uint8Array(32),
    coinbase: optional(root, 'coinbase', parseAddress, 'genesis') ?? new Uint8Array(20),
    difficulty: optional(root, 'difficulty', parseQuantity, 'genesis') ?? 0n,
    gasLimit: optional(root, 'gaslimit', parseQuantity, 'genesis') ?? 0n,
    timestamp,
    extraData: optional(root, 'extradata', parseHexBytes, 'genesis') ?? new Uint8Array(0),
    mixHash: optional(root, 'mixhash', (v, p) => parseHexBytes(v, p, 32), 'genesis') ?? new Uint8Array(32),
    nonce: optional(root, 'nonce', parseNonce, 'genesis') ?? new Uint8Array(8),
  };
  if (root.gaslimit === undefined) throw new GenesisError('genesis.gasLimit: required');
  if (root.difficulty === undefined) throw new GenesisError('genesis.difficulty: required');
  if (explicitBaseFee !== undefined) header.baseFeePerGas = explicitBaseFee;
  else if (londonBlock === 0n) header.baseFeePerGas = ONE_GWEI;
  const excessBlobGas = optional(root, 'excessblobgas', parseQuantity, 'genesis');
  if (excessBlobGas !== undefined) header.excessBlobGas = excessBlobGas;
  const blobGasUsed = optional(root, 'blobgasused', parseQuantity, 'genesis');
  if (blobGasUsed !== undefined) header.blobGasUsed = blobGasUsed;
  const beaconRoot = optional(root, 'parentbeaconblockroot', (v, p) => parseHexBytes(v, p, 32), 'genesis');
  if (beaconRoot !== undefined) header.parentBeaconBlockRoot = beaconRoot;

  const genesisConfig: GenesisConfig = {
    chainId,
    forks,
    zeroBaseFee: config.zerobasefee === true,
    raw: config,
  };
  const blobSchedule = parseBlobSchedule(config.blobschedule);
  if (blobSchedule !== undefined) genesisConfig.blobSchedule = blobSchedule;
  const contractSizeLimit = optional(config, 'contractsizelimit', parseNumber, 'config');
  if (contractSizeLimit !== undefined) genesisConfig.contractSizeLimit = contractSizeLimit;
  const ttd = optional(config, 'terminaltotaldifficulty', parseQuantity, 'config');
  if (ttd !== undefined) genesisConfig.terminalTotalDifficulty = ttd;

  const consensus = parseConsensus(config);
  const genesis: Genesis = {
    chainId,
    networkId: chainId,
    config: genesisConfig,
    consensus: consensus.consensus,
    qbftTransitions: consensus.consensus === 'qbft' ? parseQbftTransitions(config) : [],
    alloc: parseAlloc(root.alloc),
    header,
  };
  if (consensus.qbft !== undefined) genesis.qbft = consensus.qbft;
  if (consensus.ethash !== undefined) genesis.ethash = consensus.ethash;
  return genesis;
}

/** Parse the text of a Besu genesis file. */
export function parseGenesisJson(text: string): Genesis {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new GenesisError(`genesis file is not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
  return parseGenesis(json);
}

// ---------------------------------------------------------------------------------------------
// The embedded dev network
// ---------------------------------------------------------------------------------------------

/** Where the embedded dev network files live: `<repo>/genesis/`, reached from dist/src/chain/. */
const DEV_GENESIS_URL = new URL('../../../../genesis/dev.json', import.meta.url);
const DEV_VALIDATOR_KEY_URL = new URL('../../../../genesis/dev-validator.key', import.meta.url);

export interface DevNetwork {
  /** The JSON-decoded `genesis/dev.json` (feed it to `parseGenesis`). */
  genesisJson: unknown;
  /** The dev validator's 32-byte private key (`genesis/dev-validator.key`). */
  validatorKey: Uint8Array;
}

/**
 * Basalt's `--network=dev`: chain id 1337, Besu's three funded dev accounts, one QBFT validator with a
 * well-known key (qbft-and-p2p.md §11 "Basalt's decision").
 */
export function loadDevNetwork(): DevNetwork {
  const genesisText = readFileSync(DEV_GENESIS_URL, 'utf8');
  return {
    genesisJson: JSON.parse(genesisText) as unknown,
    validatorKey: readNodeKeyFile(DEV_VALIDATOR_KEY_URL),
  };
}
