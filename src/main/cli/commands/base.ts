// Base of Basalt's oclif commands. oclif's own flag parser cannot reproduce Besu's option syntax and
// messages, so commands take their raw argv and parse it with Basalt's resolver; the dispatcher (main.ts)
// builds the command and hands it its context, and `run()` resolves with the process exit code.

import { Command } from '@oclif/core';
import type { CommandSummary } from '../help.js';
import type { NodeOptions } from '../options.js';
import type { Environment } from '../resolve.js';
import type { ReadFile } from '../toml.js';

export interface CommandContext {
  readonly env: Environment;
  readonly readFile: ReadFile;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Starts the node and resolves with the exit code when it stops (the supervisor's `runNode`). */
  readonly runNode: (options: NodeOptions) => Promise<number>;
  /** The words before the subcommand (node options a subcommand may need, e.g. --data-path). */
  readonly parentArgv: readonly string[];
  /** The subcommands, for help output. */
  readonly commands: readonly CommandSummary[];
}

export abstract class BasaltCommand extends Command {
  /** Not a flag parser's concern: every word is handed over as is (see the file comment). */
  static override strict = false;

  #context: CommandContext | undefined;

  get context(): CommandContext {
    if (this.#context === undefined) throw new Error(`${this.constructor.name} run without a context`);
    return this.#context;
  }

  set context(context: CommandContext) {
    this.#context = context;
  }

  abstract override run(): Promise<number>;
}

export type BasaltCommandClass = (new (argv: string[], config: ConstructorParameters<typeof Command>[1]) => BasaltCommand) & {
  readonly summary?: string;
};
