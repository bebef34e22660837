/**
 * Besu's test chain served by a real Basalt node: the chain is imported with the real
 * `blocks import` CLI into a temporary data path, then a node is started on it with the options
 * Besu's JSON-RPC spec tests assume (fixtures README, "Node state").
 */
import { join } from 'node:path';
import { BESU_FIXTURES, runCli, startNode, tempDataPath } from './node-process.js';
import type { CliRun, NodeProcess } from './node-process.js';

export const TEST_GENESIS = join(BESU_FIXTURES, 'chain', 'testGenesis.json');
export const TEST_BLOCKS = join(BESU_FIXTURES, 'chain', 'testBlockchain.blocks');

/** `blocks import` of `file` into `dataPath` on the chain of `genesis`. */
export function importBlocks(dataPath: string, file: string, extra: string[] = [], genesis = TEST_GENESIS): Promise<CliRun> {
  return runCli([`--data-path=${dataPath}`, `--genesis-file=${genesis}`, 'blocks', 'import', `--from=${file}`, ...extra]);
}

/** A fresh data path holding Besu's test chain, imported with `blocks import`. */
export async function importBesuTestChain(): Promise<string> {
  const dataPath = tempDataPath();
  const imported = await importBlocks(dataPath, TEST_BLOCKS, ['--skip-pow-validation-enabled']);
  if (imported.code !== 0) throw new Error(`blocks import failed (${imported.code}):\n${imported.stdout}\n${imported.stderr}`);
  return dataPath;
}

/** The node state of Besu's JSON-RPC spec tests, on a fresh import of the test chain. */
export async function startBesuTestChainNode(): Promise<NodeProcess> {
  return startNode({
    genesis: TEST_GENESIS,
    dataPath: await importBesuTestChain(),
    args: ['--network-id=123', '--rpc-http-api=ETH,NET,WEB3,DEBUG,TRACE,TXPOOL', '--min-gas-price=1', '--rpc-gas-cap=0', '--rpc-http-max-batch-size=10'],
  });
}

/**
 * The node state of Besu's GraphQL spec tests (fixtures README): the test chain, minimum gas price 0,
 * Besu's default query complexity limit, GraphQL HTTP on; `extraArgs` added.
 */
export async function startBesuGraphqlTestNode(extraArgs: string[] = []): Promise<NodeProcess> {
  return startNode({ genesis: TEST_GENESIS, dataPath: await importBesuTestChain(), graphql: true, args: ['--min-gas-price=0', '--rpc-gas-cap=0', ...extraArgs] });
}
