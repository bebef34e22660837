/**
 * The JSON shapes of admin_nodeInfo and admin_peers (rpc-auth-cli.md §3.4), built from plain facts
 * so that they can be checked without a network.
 */
import { hardforkSchedule } from '../shared/ethereum/common.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import { toQuantity } from '../shared/rpc/encoding.js';
import type { Json } from '../shared/rpc/types.js';
import { formatEnode } from '../shared/ethereum/enode.js';

/** Besu's `config` keys in its own spelling; each appears only when the genesis sets it. */
const CONFIG_KEYS = [
  'chainId', 'homesteadBlock', 'daoForkBlock', 'eip150Block', 'eip158Block', 'byzantiumBlock', 'constantinopleBlock',
  'petersburgBlock', 'istanbulBlock', 'muirGlacierBlock', 'berlinBlock', 'londonBlock', 'arrowGlacierBlock',
  'grayGlacierBlock', 'mergeNetSplitBlock', 'shanghaiTime', 'cancunTime', 'pragueTime', 'osakaTime', 'bpo1Time',
  'bpo2Time', 'bpo3Time', 'bpo4Time', 'bpo5Time', 'amsterdamTime', 'terminalBlockNumber', 'terminalBlockHash',
  'futureEipsTime', 'experimentalEipsTime', 'contractSizeLimit', 'evmStackSize', 'withdrawalRequestContractAddress',
  'depositContractAddress', 'consolidationRequestContractAddress',
] as const;

const QBFT_KEYS = [
  'epochLength', 'blockPeriodSeconds', 'xBlockPeriodMilliSeconds', 'requestTimeoutSeconds', 'gossipedHistoryLimit',
  'messageQueueLimit', 'duplicateMessageLimit', 'futureMessagesLimit', 'futureMessagesMaxDistance',
  'validatorContractAddress', 'startBlock',
] as const;

/** Keys whose values Besu prints as strings (hashes and addresses); all others are numbers. */
const STRING_KEYS = new Set<string>([
  'terminalBlockHash', 'withdrawalRequestContractAddress', 'depositContractAddress', 'consolidationRequestContractAddress',
  'validatorContractAddress',
]);

/** `protocols.eth.config` of admin_nodeInfo: the genesis config as Besu prints it. */
export function nodeInfoConfig(genesis: Genesis): { [key: string]: Json } {
  const raw = genesis.config.raw;
  const config: { [key: string]: Json } = {};
  for (const key of CONFIG_KEYS) {
    const value = raw[key.toLowerCase()];
    if (value !== undefined && value !== null) config[key] = configValue(key, value);
  }
  const qbftRaw = raw.qbft;
  if (qbftRaw !== null && typeof qbftRaw === 'object' && !Array.isArray(qbftRaw)) {
    const qbft: { [key: string]: Json } = {};
    const source = qbftRaw as Record<string, unknown>;
    for (const key of QBFT_KEYS) {
      const value = source[key.toLowerCase()];
      if (value !== undefined && value !== null) qbft[key] = configValue(key, value);
    }
    config.qbft = qbft;
  }
  if (genesis.config.zeroBaseFee) config.zeroBaseFee = true;
  if (raw.fixedbasefee === true) config.fixedBaseFee = true;
  if (genesis.config.blobSchedule !== undefined) {
    const schedule: { [fork: string]: Json } = {};
    for (const [fork, entry] of Object.entries(genesis.config.blobSchedule)) {
      if (entry !== undefined) schedule[fork] = { target: entry.target, max: entry.max, baseFeeUpdateFraction: entry.baseFeeUpdateFraction };
    }
    config.blobSchedule = schedule;
  }
  return config;
}

function configValue(key: string, value: unknown): Json {
  if (STRING_KEYS.has(key)) return String(value);
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) return Number(BigInt(value));
  if (typeof value === 'boolean') return value;
  return String(value);
}

/** Besu's names of the forks (HardforkId descriptions). */
const FORK_DESCRIPTIONS: Record<string, string> = {
  chainstart: 'Frontier',
  homestead: 'Homestead',
  dao: 'DAO Fork',
  tangerineWhistle: 'Tangerine Whistle',
  spuriousDragon: 'Spurious Dragon',
  byzantium: 'Byzantium',
  constantinople: 'Constantinople',
  petersburg: 'Petersburg',
  istanbul: 'Istanbul',
  muirGlacier: 'Muir Glacier',
  berlin: 'Berlin',
  london: 'London',
  arrowGlacier: 'Arrow Glacier',
  grayGlacier: 'Gray Glacier',
  paris: 'Paris',
  mergeNetsplitBlock: 'Paris',
  shanghai: 'Shanghai',
  cancun: 'Cancun',
  prague: 'Prague',
  osaka: 'Osaka',
  bpo1: 'BPO1',
  bpo2: 'BPO2',
  bpo3: 'BPO3',
  bpo4: 'BPO4',
  bpo5: 'BPO5',
};

/** The fork in force at a head, by Besu's description (`activeFork`). */
export function activeFork(genesis: Genesis, head: { number: bigint; timestamp: bigint }): string {
  let active = 'chainstart';
  for (const entry of hardforkSchedule(genesis)) {
    const reached =
      entry.block !== null && entry.block !== undefined
        ? head.number >= BigInt(entry.block)
        : entry.timestamp !== undefined && head.timestamp >= BigInt(entry.timestamp);
    if (reached) active = entry.name;
  }
  return FORK_DESCRIPTIONS[active] ?? active;
}

export interface LocalNodeFacts {
  idHex: string;
  /** Advertised host (`--p2p-host`). */
  host: string;
  listenPort: number;
  /** The UDP port discovery runs on (the listening port); absent when discovery is off. */
  discoveryPort?: number;
  clientVersion: string;
  genesis: Genesis;
  genesisHash: Uint8Array;
  networkId: bigint;
  head: { number: bigint; hash: Uint8Array; timestamp: bigint; totalDifficulty: bigint };
}

/** With discovery off the enode says `discport=0`, as Besu's does; on the listening port it needs no `discport`. */
export function localEnode(facts: Pick<LocalNodeFacts, 'idHex' | 'host' | 'listenPort' | 'discoveryPort'>): string {
  return formatEnode({ idHex: facts.idHex, host: facts.host, tcpPort: facts.listenPort, udpPort: facts.discoveryPort ?? 0 });
}

export function nodeInfo(facts: LocalNodeFacts): { [key: string]: Json } {
  return {
    enode: localEnode(facts),
    id: facts.idHex,
    ip: facts.host,
    listenAddr: `${facts.host}:${facts.listenPort}`,
    name: facts.clientVersion,
    ports: facts.discoveryPort === undefined ? { listener: facts.listenPort } : { discovery: facts.discoveryPort, listener: facts.listenPort },
    protocols: {
      eth: {
        config: nodeInfoConfig(facts.genesis),
        difficulty: Number(facts.head.totalDifficulty),
        genesis: hex(facts.genesisHash),
        head: hex(facts.head.hash),
        network: Number(facts.networkId),
      },
    },
    activeFork: activeFork(facts.genesis, facts.head),
  };
}

export interface PeerFacts {
  p2pVersion: number;
  clientId: string;
  /** Every capability the peer announced in its Hello, as `name/version`. */
  capabilities: { name: string; version: number }[];
  localAddress: string;
  remoteAddress: string;
  inbound: boolean;
  listenPort: number;
  idHex: string;
  remoteHost: string;
  /** From the peer's Status; undefined until it arrived. */
  status?: { totalDifficulty: bigint; bestHash: Uint8Array; version: number };
}

/** One element of admin_peers, keys in Besu's order. */
export function peerInfo(peer: PeerFacts): { [key: string]: Json } {
  const protocols: { [key: string]: Json } = {};
  if (peer.status !== undefined) {
    protocols.eth = { difficulty: toQuantity(peer.status.totalDifficulty), head: hex(peer.status.bestHash), version: peer.status.version };
  }
  return {
    version: toQuantity(peer.p2pVersion),
    name: peer.clientId,
    caps: peer.capabilities.map((c) => `${c.name}/${c.version}`),
    network: { localAddress: peer.localAddress, remoteAddress: peer.remoteAddress, inbound: peer.inbound },
    port: toQuantity(peer.listenPort),
    id: `0x${peer.idHex}`,
    protocols,
    enode: formatEnode({ idHex: peer.idHex, host: peer.remoteHost, tcpPort: peer.listenPort }),
  };
}

function hex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}
