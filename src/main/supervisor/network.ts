import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NodeOptions } from '../cli/options.js';
import { loadDevNetwork, parseGenesisJson } from '../../shared/ethereum/genesis.js';
import { formatNodeKey, NodeKeyFileError, readNodeKeyFile } from '../../shared/ethereum/node-key.js';

export interface ResolvedNetwork {
  name: string;
  genesisJson: string;
  chainId: bigint;
  /** The node key: the dev network's validator key, a given key file, or `<data-path>/key`. */
  nodeKey(dataPath: string): Uint8Array;
}

/** Thrown for a configuration the node cannot start with; the CLI prints it and exits 2. */
export class StartupError extends Error {}

/** Picks the genesis and node key the options describe: `--genesis-file`, or a named `--network`. */
export function resolveNetwork(options: NodeOptions): ResolvedNetwork {
  if (options.genesisFile) {
    const path = options.genesisFile;
    if (!existsSync(path)) throw new StartupError(`Unable to load genesis file ${path}: file not found`);
    const genesisJson = readFileSync(path, 'utf8');
    return {
      name: 'custom genesis',
      genesisJson,
      chainId: chainIdOf(genesisJson, path),
      nodeKey: (dataPath) => readOrCreateNodeKey(options.nodePrivateKeyFile ?? join(dataPath, 'key'), options.nodePrivateKeyFile !== undefined),
    };
  }
  const network = (options.network ?? 'mainnet').toLowerCase();
  if (network !== 'dev') {
    throw new StartupError(
      `Network ${network.toUpperCase()} is not supported by Basalt, which runs permissioned networks: use --genesis-file=<file> or --network=dev`,
    );
  }
  const dev = loadDevNetwork();
  return {
    name: 'dev',
    genesisJson: JSON.stringify(dev.genesisJson),
    chainId: chainIdOf(JSON.stringify(dev.genesisJson), 'dev genesis'),
    nodeKey: () => (options.nodePrivateKeyFile ? readOrCreateNodeKey(options.nodePrivateKeyFile, true) : dev.validatorKey),
  };
}

/** The genesis parsed here first, so that a bad file is refused with its reason before any actor starts. */
function chainIdOf(genesisJson: string, source: string): bigint {
  try {
    return parseGenesisJson(genesisJson).chainId;
  } catch (err) {
    throw new StartupError(`Unable to load genesis file ${source}: ${(err as Error).message}`);
  }
}

/** `<data-path>/key` is created (as Besu does) when missing; a given `--node-private-key-file` must exist. */
function readOrCreateNodeKey(path: string, mustExist: boolean): Uint8Array {
  if (!existsSync(path)) {
    if (mustExist) throw new StartupError(`Private key file doesn't exist: ${path}`);
    const key = new Uint8Array(randomBytes(32));
    writeFileSync(path, formatNodeKey(key), { mode: 0o600 });
    return key;
  }
  try {
    return readNodeKeyFile(path);
  } catch (err) {
    throw err instanceof NodeKeyFileError ? new StartupError(err.message) : err;
  }
}
