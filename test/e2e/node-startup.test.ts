/**
 * Start-up refusals: each bad configuration ends the process with exit code 2 and one clear line,
 * before anything is written.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type rocksdbModule from 'rocksdb';
import { loadRocksdb } from '../../src/shared/storage/rocksdb-binding.js';
import { metaKey, MetaKey, SCHEMA_VERSION } from '../../src/chain/storage-schema.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { removeDataPath, runCli, startNode, tempDataPath } from '../helpers/node-process.js';

/** A node start that is expected to fail; devp2p off unless asked for (never the default port 30303). */
function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const p2p = args.some((a) => a.startsWith('--p2p-')) ? [] : ['--p2p-enabled=false'];
  return runCli([...args, ...p2p], { timeoutMs: 30_000 });
}

test('the default network (mainnet) is refused with a pointer to --genesis-file and --network=dev', async (t) => {
  const dataPath = tempDataPath();
  const { code, output } = await run([`--data-path=${dataPath}`]);
  removeDataPath(dataPath);
  t.is(code, 2);
  t.regex(output, /Failed to start Basalt: Network MAINNET is not supported by Basalt.*--genesis-file=<file> or --network=dev/);
});

test('a missing or malformed genesis file is refused with its reason', async (t) => {
  const dataPath = tempDataPath();
  const missing = await run([`--genesis-file=${join(dataPath, 'nope.json')}`, `--data-path=${dataPath}`]);
  t.is(missing.code, 2);
  t.regex(missing.output, /Failed to start Basalt: Unable to load genesis file .*nope\.json: file not found/);

  const badPath = join(dataPath, 'bad.json');
  writeFileSync(badPath, '{"config":{"chainId":5,"qbft":{}},"gasLimit":"zz","difficulty":"0x1"}');
  const bad = await run([`--genesis-file=${badPath}`, `--data-path=${dataPath}`]);
  t.is(bad.code, 2);
  t.regex(bad.output, /Failed to start Basalt: Unable to load genesis file .*bad\.json: .*gaslimit.*"zz"/i);
  removeDataPath(dataPath);
});

test('a node key file not in Besu\'s format is refused, naming the file', async (t) => {
  const dataPath = tempDataPath();
  const keyPath = join(dataPath, 'node.key');
  writeFileSync(keyPath, 'not a key\n');
  const given = await run(['--network=dev', `--node-private-key-file=${keyPath}`, `--data-path=${dataPath}`]);
  t.is(given.code, 2);
  t.true(given.output.includes(`Failed to start Basalt: Private key cannot be loaded from file ${keyPath}: expected 64 hex digits (0x optional) and nothing else`), given.output);

  const missing = await run(['--network=dev', `--node-private-key-file=${join(dataPath, 'absent.key')}`, `--data-path=${dataPath}`]);
  t.is(missing.code, 2);
  t.true(missing.output.includes(`Failed to start Basalt: Private key file doesn't exist: ${join(dataPath, 'absent.key')}`), missing.output);
  removeDataPath(dataPath);
});

test('a busy devp2p port is refused with Besu\'s message', async (t) => {
  const node = await startNode({ p2p: true });
  const p2pPort = node.p2pPort!;
  const other = tempDataPath();
  try {
    const busy = await run(['--network=dev', '--rpc-http-enabled', '--rpc-http-port=0', `--p2p-interface=127.0.0.1`, `--p2p-port=${p2pPort}`, `--data-path=${other}`]);
    t.is(busy.code, 2);
    t.regex(busy.output, new RegExp(`Port\\(s\\) '\\[${p2pPort}\\]' already in use`));
  } finally {
    t.is(await node.stop(), 0);
    removeDataPath(other);
    removeDataPath(node.dataPath);
  }
});

test('a busy JSON-RPC port, a data path in use and a data path of another chain are refused', async (t) => {
  const node = await startNode();
  try {
    const other = tempDataPath();
    const busyPort = await run(['--network=dev', '--rpc-http-enabled', `--rpc-http-port=${node.port}`, `--data-path=${other}`]);
    t.is(busyPort.code, 2);
    t.regex(busyPort.output, new RegExp(`Port\\(s\\) '\\[${node.port}\\]' already in use\\. Check for other processes using the port\\(s\\)\\.`));

    const locked = await run(['--network=dev', '--rpc-http-enabled', '--rpc-http-port=0', `--data-path=${node.dataPath}`]);
    t.is(locked.code, 2);
    t.regex(locked.output, /Failed to start Basalt: Data path .* is in use by another process/);
    removeDataPath(other);
  } finally {
    t.is(await node.stop(), 0);
  }
  // The dev chain's data path, opened with a different genesis.
  const genesisPath = join(tempDataPath(), 'other.json');
  writeFileSync(
    genesisPath,
    JSON.stringify({
      config: { chainId: 4242, berlinBlock: 0, qbft: { blockperiodseconds: 2 } },
      nonce: '0x0',
      timestamp: '0x65000000',
      gasLimit: '0x47b760',
      difficulty: '0x1',
      mixHash: '0x63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365',
      coinbase: '0x0000000000000000000000000000000000000000',
      alloc: {},
      extraData: '0xf83ea00000000000000000000000000000000000000000000000000000000000000000d594fe3b557e8fb62b89f4916b721be55ceb828dbd73c080c0',
    }),
  );
  const wrongChain = await run([`--genesis-file=${genesisPath}`, `--data-path=${node.dataPath}`]);
  t.is(wrongChain.code, 2);
  t.regex(wrongChain.output, /Failed to start Basalt: the data path holds a chain with genesis 0x[0-9a-f]{64}, not 0x[0-9a-f]{64}: use another --data-path/);
  removeDataPath(node.dataPath);
});

// ---------------------------------------------------------------------------------------------
// The database's schema version, checked on open
// ---------------------------------------------------------------------------------------------

type Database = ReturnType<typeof rocksdbModule.default>;

/** The database at `path` opened directly (the node must not be running): runs `use`, then closes it. */
async function withDatabase<T>(path: string, use: (db: Database) => Promise<T>): Promise<T> {
  // Loaded as the node loads it (src/shared/storage/rocksdb-binding.ts); typed by its own typings.
  const rocksdb = (await loadRocksdb()) as unknown as typeof rocksdbModule.default;
  const db = rocksdb(path);
  await new Promise<void>((resolve, reject) => db.open({ createIfMissing: false }, (err) => (err ? reject(err) : resolve())));
  try {
    return await use(db);
  } finally {
    await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
  }
}

/** Every key and value in the database, hex-encoded. */
function snapshot(db: Database): Promise<Map<string, string>> {
  const entries = new Map<string, string>();
  const iterator = db.iterator({ keyAsBuffer: true, valueAsBuffer: true });
  return new Promise((resolve, reject) => {
    const next = (): void => {
      iterator.next((err, key, value) => {
        if (err) return iterator.end(() => reject(err));
        if (key === undefined) return iterator.end(() => resolve(entries));
        entries.set((key as Buffer).toString('hex'), (value as Buffer).toString('hex'));
        next();
      });
    };
    next();
  });
}

const VERSION_KEY = Buffer.from(metaKey(MetaKey.schemaVersion));

function setVersion(db: Database, value: Buffer | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | undefined): void => (err ? reject(err) : resolve());
    if (value === undefined) db.del(VERSION_KEY, done);
    else db.put(VERSION_KEY, value, done);
  });
}

test('a database of another schema version, or of none, is refused on start without being changed', async (t) => {
  const node = await startNode();
  const dataPath = node.dataPath;
  const database = databasePath(dataPath);
  try {
    const head = await node.rpc<{ number: string; hash: string }>('eth_getBlockByNumber', ['latest', false]);
    t.is(await node.stop(), 0);
    const written = await withDatabase(database, async (db) => {
      const entries = await snapshot(db);
      t.is(entries.get(VERSION_KEY.toString('hex')), SCHEMA_VERSION.toString(16).padStart(2, '0'), 'the node wrote the current version');
      await setVersion(db, Buffer.from([99]));
      return snapshot(db);
    });

    const newer = await run(['--network=dev', `--data-path=${dataPath}`]);
    t.is(newer.code, 2);
    t.true(
      newer.output.includes(
        `Failed to start Basalt: Database at ${database} was written by schema version 99; this Basalt reads version ${SCHEMA_VERSION}. Use a new --data-path or re-import the chain.`,
      ),
      newer.output,
    );
    t.deepEqual(await withDatabase(database, snapshot), written, 'nothing was written');

    const unversioned = await withDatabase(database, async (db) => {
      await setVersion(db, undefined);
      return snapshot(db);
    });
    const none = await run(['--network=dev', `--data-path=${dataPath}`]);
    t.is(none.code, 2);
    t.true(
      none.output.includes(
        `Failed to start Basalt: Database at ${database} holds a chain but no schema version, so Basalt did not write it; this Basalt reads version ${SCHEMA_VERSION}. Use a new --data-path or re-import the chain.`,
      ),
      none.output,
    );
    t.deepEqual(await withDatabase(database, snapshot), unversioned, 'nothing was written');

    // With its version back, the same database opens and serves the chain it holds.
    await withDatabase(database, (db) => setVersion(db, Buffer.from([Number(SCHEMA_VERSION)])));
    const again = await startNode({ dataPath });
    try {
      t.is((await again.rpc<{ hash: string }>('eth_getBlockByNumber', [head.number, false])).hash, head.hash);
    } finally {
      t.is(await again.stop(), 0);
    }
  } finally {
    await node.kill();
    removeDataPath(dataPath);
  }
});
