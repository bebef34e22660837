// README "A network of four", as a newcomer runs it: `operator generate-blockchain-config` writes the keys
// and genesis of four validators from the example config, examples/four-nodes/start-network starts the four
// on loopback (free ports here), and they produce blocks together: one chain on every node, sealed by a
// quorum of the four, the validators those of the generated genesis, each node's enode that of its key.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNetwork, type Network } from '../../examples/four-nodes/start-network.js';
import { decodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { REPO_ROOT, removeDataPath, runCli, tempDataPath, waitFor } from '../helpers/node-process.js';

const CONFIG = join(REPO_ROOT, 'examples/four-nodes/qbftConfigFile.json');

const dir = tempDataPath();
let network: Network | undefined;
test.after.always(async () => {
  await network?.stop(5_000);
  removeDataPath(dir);
});

interface RpcBlock {
  hash: string;
  miner: string;
  extraData: string;
}

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

test('four validators from `operator generate-blockchain-config`, started by the example script, produce one chain together', async (t) => {
  const networkDir = join(dir, 'network');
  const generated = await runCli(['operator', 'generate-blockchain-config', `--config-file=${CONFIG}`, `--to=${networkDir}`, '--private-key-file-name=key']);
  t.is(generated.code, 0, generated.output);
  const addresses = readdirSync(join(networkDir, 'keys')).sort();
  t.is(addresses.length, 4);

  const began = Date.now();
  network = await startNetwork({ networkDir, rpcPort: 0, p2pPort: 0, readyTimeoutMs: 90_000 });
  const { nodes } = network;
  t.deepEqual(nodes.map((node) => node.address), addresses);
  const urls = nodes.map((node) => node.rpcUrl);
  const target = 4;
  t.log(`four nodes serving after ${Date.now() - began} ms`);
  try {
    await waitFor('a full mesh', () => Promise.all(urls.map((url) => rpc<string>(url, 'net_peerCount'))), (counts) => counts.every((c) => c === '0x3'), 60_000);
    t.log(`full mesh after ${Date.now() - began} ms`);
    await waitFor(`height ${target} on every node`, () => Promise.all(urls.map(async (url) => Number(await rpc<string>(url, 'eth_blockNumber')))), (heights) => heights.every((h) => h >= target), 90_000);
  } catch (error) {
    nodes.forEach((node, i) => t.log(`node ${i + 1}:\n${node.output().split('\n').slice(-30).join('\n')}`));
    throw error;
  }
  t.log(`height ${target} everywhere after ${Date.now() - began} ms`);

  const proposers = new Set<string>();
  for (let height = 1; height <= target; height++) {
    const blocks = await Promise.all(urls.map((url) => rpc<RpcBlock>(url, 'eth_getBlockByNumber', [`0x${height.toString(16)}`, false])));
    t.is(new Set(blocks.map((block) => block.hash)).size, 1, `block ${height} is the same block on all four nodes`);
    const extraData = decodeExtraData(Buffer.from(blocks[0]!.extraData.slice(2), 'hex'));
    // Four validators: a block is final with the commit seals of three of them.
    t.true(extraData.seals.length >= 3, `block ${height} carries ${extraData.seals.length} commit seals`);
    t.deepEqual(extraData.validators.map((v) => `0x${Buffer.from(v).toString('hex')}`).sort(), addresses);
    proposers.add(blocks[0]!.miner);
  }
  t.true([...proposers].every((miner) => addresses.includes(miner)), [...proposers].join(', '));
  t.deepEqual(((await rpc<string[]>(urls[0]!, 'qbft_getValidatorsByBlockNumber', ['latest'])) ?? []).sort(), addresses);

  // Each node runs with the key of its folder: its enode is what `public-key export` says of that folder.
  for (const node of nodes) {
    const exported = await runCli(['public-key', 'export', `--data-path=${node.dataPath}`]);
    const enode = await rpc<string>(node.rpcUrl, 'net_enode');
    t.is(`0x${/^enode:\/\/([0-9a-f]{128})@/.exec(enode)?.[1]}\n`, exported.stdout);
    t.is(readFileSync(join(node.dataPath, 'key.pub'), 'utf8'), exported.stdout.trim());
    t.true(readdirSync(node.dataPath).includes('database'));
  }

  const codes = await network.stop();
  network = undefined;
  t.deepEqual(codes, [0, 0, 0, 0]);
});
