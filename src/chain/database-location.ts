/**
 * Where the chain's database is in a data path: `<data-path>/database`, as with Besu. Earlier Basalt builds kept
 * RocksDB's files directly in the data path; such a data path is moved into the new layout on its first
 * start, never reinitialised and never left half-moved.
 *
 * Moving rather than refusing: the move is a handful of renames within one file system, so it takes no
 * time and no space, copies nothing and loses nothing, and the operator has nothing to do by hand. It
 * goes through a staging folder so that a crash at any point leaves a state the next start recognises
 * and finishes:
 *   1. RocksDB opens the old database and closes it again: its lock proves that no other process (an
 *      older Basalt still running) has it open, and the open proves it is a database at all;
 *   2. `<data-path>/database.moving/` is created;
 *   3. each RocksDB file is renamed into it, CURRENT last (each rename is atomic, so every file is in
 *      exactly one of the two folders, and together they are always the whole database);
 *   4. `database.moving` is renamed to `database` (atomic): the move is done.
 * A start that finds `database.moving` resumes at step 3. The node key (`<data-path>/key`) has the same
 * place in both layouts and stays where it is, as does anything else an operator keeps there.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { databasePath } from '../shared/util/data-path.js';
import { KvStore } from '../shared/storage/kv-store.js';

/** The staging folder of a move in progress (see above). */
export const MOVING_FOLDER = 'database.moving';

/** The names RocksDB gives the files of a database (its filename.cc): what an earlier data path holds. */
const ROCKSDB_FILE = /^(?:CURRENT|LOCK|IDENTITY|LOG(?:\.old\.\d+)?|MANIFEST-\d+|OPTIONS-\d+(?:\.dbtmp)?|\d+\.(?:log|sst|ldb|blob|dbtmp))$/;

/** RocksDB files directly in `dir`. */
export function rocksDbFilesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && ROCKSDB_FILE.test(entry.name))
    .map((entry) => entry.name);
}

/**
 * The database location of `dataPath` (which must exist), after moving the database of an earlier
 * layout there; `log` hears about a move. Throws, with what to do, for a data path it cannot make sense of.
 */
export async function prepareDatabaseLocation(dataPath: string, log: (message: string) => void): Promise<string> {
  const target = databasePath(dataPath);
  const staging = join(dataPath, MOVING_FOLDER);
  if (existsSync(staging)) {
    if (existsSync(target)) {
      throw new Error(
        `Data path ${dataPath} holds both ${target} and ${staging} (an interrupted move of an earlier database): ` +
          'keep the one that holds your chain and remove the other',
      );
    }
    log(`Resuming the interrupted move of the database of an earlier Basalt into ${target}`);
    finishMove(dataPath, staging, target);
    return target;
  }
  const earlierFiles = rocksDbFilesIn(dataPath);
  if (earlierFiles.length === 0) return target;
  if (!earlierFiles.includes('CURRENT')) {
    throw new Error(
      `Data path ${dataPath} holds files of a RocksDB database (${earlierFiles.sort().join(', ')}) but not its CURRENT file, ` +
        'so it is not a database Basalt can open or move: move those files away or use another --data-path',
    );
  }
  if (existsSync(target)) {
    throw new Error(
      `Data path ${dataPath} holds a database directly in it (the layout of an earlier Basalt: CURRENT, MANIFEST-*, *.sst) ` +
        `and another in ${target}: keep the one that holds your chain and remove the other`,
    );
  }
  try {
    await (await KvStore.open(dataPath)).close();
  } catch (err) {
    throw new Error(`Cannot move the database of an earlier Basalt into ${target}: ${err instanceof Error ? err.message : String(err)}`);
  }
  log(`Moving the database of an earlier Basalt from ${dataPath} into ${target} (Besu's data-path layout)`);
  mkdirSync(staging);
  syncDirectory(dataPath);
  finishMove(dataPath, staging, target);
  return target;
}

function finishMove(dataPath: string, staging: string, target: string): void {
  const files = rocksDbFilesIn(dataPath);
  // CURRENT last: while it is still in the data path it names a manifest that is no longer there, so an
  // earlier Basalt started on the data path meanwhile fails to open it rather than creating a new chain.
  const ordered = [...files.filter((name) => name !== 'CURRENT'), ...files.filter((name) => name === 'CURRENT')];
  for (const name of ordered) renameSync(join(dataPath, name), join(staging, name));
  syncDirectory(staging);
  syncDirectory(dataPath);
  renameSync(staging, target);
  syncDirectory(dataPath);
}

/** Makes the renames in `dir` durable: without it a power cut may undo them in any order. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch (err) {
    // Some platforms cannot fsync a directory; there the renames are as durable as the file system makes them.
    if (!['EISDIR', 'EINVAL', 'EPERM', 'EBADF'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    closeSync(fd);
  }
}
