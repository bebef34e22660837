// `basalt [NODE OPTIONS] blocks export [--start-block=<LONG>] [--end-block=<LONG>] --to=<FILE>` (Besu's
// subcommand): writes canonical blocks of the data path's chain, as concatenated RLP blocks (what
// `blocks import` reads), from --start-block (default 0, the genesis) up to --end-block, exclusive (default:
// through the chain head). The database is read in this process, so the node must not be running on it.

import { closeSync, openSync, writeSync } from 'node:fs';
import { Flags } from '@oclif/core';
import { bigLong } from '../../kinds.js';
import { CliUsageError, invalidValue } from '../../errors.js';
import { BasaltSubcommand, CommandFailure, VERSION_FLAG, requireOptions } from '../../subcommand.js';
import { errorMessage } from '../../../../shared/util/errors.js';
import type { ExportPlan, ExportRange } from '../../../../chain/block-exporter.js';
import type { NodeOptions } from '../../options.js';

const LONG = '<LONG>';

const EXPORT_FLAGS = {
  'start-block': Flags.string({ summary: 'The starting index of the block, or block list to export (default: 0, the genesis block).', helpValue: LONG }),
  'end-block': Flags.string({
    summary: 'The ending index of the block list to export (exclusive). If not specified, every block from the start block to the chain head is exported.',
    helpValue: LONG,
  }),
  to: Flags.string({ summary: 'File to write the block list to.', helpValue: '<FILE>' }),
  format: Flags.string({ summary: 'The format to export, possible values are: RLP.', helpValue: '<FORMAT>', default: 'RLP', hidden: true }),
  ...VERSION_FLAG,
};

/** A block number option: a Java long as picocli reads it, never negative (Besu's messages). */
function blockNumber(name: 'start-block' | 'end-block', text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const value = bigLong(LONG).convert(text, { name: `--${name}`, longestName: `--${name}`, paramLabel: LONG });
  if (value < 0n) throw new CliUsageError(`Parameter --${name} (${value}) must be greater than or equal to zero.`);
  return value;
}

/** The range the flags ask for, checked as Besu checks it before opening the database. */
export function exportRange(flags: { readonly 'start-block'?: string; readonly 'end-block'?: string }): ExportRange {
  const start = blockNumber('start-block', flags['start-block']);
  const end = blockNumber('end-block', flags['end-block']);
  if (end !== undefined && end <= (start ?? 0n)) {
    throw new CliUsageError(`Parameter --end-block (${end}) must be greater than start block (${start ?? 0n}).`);
  }
  return { start: start ?? 0n, ...(end !== undefined ? { end } : {}) };
}

export default class BlocksExportCommand extends BasaltSubcommand {
  static override summary = 'Export blocks from the database as RLP blocks.';
  static override description =
    'Node options (--data-path, --genesis-file, --network, ...) may come before `blocks export`, as with Besu, or among its flags. ' +
    'The node must be stopped: the database is read by this command. The file is what `blocks import` reads.';
  static override usage = '[--start-block=<LONG>] [--end-block=<LONG>] --to=<FILE> [NODE OPTIONS]';
  static override examples = ['<%= config.bin %> --genesis-file=genesis.json --data-path=/var/lib/basalt blocks export --start-block=100 --end-block=300 --to=chain.blocks'];
  static override flags = EXPORT_FLAGS;

  async run(): Promise<number> {
    const { flags, options } = await this.parseWithNodeOptions(EXPORT_FLAGS);
    if (this.versionShown(flags)) return 0;
    if (flags.format.toUpperCase() !== 'RLP') throw invalidValue('--format', `expected one of [RLP] (case-insensitive) but was '${flags.format}'`);
    requireOptions(flags, { to: '<FILE>' });
    const to = flags.to!;
    const range = exportRange(flags);
    const { stdout, stderr } = this.context;
    return this.reporting(async () => {
      try {
        return await this.exportTo(to, range, options);
      } catch (error) {
        if (error instanceof CliUsageError || error instanceof CommandFailure) throw error;
        throw new CommandFailure(`Failed to export blocks: ${errorMessage(error)}`);
      }
    });
  }

  private async exportTo(to: string, range: ExportRange, options: NodeOptions): Promise<number> {
    const { stdout, stderr } = this.context;
    const [{ openOfflineChain }, { exportBlocks, planExport, ExportRangeError }] = await Promise.all([
      import('../../offline-chain.js'),
      import('../../../../chain/block-exporter.js'),
    ]);
    const { chain, dataPath } = await openOfflineChain(options, false, (message) => stdout(`${message}\n`));
    try {
      const head = chain.getHead().number;
      let plan: ExportPlan;
      try {
        plan = planExport(head, range);
      } catch (error) {
        throw error instanceof ExportRangeError ? new CommandFailure(error.message) : error;
      }
      let file: number;
      try {
        file = openSync(to, 'w');
      } catch (error) {
        throw new CommandFailure(`Unable to write to ${to}: ${errorMessage(error)}`);
      }
      try {
        stdout(`Exporting blocks from ${dataPath} (chain head #${head}) to ${to}\n`);
        const summary = await exportBlocks({ head, canonicalBlockRlp: (n) => chain.store.getCanonicalBlockRlp(n) }, plan, (rlp) => {
          writeSync(file, rlp);
        });
        if (plan.cutAtHead !== undefined) {
          stderr(`Unable to export blocks [${plan.first} - ${plan.cutAtHead}). Blocks found [${plan.first} - ${plan.end}): the chain head is #${head}.\n`);
        }
        stdout(`Exported ${summary.exported} blocks (#${summary.first} to #${summary.last}, ${summary.bytes} bytes) to ${to}\n`);
        return 0;
      } finally {
        closeSync(file);
      }
    } finally {
      await chain.close();
    }
  }
}
