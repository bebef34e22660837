// What `basalt operator generate-blockchain-config` does (qbft-and-p2p.md §9.2):
// from Besu's network config JSON (`genesis`, and `blockchain.nodes` with `generate` and `count`, or
// `keys`), writes
//   <to>/genesis.json                      the `genesis` object with the validators' extraData,
//   <to>/keys/<0xaddress>/key.pub          each node's public key (0x + 128 hex digits),
//   <to>/keys/<0xaddress>/key.priv         its private key (0x + 64 hex digits), when generated here,
// with Besu's file names by default. With `--private-key-file-name=key` each key folder is laid out as a
// data path (key, key.pub), so a node starts with `--data-path=<to>/keys/<0xaddress>`.
//
// Everything is read and checked before anything is written, so a bad config leaves no output behind.
// Failures are CommandFailures with Besu's messages (exit code 1: the command was understood but could not
// be carried out).

import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { utils as secp256k1 } from '@noble/secp256k1';
import { nodeIdOf } from '../../shared/ethereum/node-id.js';
import { formatNodeKey } from '../../shared/ethereum/node-key.js';
import { addressFromPublicKey } from '../../shared/qbft/seal.js';
import { errorMessage } from '../../shared/util/errors.js';
import { genesisExtraDataOf, toHex, type ExtraDataType } from './genesis-extra-data.js';
import { formatJsonDocument, jsonTypeName, memberOf, parseJsonDocument, type JsonValue } from './json-document.js';
import { CommandFailure } from './subcommand.js';

const SUPPORTED_CURVES = ['secp256k1'];

interface NodeKeys {
  /** The 64-byte public key (node id). */
  publicKey: Uint8Array;
  /** Present when the key was generated here. */
  privateKey?: Uint8Array;
}

interface BlockchainConfig {
  genesis: JsonValue & { kind: 'object' };
  /** Undefined when the genesis names no BFT protocol: no extraData is written then, as with Besu. */
  extraDataType: ExtraDataType | undefined;
  nodes: NodeKeys[];
  /** What Besu logs while it gets the keys. */
  progress: string[];
}

export interface BlockchainConfigArgs {
  configFile: string;
  to: string;
  names: FileNames;
}

/** Writes the network's genesis and keys into `args.to`; `log` hears Besu's progress lines. */
export function generateBlockchainConfig(args: BlockchainConfigArgs, readFile: (path: string) => string, log: (line: string) => void): void {
  if (new Set(Object.values(args.names)).size < 3) throw new CommandFailure('Output file paths must be unique.');
  checkOutputDirectory(args.to);
  const config = readConfig(args.configFile, readFile);
  for (const line of config.progress) log(line);
  writeOutput(args.to, args.names, config, log);
}

/** Besu's rule: `--to` may exist only as an empty directory. */
function checkOutputDirectory(to: string): void {
  if (!existsSync(to)) return;
  if (!statSync(to).isDirectory()) throw new CommandFailure(`Output directory ${to} is a file, not a directory.`);
  if (readdirSync(to).length > 0) throw new CommandFailure('Output directory already exists.');
}

function readConfig(path: string, readFile: (path: string) => string): BlockchainConfig {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new CommandFailure(`Unable to read the config file ${path}: ${errorMessage(error)}`);
  }
  let root: JsonValue;
  try {
    root = parseJsonDocument(text);
  } catch (error) {
    throw new CommandFailure(`Invalid JSON in the config file ${path}: ${errorMessage(error)}`);
  }
  if (root.kind !== 'object') throw new CommandFailure(`Invalid config file ${path}: expected a JSON object, got ${jsonTypeName(root)}`);

  const genesis = memberOf(root, 'genesis')?.value ?? { kind: 'object', members: [] };
  if (genesis.kind !== 'object') throw new CommandFailure(`Invalid config file ${path}: "genesis" must be an object, got ${jsonTypeName(genesis)}`);
  const chainConfig = memberOf(genesis, 'config')?.value;
  if (chainConfig?.kind !== 'object') throw new CommandFailure('Missing config section in config file');
  checkCurve(memberOf(chainConfig, 'ecCurve')?.value);

  const blockchain = memberOf(root, 'blockchain')?.value;
  const nodesConfig = blockchain === undefined ? undefined : memberOf(blockchain, 'nodes')?.value;
  if (nodesConfig?.kind !== 'object') {
    throw new CommandFailure('Missing blockchain.nodes section in config file: give "generate": true and a "count", or the nodes\' public "keys"');
  }
  const generate = memberOf(nodesConfig, 'generate')?.value;
  const progress: string[] = [];
  let nodes: NodeKeys[];
  if (generate?.kind === 'literal' && generate.value === true) {
    const count = nodeCount(memberOf(nodesConfig, 'count')?.value);
    progress.push(`Generating ${count} nodes keys.`);
    nodes = Array.from({ length: count }, (_, node) => {
      progress.push(`Generating keypair for node ${node}.`);
      const privateKey = secp256k1.randomSecretKey();
      return { privateKey, publicKey: nodeIdOf(privateKey) };
    });
  } else {
    progress.push('Importing public keys from configuration.');
    nodes = importedKeys(memberOf(nodesConfig, 'keys')?.value);
    for (const node of nodes) progress.push(`Public key imported from configuration.(${toHex(node.publicKey)})`);
  }
  const seen = new Set<string>();
  for (const node of nodes) {
    const hex = toHex(node.publicKey);
    if (seen.has(hex)) throw new CommandFailure(`Public key ${hex} is listed more than once.`);
    seen.add(hex);
  }
  // Besu's order of the checks: an IBFT 2.0 section wins over a QBFT one.
  const extraDataType = memberOf(chainConfig, 'ibft2') ? 'IBFT_EXTRA_DATA' : memberOf(chainConfig, 'qbft') ? 'QBFT_EXTRA_DATA' : undefined;
  return { genesis, extraDataType, nodes, progress };
}

function checkCurve(curve: JsonValue | undefined): void {
  if (curve === undefined) return;
  const name = curve.kind === 'string' ? curve.value : formatJsonDocument(curve);
  if (!SUPPORTED_CURVES.includes(name.toLowerCase())) {
    throw new CommandFailure(`Invalid parameter for ecCurve in genesis config: ${name} is not in the list of valid elliptic curves [${SUPPORTED_CURVES.join(', ')}]`);
  }
}

function nodeCount(value: JsonValue | undefined): number {
  if (value === undefined) return 0;
  const count = value.kind === 'number' && /^\d+$/.test(value.text) ? Number(value.text) : NaN;
  if (!Number.isSafeInteger(count)) {
    throw new CommandFailure(`Invalid value for blockchain.nodes.count: expected a whole number of nodes, got ${formatJsonDocument(value)}`);
  }
  return count;
}

const PUBLIC_KEY = /^(?:0x)?([0-9a-fA-F]{128})$/;

function importedKeys(keys: JsonValue | undefined): NodeKeys[] {
  if (keys === undefined) return [];
  if (keys.kind !== 'array') throw new CommandFailure(`Invalid value for blockchain.nodes.keys: expected an array of public keys, got ${jsonTypeName(keys)}`);
  return keys.items.map((key) => {
    if (key.kind !== 'string') throw new CommandFailure(`Invalid key json of type: ${jsonTypeName(key)}`);
    const match = PUBLIC_KEY.exec(key.value);
    const publicKey = match === null ? undefined : Uint8Array.from(Buffer.from(match[1]!, 'hex'));
    if (publicKey === undefined || !secp256k1.isValidPublicKey(Uint8Array.of(4, ...publicKey), false)) {
      throw new CommandFailure(`${key.value} is not a valid public key for elliptic curve secp256k1`);
    }
    return { publicKey };
  });
}

export interface FileNames {
  genesis: string;
  privateKey: string;
  publicKey: string;
}

function writeOutput(to: string, names: FileNames, config: BlockchainConfig, log: (line: string) => void): void {
  const keysDir = join(to, 'keys');
  mkdirSync(keysDir, { recursive: true });
  const validators = config.nodes.map((node) => {
    const address = addressFromPublicKey(node.publicKey);
    const nodeDir = join(keysDir, toHex(address));
    mkdirSync(nodeDir);
    writeFileSync(join(nodeDir, names.publicKey), toHex(node.publicKey), { flag: 'wx' });
    // Only the owner may read a private key, as the node's own <data-path>/key.
    if (node.privateKey) writeFileSync(join(nodeDir, names.privateKey), formatNodeKey(node.privateKey), { flag: 'wx', mode: 0o600 });
    return address;
  });
  if (config.extraDataType !== undefined) {
    log(`Generating ${config.extraDataType === 'QBFT_EXTRA_DATA' ? 'QBFT' : 'IBFT'} extra data.`);
    setExtraData(config.genesis, toHex(genesisExtraDataOf(config.extraDataType, validators)));
  }
  log('Writing genesis file.');
  writeFileSync(join(to, names.genesis), formatJsonDocument(config.genesis), { flag: 'wx' });
  log(`Wrote ${join(to, names.genesis)} and the keys of ${validators.length} node${validators.length === 1 ? '' : 's'} under ${keysDir}.`);
}

/** Replaces the genesis extraData where it is, or adds it at the end (Jackson's ObjectNode.put). */
function setExtraData(genesis: JsonValue & { kind: 'object' }, extraData: string): void {
  const value: JsonValue = { kind: 'string', value: extraData };
  const existing = memberOf(genesis, 'extraData');
  if (existing) existing.value = value;
  else genesis.members.push({ key: 'extraData', value });
}
