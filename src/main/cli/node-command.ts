// `basalt [OPTIONS]`, the command run when no subcommand is named: resolve the node options and run the node
// until it stops. Not in commands/, so oclif does not list it as a subcommand; main.ts runs it by default.

import { BasaltCommand } from './command.js';
import { USAGE_ERROR_EXIT_CODE } from './errors.js';
import { commandSummaries, renderHelp } from './help.js';
import { resolveInvocation } from './resolve.js';

export class NodeCommand extends BasaltCommand {
  static override id = 'node';
  static override summary = 'Run the Basalt node';

  async run(): Promise<number> {
    const { env, readFile, stdout, stderr, runNode } = this.context;
    // The node's options go to Basalt's own converter (resolve.ts), not oclif's flag parser: Besu's syntax
    // (booleans with an optional value, greedy lists, environment and TOML sources) and picocli's exact
    // messages, which operators' scripts match on, are beyond what oclif's parser can be made to produce.
    this.parsed = true;
    const invocation = resolveInvocation(this.argv, env, readFile);
    switch (invocation.kind) {
      case 'help':
        stdout(renderHelp(commandSummaries(this.config)));
        return 0;
      case 'version':
        stdout(this.versionLine());
        return 0;
      case 'run':
        try {
          return await runNode(invocation.options);
        } catch (error) {
          // Besu's wording for failures after the options were accepted; the exit code is 2 there too.
          stderr(`Failed to start Basalt: ${error instanceof Error ? error.message : String(error)}\n`);
          return USAGE_ERROR_EXIT_CODE;
        }
    }
  }
}
