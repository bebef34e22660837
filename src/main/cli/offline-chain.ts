// The chain of a data path opened in the command's own process, for `blocks import` and `blocks export`: the
// genesis the node options name, the database where the node keeps it (an earlier layout moved first, as a
// node start does). RocksDB's lock keeps a running node's database out of reach (Chain.open says so).
// Loaded only once a command's parameters are valid, so that parameter errors never load RocksDB or the EVM.

import { existsSync, mkdirSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { resolveNetwork } from '../supervisor/network.js';
import { chainSpecFromGenesis } from '../../shared/execution/network-spec.js';
import { Chain } from '../../chain/chain.js';
import type { ChainOptions } from '../../shared/actors/worker-data.js';
import { prepareDatabaseLocation } from '../../chain/database-location.js';
import { parseGenesisJson, type Genesis } from '../../shared/ethereum/genesis.js';
import { CliUsageError } from './errors.js';
import type { NodeOptions } from './options.js';

export interface OfflineChain {
  readonly chain: Chain;
  readonly genesis: Genesis;
  readonly genesisJson: string;
  /** The data path, absolute. */
  readonly dataPath: string;
}

/**
 * Opens the chain of `options.dataPath`. `create`: make the data path and the database when absent (an
 * import); otherwise both must exist (an export), else a parameter error naming the data path.
 */
export async function openOfflineChain(options: NodeOptions, create: boolean, log: (message: string) => void, chainOptions: ChainOptions = {}): Promise<OfflineChain> {
  const network = resolveNetwork(options);
  const genesis = parseGenesisJson(network.genesisJson);
  const spec = await chainSpecFromGenesis(network.genesisJson, options.networkId ?? undefined);
  const dataPath = resolvePath(options.dataPath);
  const missing = () => new CliUsageError(`Invalid parameter --data-path (${dataPath}). Database does not exist.`);
  if (create) mkdirSync(dataPath, { recursive: true });
  else if (!existsSync(dataPath)) throw missing();
  const location = await prepareDatabaseLocation(dataPath, log);
  if (!create && !existsSync(location)) throw missing();
  const chain = await Chain.open(location, spec, chainOptions);
  return { chain, genesis, genesisJson: network.genesisJson, dataPath };
}
