// `basalt help [COMMAND]`: the help `--help` shows, for the node (no command), a topic or a subcommand
// (what @oclif/plugin-help adds, in a few lines rather than a dependency).

import { loadHelpClass } from '@oclif/core';
import { BasaltCommand } from '../command.js';

export default class HelpCommand extends BasaltCommand {
  static override summary = 'Display help for basalt or one of its commands.';
  static override usage = 'help [COMMAND...]';
  /** The command words are free words, not arguments oclif would check. */
  static override strict = false;

  async run(): Promise<number> {
    const { argv } = await this.parse(HelpCommand);
    const BasaltHelp = await loadHelpClass(this.config);
    await new BasaltHelp(this.config, this.config.pjson.oclif.helpOptions).showHelp(argv.map(String));
    return 0;
  }
}
