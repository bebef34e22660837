import { existsSync, readFileSync } from 'node:fs';
import type { NodeOptions } from '../cli/options.js';
import { loadDevNetwork, parseGenesisJson } from '../../shared/ethereum/genesis.js';

export interface ResolvedNetwork {
  name: string;
  genesisJson: string;
  chainId: bigint;
}

/** Thrown for a configuration the node cannot start with; the CLI prints it and exits 2. */
export class StartupError extends Error {}

/** Picks the genesis the options describe: `--genesis-file`, or a named `--network`. */
export function resolveNetwork(options: NodeOptions): ResolvedNetwork {
  if (options.genesisFile) {
    const path = options.genesisFile;
    if (!existsSync(path)) throw new StartupError(`Unable to load genesis file ${path}: file not found`);
    const genesisJson = readFileSync(path, 'utf8');
    return {
      name: 'custom genesis',
      genesisJson,
      chainId: chainIdOf(genesisJson, path),
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
