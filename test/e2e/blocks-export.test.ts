/**
 * `blocks export` end to end with the real CLI, on Besu's hive test chain imported by `blocks import`:
 * the whole chain comes out byte for byte as the file it was imported from (genesis first, as Besu
 * exports it), a range comes out as exactly those blocks, and bad ranges, a missing data path, a
 * start beyond the head and an unwritable file are each reported clearly.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitBlocks } from '../../src/chain/block-file.js';
import { removeDataPath, runCli, tempDataPath } from '../helpers/node-process.js';
import { TEST_BLOCKS, TEST_GENESIS, importBlocks } from '../helpers/parity-node.js';

const chainFile = new Uint8Array(readFileSync(TEST_BLOCKS));
const slices = [...splitBlocks(chainFile)];
let dataPath: string;

test.before(async () => {
  dataPath = tempDataPath();
  const imported = await importBlocks(dataPath, TEST_BLOCKS);
  if (imported.code !== 0) throw new Error(`import failed: ${imported.stderr}`);
});

test.after.always(() => {
  if (dataPath) removeDataPath(dataPath);
});

function exportBlocks(args: string[], path = dataPath) {
  return runCli([`--data-path=${path}`, `--genesis-file=${TEST_GENESIS}`, 'blocks', 'export', ...args]);
}

test.serial('the whole chain exports as the file it was imported from, genesis first', async (t) => {
  const file = join(dataPath, 'all.blocks');
  const run = await exportBlocks([`--to=${file}`]);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, new RegExp(`Exported 35 blocks \\(#0 to #34, ${chainFile.length} bytes\\) to ${file}`));
  t.deepEqual(new Uint8Array(readFileSync(file)), chainFile);
});

test.serial('a range: --start-block inclusive, --end-block exclusive; node options may follow the subcommand', async (t) => {
  const file = join(dataPath, 'range.blocks');
  const run = await runCli(['blocks', 'export', '--start-block=5', '--end-block', '9', `--to=${file}`, `--data-path=${dataPath}`, `--genesis-file=${TEST_GENESIS}`]);
  t.is(run.code, 0, run.stderr);
  const exported = [...splitBlocks(new Uint8Array(readFileSync(file)))].map((s) => s.bytes);
  t.deepEqual(exported, slices.slice(5, 9).map((s) => s.bytes));
  // Only a start: through the head.
  const tail = await exportBlocks(['--start-block=30', `--to=${file}`]);
  t.is(tail.code, 0, tail.stderr);
  t.deepEqual([...splitBlocks(new Uint8Array(readFileSync(file)))].map((s) => s.bytes), slices.slice(30).map((s) => s.bytes));
});

test.serial('an end beyond the head exports up to the head and says so', async (t) => {
  const file = join(dataPath, 'beyond.blocks');
  const run = await exportBlocks(['--start-block=33', '--end-block=100', `--to=${file}`]);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stderr, /Unable to export blocks \[33 - 100\)\. Blocks found \[33 - 35\): the chain head is #34\./);
  t.deepEqual([...splitBlocks(new Uint8Array(readFileSync(file)))].map((s) => s.bytes), slices.slice(33).map((s) => s.bytes));
});

test.serial('bad ranges and a missing --to are parameter errors (exit 2) and open nothing', async (t) => {
  const file = join(dataPath, 'never.blocks');
  const cases: [string[], RegExp][] = [
    [['--start-block=-1', `--to=${file}`], /^Parameter --start-block \(-1\) must be greater than or equal to zero\./],
    [['--end-block=-3', `--to=${file}`], /^Parameter --end-block \(-3\) must be greater than or equal to zero\./],
    [['--start-block=9', '--end-block=9', `--to=${file}`], /^Parameter --end-block \(9\) must be greater than start block \(9\)\./],
    [['--end-block=0', `--to=${file}`], /^Parameter --end-block \(0\) must be greater than start block \(0\)\./],
    [['--start-block=ten', `--to=${file}`], /^Invalid value for option '--start-block': 'ten' is not a long/],
    [[], /^Missing required option: '--to=<FILE>'/],
    [['--format=JSON', `--to=${file}`], /^Invalid value for option '--format': expected one of \[RLP\]/],
  ];
  for (const [args, message] of cases) {
    const run = await exportBlocks(args);
    t.is(run.code, 2, args.join(' '));
    t.regex(run.stderr, message, args.join(' '));
    t.regex(run.stderr, /To display full help:/);
  }
  t.false(existsSync(file));
});

test.serial('a data path without a database is a parameter error; nothing is created there', async (t) => {
  const empty = tempDataPath();
  try {
    const file = join(empty, 'out.blocks');
    const run = await exportBlocks([`--to=${file}`], empty);
    t.is(run.code, 2);
    t.regex(run.stderr, new RegExp(`^Invalid parameter --data-path \\(${empty}\\)\\. Database does not exist\\.`));
    t.false(existsSync(join(empty, 'database')));
    t.false(existsSync(file));
    const gone = await exportBlocks([`--to=${file}`], join(empty, 'nowhere'));
    t.is(gone.code, 2);
    t.regex(gone.stderr, /Database does not exist/);
    t.false(existsSync(join(empty, 'nowhere')));
  } finally {
    removeDataPath(empty);
  }
});

test.serial('a start beyond the head, or a file that cannot be written, fails (exit 1) with the reason', async (t) => {
  const file = join(dataPath, 'late.blocks');
  const late = await exportBlocks(['--start-block=35', `--to=${file}`]);
  t.is(late.code, 1);
  t.regex(late.stderr, /^Start block 35 is beyond the chain head #34: there is nothing to export/);
  t.false(existsSync(file), 'no file for nothing');
  const unwritable = await exportBlocks([`--to=${join(dataPath, 'no-such-dir', 'x.blocks')}`]);
  t.is(unwritable.code, 1);
  t.regex(unwritable.stderr, /^Unable to write to .*no-such-dir\/x\.blocks: ENOENT/);
});

test.serial('another chain\'s genesis is refused', async (t) => {
  const file = join(dataPath, 'other.blocks');
  const run = await runCli([`--data-path=${dataPath}`, '--network=dev', 'blocks', 'export', `--to=${file}`]);
  t.is(run.code, 1);
  t.regex(run.stderr, /^Failed to export blocks: the data path holds a chain with genesis 0x[0-9a-f]{64}, not 0x[0-9a-f]{64}: use another --data-path/);
});
