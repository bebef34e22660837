// `basalt [OPTIONS]`: resolve the node options and run the node until it stops.

import { CliUsageError, formatUsageError, USAGE_ERROR_EXIT_CODE } from '../errors.js';
import { renderHelp } from '../help.js';
import { resolveInvocation, type Invocation } from '../resolve.js';
import { BasaltCommand } from './base.js';

export class NodeCommand extends BasaltCommand {
  static override id = 'node';
  static override summary = 'Run the Basalt node';

  async run(): Promise<number> {
    const { env, readFile, stdout, stderr, runNode, commands } = this.context;
    let invocation: Invocation;
    try {
      invocation = resolveInvocation(this.argv, env, readFile);
    } catch (error) {
      if (!(error instanceof CliUsageError)) throw error;
      stderr(formatUsageError(error));
      return USAGE_ERROR_EXIT_CODE;
    }
    switch (invocation.kind) {
      case 'help':
        stdout(renderHelp(commands));
        return 0;
      case 'version':
        stdout(`${this.config.bin}/v${this.config.version}\n`);
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
