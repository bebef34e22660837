// The database's place in a data path (<data-path>/database), and the move of a database an earlier Basalt
// kept directly in the data path: done whole, resumed after an interruption, refused (with what to do)
// for anything it cannot make sense of — never a new chain beside the old one.
import test from 'ava';
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KvStore } from '../../src/shared/storage/kv-store.js';
import { MOVING_FOLDER, prepareDatabaseLocation, rocksDbFilesIn } from '../../src/chain/database-location.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { openDevChain, proposeAndCommit } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/**
 * A data path as an earlier Basalt left it: the chain's RocksDB files directly in it (that Basalt opened
 * its Chain on the data path itself), two blocks past genesis, and the node key beside them.
 */
async function earlierLayout(): Promise<{ dataPath: string; head: string }> {
  const dataPath = tempDataPath();
  const chain = await openDevChain(dataPath);
  await proposeAndCommit(chain, []);
  await proposeAndCommit(chain, []);
  const head = hex(chain.getHead().hash);
  await chain.close();
  writeFileSync(join(dataPath, 'key'), `0x${'11'.repeat(32)}`);
  return { dataPath, head };
}

async function headAt(location: string): Promise<{ number: bigint; hash: string }> {
  const chain = await openDevChain(location);
  try {
    return { number: chain.getHead().number, hash: hex(chain.getHead().hash) };
  } finally {
    await chain.close();
  }
}

/** Every name under `dir`, with its folder, sorted: what a refusal must leave as it was. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

test('a new data path: the database goes in <data-path>/database, nothing is moved', async (t) => {
  const dataPath = tempDataPath();
  const messages: string[] = [];
  t.is(await prepareDatabaseLocation(dataPath, (m) => messages.push(m)), databasePath(dataPath));
  t.is(databasePath(dataPath), join(dataPath, 'database'));
  t.deepEqual(messages, []);
  // Opening the chain there creates it there, and the data path itself holds no database file.
  t.is((await headAt(databasePath(dataPath))).number, 0n);
  t.deepEqual(rocksDbFilesIn(dataPath), []);
  t.true(existsSync(join(dataPath, 'database', 'CURRENT')));
  // Started again, it stays where it is.
  t.is(await prepareDatabaseLocation(dataPath, (m) => messages.push(m)), databasePath(dataPath));
  t.deepEqual(messages, []);
  removeDataPath(dataPath);
});

test('the database of an earlier layout is moved into <data-path>/database with its chain, the key stays', async (t) => {
  const { dataPath, head } = await earlierLayout();
  t.true(rocksDbFilesIn(dataPath).includes('CURRENT'));
  const messages: string[] = [];
  const location = await prepareDatabaseLocation(dataPath, (m) => messages.push(m));
  t.is(location, databasePath(dataPath));
  t.deepEqual(messages, [`Moving the database of an earlier Basalt from ${dataPath} into ${location} (Besu's data-path layout)`]);
  t.deepEqual(rocksDbFilesIn(dataPath), []);
  t.false(existsSync(join(dataPath, MOVING_FOLDER)));
  t.deepEqual(readdirSync(dataPath).sort(), ['database', 'key']);
  t.deepEqual(await headAt(location), { number: 2n, hash: head });
  removeDataPath(dataPath);
});

test('a move interrupted half-way is finished on the next start', async (t) => {
  const { dataPath, head } = await earlierLayout();
  // As a crash would leave it: the staging folder made, some files in it, CURRENT still in the data path.
  const staging = join(dataPath, MOVING_FOLDER);
  mkdirSync(staging);
  const files = rocksDbFilesIn(dataPath).filter((name) => name !== 'CURRENT');
  for (const name of files.slice(0, Math.ceil(files.length / 2))) renameSync(join(dataPath, name), join(staging, name));
  const messages: string[] = [];
  const location = await prepareDatabaseLocation(dataPath, (m) => messages.push(m));
  t.deepEqual(messages, [`Resuming the interrupted move of the database of an earlier Basalt into ${location}`]);
  t.deepEqual(rocksDbFilesIn(dataPath), []);
  t.false(existsSync(staging));
  t.deepEqual(await headAt(location), { number: 2n, hash: head });
  removeDataPath(dataPath);
});

test('what cannot be told apart is refused with what to do, and left as it was', async (t) => {
  // A database in the data path and another in <data-path>/database.
  const both = await earlierLayout();
  await headAt(databasePath(both.dataPath));
  const before = listing(both.dataPath);
  const twice = await t.throwsAsync(prepareDatabaseLocation(both.dataPath, () => t.fail('nothing to log')));
  t.is(
    twice.message,
    `Data path ${both.dataPath} holds a database directly in it (the layout of an earlier Basalt: CURRENT, MANIFEST-*, *.sst) ` +
      `and another in ${databasePath(both.dataPath)}: keep the one that holds your chain and remove the other`,
  );
  t.deepEqual(listing(both.dataPath), before);

  // An interrupted move beside a database folder.
  mkdirSync(join(both.dataPath, MOVING_FOLDER));
  const moving = await t.throwsAsync(prepareDatabaseLocation(both.dataPath, () => t.fail('nothing to log')));
  t.regex(moving.message, /holds both .*database and .*database\.moving \(an interrupted move of an earlier database\): keep the one that holds your chain/);
  removeDataPath(both.dataPath);

  // Database files without their CURRENT: not a database RocksDB can open, and not to be replaced by a new one.
  const broken = await earlierLayout();
  renameSync(join(broken.dataPath, 'CURRENT'), join(broken.dataPath, 'CURRENT.saved'));
  const listed = listing(broken.dataPath);
  const headless = await t.throwsAsync(prepareDatabaseLocation(broken.dataPath, () => t.fail('nothing to log')));
  t.regex(headless.message, /holds files of a RocksDB database \(.*MANIFEST-\d+.*\) but not its CURRENT file, so it is not a database Basalt can open or move/);
  t.deepEqual(listing(broken.dataPath), listed);
  removeDataPath(broken.dataPath);
});

test('a database an earlier Basalt still has open is not moved', async (t) => {
  const { dataPath, head } = await earlierLayout();
  const running = await KvStore.open(dataPath);
  try {
    const refused = await t.throwsAsync(prepareDatabaseLocation(dataPath, () => t.fail('nothing to log')));
    t.regex(refused.message, /^Cannot move the database of an earlier Basalt into .*database: .*lock/i);
    t.false(existsSync(databasePath(dataPath)));
    t.false(existsSync(join(dataPath, MOVING_FOLDER)));
  } finally {
    await running.close();
  }
  // Once it is closed, the move goes through.
  t.deepEqual(await headAt(await prepareDatabaseLocation(dataPath, () => undefined)), { number: 2n, hash: head });
  removeDataPath(dataPath);
});
