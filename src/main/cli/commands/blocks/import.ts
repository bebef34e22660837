// `basalt [NODE OPTIONS] blocks import --from=FILE [--skip-pow-validation-enabled]` (Besu's subcommand): imports
// a file of concatenated RLP blocks into the data path through the chain's normal import path, then exits.
// Node options (--data-path, --genesis-file, --network, ...) may come before the subcommand, as with Besu, or
// after it among the subcommand's own options.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Flags } from '@oclif/core';
import { BasaltCommand, separateNodeOptions } from '../../command.js';
import { CliUsageError, invalidValue, USAGE_ERROR_EXIT_CODE } from '../../errors.js';
import { resolveOptions } from '../../resolve.js';
import type { NodeOptions } from '../../options.js';
import type { ImportProgress, ImportSummary } from '../../../../chain/block-importer.js';
import type recoverSenders from '../../../../../workers/tasks/sender-recovery.task.js';

/** Exit code when the import itself fails (a bad file or block); parameter errors exit 2 like every command. */
export const IMPORT_FAILED_EXIT_CODE = 1;

export interface BlocksImportArgs {
  readonly files: readonly string[];
  readonly skipPowValidation: boolean;
}

// ---------------------------------------------------------------------------------------------
// Progress output
// ---------------------------------------------------------------------------------------------

function rate(count: number | bigint, elapsedMs: number): number {
  return elapsedMs <= 0 ? 0 : (Number(count) * 1000) / elapsedMs;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

function etaSeconds(p: ImportProgress): number {
  const perBlock = p.done === 0 ? Infinity : p.elapsedMs / 1000 / p.done;
  return (p.total - p.done) * perBlock;
}

/** One plain progress line (non-terminal output: logs, CI). */
export function progressLine(p: ImportProgress): string {
  const percent = p.total > 0 ? ` (${((100 * p.done) / p.total).toFixed(1)}%)` : '';
  return (
    `Imported ${p.done}/${p.total} blocks${percent}, head #${p.head.number}, ` +
    `${rate(p.done, p.elapsedMs).toFixed(1)} blocks/s, ${rate(p.transactions, p.elapsedMs).toFixed(1)} tx/s, ` +
    `${(rate(p.gasUsed, p.elapsedMs) / 1e6).toFixed(2)} Mgas/s, ETA ${formatDuration(etaSeconds(p))}`
  );
}

/** A terminal progress bar line (redrawn in place with `\r`). */
export function progressBar(p: ImportProgress, width = 30): string {
  const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  const filled = Math.round(fraction * width);
  const bar = '='.repeat(Math.max(0, filled - 1)) + (filled > 0 ? '>' : '') + ' '.repeat(width - filled);
  return (
    `[${bar}] ${p.done}/${p.total} blocks ${(fraction * 100).toFixed(0)}% | ` +
    `${rate(p.transactions, p.elapsedMs).toFixed(0)} tx/s | ETA ${formatDuration(etaSeconds(p))}`
  );
}

export function summaryLine(s: ImportSummary): string {
  return (
    `Import complete: ${s.imported} blocks imported, ${s.skipped} skipped, ${s.transactions} transactions in ` +
    `${(s.elapsedMs / 1000).toFixed(1)} s (${rate(s.imported, s.elapsedMs).toFixed(1)} blocks/s, ` +
    `${rate(s.transactions, s.elapsedMs).toFixed(1)} tx/s, ${(rate(s.gasUsed, s.elapsedMs) / 1e6).toFixed(2)} Mgas/s). ` +
    `Head #${s.head.number} ${toHex(s.head.hash)}`
  );
}

function toHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

export default class BlocksImportCommand extends BasaltCommand {
  static override summary = 'Import blocks from a file of concatenated RLP blocks.';
  static override description =
    'Node options (--data-path, --genesis-file, --network, ...) may come before `blocks import`, as with Besu, or among its flags.';
  static override usage = '--from=<FILE>[,<FILE>...] [--skip-pow-validation-enabled] [--format=<FORMAT>] [NODE OPTIONS]';
  static override examples = ['<%= config.bin %> --genesis-file=genesis.json --data-path=/var/lib/basalt blocks import --from=chain.blocks'];
  static override flags = {
    from: Flags.string({ summary: 'File containing blocks to import.', helpValue: '<FILE>', multiple: true, delimiter: ',' }),
    'skip-pow-validation-enabled': Flags.boolean({ summary: 'Skip proof of work validation when importing.' }),
    format: Flags.string({ summary: 'The type of data to be imported, possible values are: RLP.', helpValue: '<FORMAT>', default: 'RLP' }),
    version: Flags.boolean({ summary: 'Print version information and exit.' }),
  };
  /** Node options among the flags are taken out before oclif parses (see separateNodeOptions). */
  static override strict = false;

  async run(): Promise<number> {
    const { env, readFile, stdout, stderr, parentArgv } = this.context;
    const { own, nodeArgv } = separateNodeOptions(this.argv, BlocksImportCommand.flags);
    const { flags } = await this.parse({ flags: BlocksImportCommand.flags, strict: true }, own);
    if (flags.version) {
      stdout(this.versionLine());
      return 0;
    }
    if (flags.format.toUpperCase() !== 'RLP') {
      throw invalidValue('--format', `expected one of [RLP] (case-insensitive) but was '${flags.format}'`);
    }
    const files = (flags.from ?? []).filter((file) => file !== '');
    if (files.length === 0) throw new CliUsageError('No files specified to import.');
    const options = resolveOptions([...parentArgv, ...nodeArgv], env, readFile);

    const terminal = process.stderr.isTTY === true;
    try {
      return await importFiles({ files, skipPowValidation: flags['skip-pow-validation-enabled'] }, options, {
        out: stdout,
        progress: terminal ? (p) => stderr(`\r${progressBar(p)}`) : (p) => stdout(`${progressLine(p)}\n`),
        endProgress: terminal ? () => stderr('\n') : () => undefined,
        err: stderr,
      });
    } catch (error) {
      stderr(`Failed to import blocks: ${error instanceof Error ? error.message : String(error)}\n`);
      return USAGE_ERROR_EXIT_CODE;
    }
  }
}

interface ImportOutput {
  out: (text: string) => void;
  err: (text: string) => void;
  progress: (p: ImportProgress) => void;
  endProgress: () => void;
}

/** Opens the chain of the data path, imports every file in order and closes it; resolves with the exit code. */
async function importFiles(args: BlocksImportArgs, options: NodeOptions, output: ImportOutput): Promise<number> {
  // Loaded here so that parameter errors never load RocksDB or the EVM.
  const [{ openOfflineChain }, importer, blockFile, { TaskPool, threadsBesideChain }, { importChecksFor }] = await Promise.all([
    import('../../offline-chain.js'),
    import('../../../../chain/block-importer.js'),
    import('../../../../chain/block-file.js'),
    import('../../../../shared/util/task-pool.js'),
    import('../../../../chain/import-rules.js'),
  ]);
  // Imported blocks keep their gas limits; the revert reasons of their transactions are kept as a node would.
  // Blocks from a file can be imported again: one fsync when the chain closes, not one per block.
  const { chain, genesis, genesisJson, dataPath } = await openOfflineChain(options, true, (message) => output.out(`${message}\n`), {
    revertReasonEnabled: options.revertReasonEnabled,
    syncEachBlock: false,
  });
  const recovery = new TaskPool<typeof recoverSenders>(new URL('../../../../../workers/tasks/sender-recovery.task.js', import.meta.url), {
    workerData: { genesisJson },
    maxThreads: threadsBesideChain(availableParallelism()),
    idleTimeout: 5_000,
  });
  try {
    const checks = await importChecksFor(chain, genesis, args.skipPowValidation);
    output.out(`Importing into ${dataPath}, chain head #${chain.getHead().number} ${toHex(chain.getHead().hash)}\n`);
    for (const file of args.files) {
      let data: Uint8Array;
      try {
        data = new Uint8Array(readFileSync(file));
      } catch (error) {
        output.err(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
        return IMPORT_FAILED_EXIT_CODE;
      }
      output.out(`Importing ${file}\n`);
      try {
        const summary = await importer.importBlocks(chain, blockFile.splitBlocks(data), {
          ...checks,
          total: blockFile.countWholeBlocks(data),
          recoverSenders: (blocks) => recovery.run({ blocks }),
          onProgress: output.progress,
        });
        output.endProgress();
        output.out(`${summaryLine(summary)}\n`);
      } catch (error) {
        output.endProgress();
        if (!(error instanceof importer.ImportFailure)) throw error;
        const head = chain.getHead();
        output.err(`${error.message}\n`);
        output.err(`Import stopped. The database keeps the chain up to block #${head.number} ${toHex(head.hash)}.\n`);
        return IMPORT_FAILED_EXIT_CODE;
      }
    }
    return 0;
  } finally {
    await chain.close();
    await recovery.destroy();
  }
}
