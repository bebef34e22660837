// Entry point behind bin/run.js: picks the command (the node itself, or a subcommand named by the first free
// word) and runs it. Returns the process exit code; all I/O is injectable for tests.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core';
import { parseCommandLine } from './args.js';
import type { BasaltCommandClass, CommandContext } from './commands/base.js';
import { NodeCommand } from './commands/node.js';
import { SUBCOMMANDS } from './commands/registry.js';
import { CliUsageError, formatUsageError, USAGE_ERROR_EXIT_CODE } from './errors.js';
import type { NodeOptions } from './options.js';

/** dist/src/cli/main.js → the package root (where package.json names the bin and version). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

export type MainIo = Partial<Omit<CommandContext, 'parentArgv' | 'commands'>> & {
  /** Subcommands by id; the registry's by default. */
  readonly subcommands?: ReadonlyMap<string, BasaltCommandClass>;
};

async function runNodeFromSupervisor(options: NodeOptions): Promise<number> {
  // Loaded only when the node actually starts, so `--help` and parameter errors never load native modules.
  const { runNode } = await import('../supervisor/node.js');
  return runNode(options);
}

export interface Selected {
  readonly commandClass: BasaltCommandClass;
  readonly argv: readonly string[];
  readonly parentArgv: readonly string[];
}

/**
 * The command named by the first free word(s) of argv — the node command when there is none. Words before
 * it are the node options given to the subcommand as its parent's.
 */
export function selectCommand(argv: readonly string[], subcommands: ReadonlyMap<string, BasaltCommandClass> = SUBCOMMANDS): Selected {
  const groupWords = new Set([...subcommands.keys()].map((id) => id.split(' ')[0]!));
  const { subcommandIndex } = parseCommandLine(argv, groupWords);
  if (subcommandIndex === undefined) return { commandClass: NodeCommand, argv, parentArgv: [] };

  const candidates = [...subcommands].filter(([id]) => {
    const words = id.split(' ');
    return words.every((word, offset) => argv[subcommandIndex + offset] === word);
  });
  const longest = candidates.sort(([a], [b]) => b.length - a.length)[0];
  if (longest === undefined) {
    const next = argv[subcommandIndex + 1];
    throw next === undefined
      ? new CliUsageError('Missing required subcommand')
      : new CliUsageError(`Unmatched argument at index ${subcommandIndex + 1}: '${next}'`);
  }
  const [id, commandClass] = longest;
  return {
    commandClass,
    argv: argv.slice(subcommandIndex + id.split(' ').length),
    parentArgv: argv.slice(0, subcommandIndex),
  };
}

export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const stderr = io.stderr ?? ((text: string) => void process.stderr.write(text));
  const subcommands = io.subcommands ?? SUBCOMMANDS;
  let selected: Selected;
  try {
    selected = selectCommand(argv, subcommands);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    stderr(formatUsageError(error));
    return USAGE_ERROR_EXIT_CODE;
  }
  const config = await Config.load({ root: PACKAGE_ROOT });
  const command = new selected.commandClass([...selected.argv], config);
  command.context = {
    env: io.env ?? process.env,
    readFile: io.readFile ?? ((path) => readFileSync(path, 'utf8')),
    stdout: io.stdout ?? ((text) => void process.stdout.write(text)),
    stderr,
    runNode: io.runNode ?? runNodeFromSupervisor,
    parentArgv: selected.parentArgv,
    commands: [...subcommands].map(([id, commandClass]) => ({ id, summary: commandClass.summary ?? '' })),
  };
  return command.run();
}
