/**
 * `blocks import` end to end with the real CLI: Besu's hive test chain (Frontier rewards and ommers,
 * London + Shanghai withdrawals at 33, a Cancun blob transaction at 34) imports to Besu's head hash
 * with ethash seals verified; malformed files stop with the block and the reason, exit non-zero and
 * leave the database at the last good block.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RLP } from '@ethereumjs/rlp';
import { bytesToHex } from '@ethereumjs/util';
import { BlockFileError, countWholeBlocks, splitBlocks } from '../../src/chain/block-file.js';
import { Chain } from '../../src/chain/chain.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { separateNodeOptions } from '../../src/main/cli/command.js';
import BlocksImportCommand, { progressBar, progressLine } from '../../src/main/cli/commands/blocks/import.js';
import { removeDataPath, runCli, tempDataPath } from '../helpers/node-process.js';
import { TEST_BLOCKS, TEST_GENESIS, importBlocks } from '../helpers/parity-node.js';

const BESU_HEAD = '0x4859ea10d276f6df988eabd48a02e0696cfd3deb769d2a5e0e416a5f3191028a';
const chainFile = new Uint8Array(readFileSync(TEST_BLOCKS));
const slices = [...splitBlocks(chainFile)];

/** The head of the chain stored in `dataPath`, read by opening the database in this process. */
async function storedHead(dataPath: string): Promise<{ number: bigint; hash: string }> {
  const chain = await Chain.open(databasePath(dataPath), await chainSpecFromGenesis(readFileSync(TEST_GENESIS, 'utf8')));
  try {
    const head = chain.getHead();
    return { number: head.number, hash: bytesToHex(head.hash) };
  } finally {
    await chain.close();
  }
}

/** A file of the given encoded blocks. */
function writeBlocks(dataPath: string, name: string, blocks: Uint8Array[]): string {
  const file = join(dataPath, name);
  writeFileSync(file, Buffer.concat(blocks.map((b) => Buffer.from(b))));
  return file;
}

/** Block `index` of the test chain with header field `field` replaced. */
function withHeaderField(index: number, field: number, value: Uint8Array): Uint8Array {
  const [header, ...body] = RLP.decode(slices[index]!.bytes) as unknown as [Uint8Array[], ...unknown[]];
  const changed = [...header];
  changed[field] = value;
  return RLP.encode([changed, ...(body as Uint8Array[])] as never);
}

test('the file splits into the genesis and blocks 1..34', (t) => {
  t.is(slices.length, 35);
  t.is(countWholeBlocks(chainFile), 35);
  t.is(countWholeBlocks(chainFile.subarray(0, chainFile.length - 10)), 34);
  t.throws(() => [...splitBlocks(chainFile.subarray(0, chainFile.length - 10))], { instanceOf: BlockFileError, message: /truncated RLP/ });
  t.throws(() => [...splitBlocks(Uint8Array.of(0x83, 1, 2, 3))], { instanceOf: BlockFileError, message: /expected an RLP list/ });
});

test('the Besu test chain imports with ethash seals verified, to Besu\'s head; a second import skips every block', async (t) => {
  const dataPath = tempDataPath();
  try {
    const first = await importBlocks(dataPath, TEST_BLOCKS);
    t.is(first.code, 0, first.stderr);
    t.regex(first.stdout, /34 blocks imported, 1 skipped, 34 transactions/);
    t.regex(first.stdout, new RegExp(`Head #34 ${BESU_HEAD}`));
    // Not a terminal: plain progress lines.
    t.regex(first.stdout, /Imported \d+\/35 blocks/);
    const again = await importBlocks(dataPath, TEST_BLOCKS);
    t.is(again.code, 0, again.stderr);
    t.regex(again.stdout, /0 blocks imported, 35 skipped/);
    t.deepEqual(await storedHead(dataPath), { number: 34n, hash: BESU_HEAD });
  } finally {
    removeDataPath(dataPath);
  }
});

test('a truncated file imports every whole block, then stops with the reason and exit code 1', async (t) => {
  const dataPath = tempDataPath();
  try {
    const file = writeBlocks(dataPath, 'truncated.blocks', [chainFile.subarray(0, slices[34]!.offset + 40)]);
    const run = await importBlocks(dataPath, file, ['--skip-pow-validation-enabled']);
    t.is(run.code, 1);
    t.regex(run.stderr, /Block at position 34 of the file could not be imported: truncated RLP/);
    t.regex(run.stderr, /database keeps the chain up to block #33/);
    t.is((await storedHead(dataPath)).number, 33n);
    // The database is intact: the full file continues from there.
    const rest = await importBlocks(dataPath, TEST_BLOCKS, ['--skip-pow-validation-enabled']);
    t.is(rest.code, 0, rest.stderr);
    t.deepEqual(await storedHead(dataPath), { number: 34n, hash: BESU_HEAD });
  } finally {
    removeDataPath(dataPath);
  }
});

test('a block with a wrong state root stops the import at that block; the previous head stays', async (t) => {
  const dataPath = tempDataPath();
  try {
    const bad = withHeaderField(5, 3, new Uint8Array(32).fill(0xab));
    const file = writeBlocks(dataPath, 'bad-root.blocks', [...slices.slice(0, 5).map((s) => s.bytes), bad, slices[6]!.bytes]);
    const run = await importBlocks(dataPath, file, ['--skip-pow-validation-enabled']);
    t.is(run.code, 1);
    t.regex(run.stderr, /Block #5 \(0x[0-9a-f]{64}\) could not be imported: invalid block stateRoot, got: 0x[0-9a-f]{64}, want: 0xabab/);
    t.is((await storedHead(dataPath)).number, 4n);
  } finally {
    removeDataPath(dataPath);
  }
});

test('without --skip-pow-validation-enabled a changed header fails its ethash seal', async (t) => {
  const dataPath = tempDataPath();
  try {
    const bad = withHeaderField(2, 14, Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8));
    const file = writeBlocks(dataPath, 'bad-nonce.blocks', [slices[1]!.bytes, bad]);
    const run = await importBlocks(dataPath, file);
    t.is(run.code, 1);
    t.regex(run.stderr, /Block #2 .* could not be imported: invalid ethash seal/);
    t.is((await storedHead(dataPath)).number, 1n);
  } finally {
    removeDataPath(dataPath);
  }
});

test('a block whose parent is unknown is refused and nothing is written', async (t) => {
  const dataPath = tempDataPath();
  try {
    const file = writeBlocks(dataPath, 'orphan.blocks', [slices[3]!.bytes]);
    const run = await importBlocks(dataPath, file, ['--skip-pow-validation-enabled']);
    t.is(run.code, 1);
    t.regex(run.stderr, /Block #3 .* could not be imported: unknown parent block 0x[0-9a-f]{64}/);
    t.regex(run.stderr, /up to block #0 /);
    t.is((await storedHead(dataPath)).number, 0n);
  } finally {
    removeDataPath(dataPath);
  }
});

test('a file that is not there, or no file at all, is reported', async (t) => {
  const dataPath = tempDataPath();
  try {
    const missing = await importBlocks(dataPath, join(dataPath, 'nope.blocks'));
    t.is(missing.code, 1);
    t.regex(missing.stderr, /Cannot read .*nope\.blocks/);
    const none = await runCli([`--data-path=${dataPath}`, `--genesis-file=${TEST_GENESIS}`, 'blocks', 'import']);
    t.is(none.code, 2);
    t.regex(none.stderr, /^No files specified to import\./);
  } finally {
    removeDataPath(dataPath);
  }
});

test('subcommand options are told apart from node options', (t) => {
  const { own, nodeArgv } = separateNodeOptions(
    ['--from', 'a.rlp', '--skip-pow-validation-enabled', '--data-path=/x', '--from=b.rlp,c.rlp', '--rpc-http-api', 'ETH', '--format', 'rlp'],
    BlocksImportCommand.flags,
  );
  t.deepEqual(own, ['--from=a.rlp', '--skip-pow-validation-enabled', '--from=b.rlp,c.rlp', '--format=rlp']);
  t.deepEqual(nodeArgv, ['--data-path=/x', '--rpc-http-api', 'ETH']);
  // picocli's booleans: an optional true/false, attached or as the next word.
  t.deepEqual(separateNodeOptions(['--skip-pow-validation-enabled=false', '--from=a'], BlocksImportCommand.flags).own, ['--from=a']);
  t.deepEqual(separateNodeOptions(['--skip-pow-validation-enabled', 'TRUE', 'x'], BlocksImportCommand.flags), {
    own: ['--skip-pow-validation-enabled'],
    nodeArgv: ['x'],
  });
});

test('the import runs with node options before and after the subcommand; subcommand errors in picocli\'s words', async (t) => {
  const dataPath = tempDataPath();
  try {
    const missingFile = join(dataPath, 'nope.blocks');
    const run = await runCli([`--data-path=${dataPath}`, 'blocks', 'import', `--from=${missingFile}`, `--genesis-file=${TEST_GENESIS}`]);
    t.is(run.code, 1);
    t.true(run.stdout.startsWith(`Importing into ${dataPath}, chain head #0 `), run.stdout);
    t.regex(run.stderr, /^Cannot read .*nope\.blocks/);

    const helpPointer = '\n\nTo display full help:\nbasalt [COMMAND] --help\n';
    const cases: [string[], string][] = [
      [['--from'], "Missing required parameter for option '--from' (<FILE>)"],
      [['--from', '--data-path=x'], "Expected parameter for option '--from' but found '--data-path=x'"],
      [['--from=a', '--format=JSON'], "Invalid value for option '--format': expected one of [RLP] (case-insensitive) but was 'JSON'"],
      [['--from=a', '--skip-pow-validation-enabled=maybe'], "Invalid value for option '--skip-pow-validation-enabled': 'maybe' is not a boolean"],
      [['--from=a', '--rpc-http-port=abc'], "Invalid value for option '--rpc-http-port': 'abc' is not an int"],
    ];
    for (const [args, message] of cases) {
      const bad = await runCli([`--data-path=${dataPath}`, 'blocks', 'import', ...args]);
      t.is(bad.code, 2, args.join(' '));
      t.is(bad.stderr, `${message}${helpPointer}`);
    }
  } finally {
    removeDataPath(dataPath);
  }
});

test('progress is a bar on a terminal and a plain line otherwise', (t) => {
  const progress = {
    done: 50,
    total: 200,
    imported: 49,
    skipped: 1,
    transactions: 500,
    gasUsed: 50_000_000n,
    elapsedMs: 10_000,
    head: { number: 49n, hash: new Uint8Array(32) } as never,
  };
  t.is(progressLine(progress), 'Imported 50/200 blocks (25.0%), head #49, 5.0 blocks/s, 50.0 tx/s, 5.00 Mgas/s, ETA 0:30');
  t.is(progressBar(progress, 20), '[====>               ] 50/200 blocks 25% | 50 tx/s | ETA 0:30');
});
