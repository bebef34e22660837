// What Besu's small subcommands (`public-key export`, `rlp encode`, `operator generate-blockchain-config`)
// share: node options before or among their flags, picocli's messages for missing required options, the
// `--to` convention for output, and the two kinds of failure with their exit codes:
//   2  a parameter error (CliUsageError): the message, then Besu's pointer to the help;
//   1  the command was understood but could not be carried out (CommandFailure): the message alone,
//      as picocli reports an exception from a command's run (its exitCodeOnExecutionException).

import { writeFileSync } from 'node:fs';
import { Flags, type Interfaces } from '@oclif/core';
import { BasaltCommand, separateNodeOptions } from './command.js';
import { CliUsageError } from './errors.js';
import type { NodeOptions } from './options.js';
import { resolveOptions } from './resolve.js';
import { errorMessage } from '../../shared/util/errors.js';

/** Exit code of a command that failed while running (picocli's `exitCodeOnExecutionException`). */
export const EXECUTION_FAILED_EXIT_CODE = 1;

/** A failure while running a command whose parameters were fine. */
export class CommandFailure extends Error {}

/** Every subcommand takes `--version`, as Besu's (picocli's mixinStandardHelpOptions). */
export const VERSION_FLAG = { version: Flags.boolean({ summary: 'Print version information and exit.' }) };

/** picocli's message for required options not given; `required` maps each flag to its parameter label. */
export function requireOptions(given: Readonly<Record<string, unknown>>, required: Readonly<Record<string, string>>): void {
  const missing = Object.entries(required)
    .filter(([name]) => given[name] === undefined)
    .map(([name, label]) => `'--${name}=${label}'`);
  if (missing.length === 1) throw new CliUsageError(`Missing required option: ${missing[0]}`);
  if (missing.length > 1) throw new CliUsageError(`Missing required options: ${missing.join(', ')}`);
}

export abstract class BasaltSubcommand extends BasaltCommand {
  /** Node options among the flags are taken out before oclif parses (see separateNodeOptions). */
  static override strict = false;

  /**
   * The command's own flags, parsed by oclif, and the node options given before the subcommand or among
   * its flags, resolved as the node would (an unknown option is picocli's usage error).
   */
  protected async parseWithNodeOptions<F extends Record<string, unknown>>(flags: Interfaces.FlagInput<F>): Promise<{ flags: F; options: NodeOptions }> {
    const { env, readFile, parentArgv } = this.context;
    const { own, nodeArgv } = separateNodeOptions(this.argv, flags as Parameters<typeof separateNodeOptions>[1]);
    const parsed = await this.parse<F, Record<string, unknown>, Record<string, unknown>>({ flags, strict: true }, own);
    return { flags: parsed.flags, options: resolveOptions([...parentArgv, ...nodeArgv], env, readFile) };
  }

  /**
   * The command's own flags, for a command that takes no node options after its name (`rlp encode`,
   * `operator generate-blockchain-config`): any other word is picocli's usage error.
   */
  protected async parseOwnFlags<F extends Record<string, unknown>>(flags: Interfaces.FlagInput<F>): Promise<F> {
    const { own, nodeArgv } = separateNodeOptions(this.argv, flags as Parameters<typeof separateNodeOptions>[1]);
    const options = nodeArgv.filter((word) => word.startsWith('-'));
    if (options.length > 0) throw new CliUsageError(`Unknown option${options.length > 1 ? 's' : ''}: ${options.map((word) => `'${word}'`).join(', ')}`);
    const stray = nodeArgv[0];
    if (stray !== undefined) {
      // picocli counts from the first word of the command line.
      const index = this.context.parentArgv.length + (this.id?.split(':').length ?? 0) + this.argv.indexOf(stray);
      throw new CliUsageError(`Unmatched argument at index ${index}: '${stray}'`);
    }
    return (await this.parse<F, Record<string, unknown>, Record<string, unknown>>({ flags, strict: true }, own)).flags;
  }

  /** Prints the version line when `--version` was given; true when it was (the command then ends, exit 0). */
  protected versionShown(flags: { readonly version?: boolean }): boolean {
    if (flags.version === true) this.context.stdout(this.versionLine());
    return flags.version === true;
  }

  /** Runs `body`, reporting a CommandFailure as a message and exit code 1; parameter errors go to main(). */
  protected async reporting(body: () => Promise<number>): Promise<number> {
    try {
      return await body();
    } catch (error) {
      if (!(error instanceof CommandFailure)) throw error;
      this.context.stderr(`${error.message}\n`);
      return EXECUTION_FAILED_EXIT_CODE;
    }
  }

  /**
   * Besu's output convention: to standard output with a newline, or into the `--to` file without one.
   * `failure` makes the error for a file that cannot be written (by default a CommandFailure).
   */
  protected writeResult(text: string, to: string | undefined, failure = (reason: string): Error => new CommandFailure(`Unable to write to ${to}: ${reason}`)): void {
    if (to === undefined) {
      this.context.stdout(`${text}\n`);
      return;
    }
    try {
      writeFileSync(to, text);
    } catch (error) {
      throw failure(errorMessage(error));
    }
  }
}
