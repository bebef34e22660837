// `basalt password` (Besu's subcommand group): alone it prints its usage and exits 0, as Besu does; its one
// action is `password hash` (hash.ts).

import { BasaltCommand } from '../../command.js';
import { CliUsageError } from '../../errors.js';

export const PASSWORD_SUMMARY = 'This command provides password related actions.';
export const PASSWORD_HASH_SUMMARY = 'This command generates the hash of a given password.';

/** picocli's usage of Besu's `password` command, with Basalt's name. */
export function passwordUsage(bin: string): string {
  return [
    'Usage:',
    '',
    `${bin} password [-hV] [COMMAND]`,
    '',
    'Description:',
    '',
    PASSWORD_SUMMARY,
    '',
    'Options:',
    '  -h, --help      Show this help message and exit.',
    '  -V, --version   Print version information and exit.',
    '',
    'Commands:',
    `  hash  ${PASSWORD_HASH_SUMMARY}`,
    '',
  ].join('\n');
}

export default class PasswordCommand extends BasaltCommand {
  static override summary = PASSWORD_SUMMARY;
  static override usage = 'password [-hV] [COMMAND]';
  /** Stray words get Besu's message rather than oclif's. */
  static override strict = false;

  async run(): Promise<number> {
    const { stdout, parentArgv } = this.context;
    // No flags to parse: the words are read as picocli would (a version request, or a stray word).
    this.parsed = true;
    const stray = this.argv[0];
    if (stray === '-V' || stray === '--version') {
      stdout(this.versionLine());
      return 0;
    }
    if (stray !== undefined) {
      throw new CliUsageError(`Unmatched argument at index ${parentArgv.length + 1}: '${stray}'`, 'Did you mean: password hash?');
    }
    stdout(passwordUsage(this.config.bin));
    return 0;
  }
}
