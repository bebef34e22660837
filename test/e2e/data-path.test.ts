// Besu's data-path layout on real node processes: the node key created on first start (mode 0600) with its
// public key beside it, the same key on every later start and in `public-key export`; the database in
// <data-path>/database; a data path of an earlier Basalt (database files directly in it) moved there with its
// chain on the next start, and one that holds both layouts refused without a change.
import test from 'ava';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rocksDbFilesIn } from '../../src/chain/database-location.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { REPO_ROOT, removeDataPath, runCli, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const DEV_GENESIS = join(REPO_ROOT, 'genesis/dev.json');

const started: NodeProcess[] = [];
const paths: string[] = [];
test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  for (const path of paths) removeDataPath(path);
});

function newDataPath(): string {
  const path = tempDataPath();
  paths.push(path);
  return path;
}

async function start(options: Parameters<typeof startNode>[0]): Promise<NodeProcess> {
  const node = await startNode(options);
  started.push(node);
  return node;
}

const nodeIdIn = (enode: string): string | undefined => /^enode:\/\/([0-9a-f]{128})@/.exec(enode)?.[1];

test('first start: <data-path>/key (0600) and key.pub are created; the node, a restart and public-key export agree on them', async (t) => {
  // A data path whose folder does not exist yet.
  const dataPath = join(newDataPath(), 'node');
  // A custom genesis: the node key is <data-path>/key (the dev network would use its validator's key).
  const node = await start({ genesis: DEV_GENESIS, dataPath, p2p: true, args: ['--rpc-http-api=ETH,NET,ADMIN', '--discovery-enabled=false'] });
  const nodeId = nodeIdIn(await node.rpc<string>('net_enode'));
  t.is(await node.stop(), 0);

  const key = readFileSync(join(dataPath, 'key'), 'utf8');
  t.regex(key, /^0x[0-9a-f]{64}$/, 'Besu\'s format: 0x + 64 lowercase hex digits, no newline');
  t.is(statSync(join(dataPath, 'key')).mode & 0o777, 0o600);
  t.is(readFileSync(join(dataPath, 'key.pub'), 'utf8'), `0x${nodeId}`);
  t.true(existsSync(join(databasePath(dataPath), 'CURRENT')));
  t.deepEqual(rocksDbFilesIn(dataPath), [], 'no database file directly in the data path');

  const exported = await runCli([`--data-path=${dataPath}`, 'public-key', 'export']);
  t.is(exported.code, 0, exported.stderr);
  t.is(exported.stdout, `0x${nodeId}\n`);

  // A key.pub that does not match the key is rewritten; the key itself never is.
  writeFileSync(join(dataPath, 'key.pub'), '0x00');
  const again = await start({ genesis: DEV_GENESIS, dataPath, p2p: true, args: ['--rpc-http-api=ETH,NET,ADMIN', '--discovery-enabled=false'] });
  t.is(nodeIdIn(await again.rpc<string>('net_enode')), nodeId);
  t.is(await again.stop(), 0);
  t.is(readFileSync(join(dataPath, 'key'), 'utf8'), key);
  t.is(readFileSync(join(dataPath, 'key.pub'), 'utf8'), `0x${nodeId}`);
});

/** Rewrites a data path of this Basalt into the earlier layout: the database files directly in it. */
function toEarlierLayout(dataPath: string): void {
  const database = databasePath(dataPath);
  for (const name of readdirSync(database)) renameSync(join(database, name), join(dataPath, name));
  rmSync(database, { recursive: true });
}

const blockHash = async (node: NodeProcess, number: number): Promise<string> =>
  (await node.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).hash;

test('a data path of an earlier Basalt is moved into <data-path>/database on start and its chain goes on', async (t) => {
  const dataPath = newDataPath();
  const first = await start({ dataPath });
  const height = Number((await waitFor('three blocks', () => first.rpc<string>('eth_blockNumber'), (n) => Number(n) >= 3, 30_000)));
  const hash = await blockHash(first, height);
  t.is(await first.stop(), 0);

  toEarlierLayout(dataPath);
  t.true(rocksDbFilesIn(dataPath).includes('CURRENT'));
  t.false(existsSync(databasePath(dataPath)));

  const second = await start({ dataPath });
  // The move is logged before the node serves.
  t.true(second.output().includes(`Moving the database of an earlier Basalt from ${dataPath} into ${databasePath(dataPath)}`), second.output());
  t.is(await blockHash(second, height), hash, 'the same chain, not a new one');
  await waitFor('a block past the old head', () => second.rpc<string>('eth_blockNumber'), (n) => Number(n) > height, 30_000);
  t.is(await second.stop(), 0);
  t.deepEqual(rocksDbFilesIn(dataPath), []);
  t.true(existsSync(join(databasePath(dataPath), 'CURRENT')));
});

test('a data path holding both layouts is refused with what to do, and nothing in it changes', async (t) => {
  const dataPath = newDataPath();
  const other = newDataPath();
  for (const path of [dataPath, other]) t.is(await (await start({ dataPath: path })).stop(), 0);
  // The database of another node put directly in this data path, beside its own database folder.
  toEarlierLayout(other);
  for (const name of rocksDbFilesIn(other)) renameSync(join(other, name), join(dataPath, name));
  const before = readdirSync(dataPath, { recursive: true, encoding: 'utf8' }).sort();

  const refused = await runCli(['--network=dev', `--data-path=${dataPath}`, '--p2p-enabled=false'], { timeoutMs: 60_000 });
  t.is(refused.code, 2);
  t.true(
    refused.output.includes(
      `Failed to start Basalt: Data path ${dataPath} holds a database directly in it (the layout of an earlier Basalt: CURRENT, MANIFEST-*, *.sst) ` +
        `and another in ${databasePath(dataPath)}: keep the one that holds your chain and remove the other`,
    ),
    refused.output,
  );
  t.deepEqual(readdirSync(dataPath, { recursive: true, encoding: 'utf8' }).sort(), before);
});
