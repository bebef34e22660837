import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { NodeOptions } from '../cli/options.js';
import { loadDevNetwork, parseGenesisJson } from '../../shared/ethereum/genesis.js';

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

/** Besu's key file: one line of hex, `0x` optional; created as `0x` + 64 hex when missing. */
function readOrCreateNodeKey(path: string, mustExist: boolean): Uint8Array {
  if (!existsSync(path)) {
    if (mustExist) throw new StartupError(`Private key file doesn't exist: ${path}`);
    const key = randomBytes(32);
    writeFileSync(path, `0x${key.toString('hex')}`, { mode: 0o600 });
    return new Uint8Array(key);
  }
  const text = readFileSync(path, 'utf8').trim();
  const hex = text.startsWith('0x') ? text.slice(2) : text;
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new StartupError(`Private key cannot be loaded from file ${path}`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
