// `basalt password hash --password=<pw>` (spec rpc-auth-cli.md §8.3): prints a bcrypt hash of cost 10 with
// Besu's `$2a$10$` prefix and a newline, for the `password` entries of a credentials file.

import { Flags } from '@oclif/core';
import { BasaltCommand } from '../../command.js';
import { CliUsageError } from '../../errors.js';
import { PASSWORD_HASH_SUMMARY } from './index.js';

export default class PasswordHashCommand extends BasaltCommand {
  static override summary = PASSWORD_HASH_SUMMARY;
  static override usage = 'password hash --password=<password>';
  static override examples = ['<%= config.bin %> password hash --password=pegasys'];
  static override flags = {
    // Not `required: true`: the missing option gets picocli's message, not oclif's.
    password: Flags.string({ summary: 'The password input', helpValue: '<password>' }),
  };

  async run(): Promise<number> {
    const { flags } = await this.parse(PasswordHashCommand);
    if (flags.password === undefined) throw new CliUsageError("Missing required option: '--password=<password>'");
    // Loaded here: bcrypt is not needed by any other command.
    const { hashPassword } = await import('../../../../shared/auth/password-hash.js');
    this.context.stdout(`${hashPassword(flags.password)}\n`);
    return 0;
  }
}
