// Basalt's command line, behind bin/run.js. oclif owns the command tree: it finds the subcommands (one class
// per file under commands/, the file's path is its id: commands/blocks/import.ts is `blocks import`), the
// topics they form, `help` and every `--help`. With no subcommand word the node itself runs (node-command.ts),
// with Besu's options and messages.
//
// Adding a subcommand (`password hash`, `public-key export`, ...) is adding its class file, e.g.
// commands/password/hash.ts default-exporting a BasaltCommand subclass whose `run()` resolves with the exit
// code; a new topic may get a description under `oclif.topics` in package.json. A subcommand that takes node
// options (as `blocks import` does) reads the ones given before it from `this.context.parentArgv` and takes
// its own flags apart from the others with separateNodeOptions.

// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../../shared/util/hex-builtins.js';
import { fileURLToPath } from 'node:url';
import { Config, Errors, run, settings } from '@oclif/core';
import { HELP_NAMES, parseCommandLine, unmatchedArgumentsError } from './args.js';
import { PROCESS_CONTEXT, withCommandContext, type CommandContext } from './command.js';
import { CliUsageError, formatUsageError, USAGE_ERROR_EXIT_CODE } from './errors.js';
import { NodeCommand } from './node-command.js';

/** dist/src/main/cli/main.js → the package root (package.json: the bin name, the version, the oclif config). */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

/** What tests may replace; the process's own I/O and the real node otherwise. */
export type MainIo = Partial<Omit<CommandContext, 'parentArgv'>>;

interface CommandLine {
  /** The node options given before the subcommand. */
  readonly parentArgv: readonly string[];
  /** The subcommand's words onwards, for oclif to dispatch. */
  readonly commandArgv: readonly string[];
}

/**
 * Besu takes node options before a subcommand (`basalt --data-path=x blocks import --from=f`); oclif expects
 * the command words first. So this finds the first word that the node's parser does not take as an option or
 * its value and that begins a command id; undefined when there is none (the node command runs). As with
 * picocli, the words before it must be node options, and a help or version option among them is the node's.
 * Words naming a topic but no command are Besu's usage errors (oclif would show the topic's help, exit 0),
 * unless help is asked for.
 */
function splitCommandLine(argv: readonly string[], commandIds: readonly string[]): CommandLine | undefined {
  const ids = commandIds.map((id) => id.split(':'));
  const parsed = parseCommandLine(argv, new Set(ids.map((words) => words[0]!)));
  const at = parsed.subcommandIndex;
  if (at === undefined || parsed.helpRequested || parsed.versionRequested) return undefined;
  if (parsed.unmatched.length > 0) throw unmatchedArgumentsError(parsed.unmatched);

  const commandArgv = argv.slice(at);
  const matchedWords = (words: readonly string[]): number => {
    let count = 0;
    while (count < words.length && commandArgv[count] === words[count]) count++;
    return count;
  };
  if (!ids.some((words) => matchedWords(words) === words.length)) {
    const topicDepth = Math.max(...ids.map(matchedWords));
    const next = commandArgv[topicDepth];
    if (next !== undefined && !next.startsWith('-')) {
      const topic = commandArgv.slice(0, topicDepth).join(' ');
      const choices = ids.filter((words) => matchedWords(words) === topicDepth).map((words) => `${topic} ${words.slice(topicDepth).join(' ')}`);
      throw new CliUsageError(`Unmatched argument at index ${at + topicDepth}: '${next}'`, `Did you mean: ${choices.join(' or ')}?`);
    }
    if (!commandArgv.some((word) => (HELP_NAMES as readonly string[]).includes(word))) throw new CliUsageError('Missing required subcommand');
  }
  return { parentArgv: argv.slice(0, at), commandArgv };
}

export async function loadConfig(): Promise<Config> {
  // Basalt always runs its compiled dist/: oclif must not look for TypeScript sources (it would under
  // NODE_ENV=test or development, and warn on stderr when it finds no TypeScript loader).
  settings.enableAutoTranspile = false;
  return withCodeUnitLocaleCompare(() => Config.load({ root: PACKAGE_ROOT, devPlugins: false, userPlugins: false, jitPlugins: false }));
}

/**
 * oclif sorts the commands it finds with `localeCompare` whenever it loads, which makes ICU load its
 * collation data: ~2 MB of the node binary's pages stay resident in every node process for one sort of
 * a dozen lower-case ASCII ids, which code-unit order sorts the same way (test/unit/cli-main.test.ts
 * compares the two). The node's file-backed RSS: 53.4 MB against 55.4 (bench/node-memory.ts).
 * Nothing else runs on this thread while the command line is loaded; the method is restored after.
 */
async function withCodeUnitLocaleCompare<T>(load: () => Promise<T>): Promise<T> {
  const localeCompare = Object.getOwnPropertyDescriptor(String.prototype, 'localeCompare')!;
  Object.defineProperty(String.prototype, 'localeCompare', {
    ...localeCompare,
    value: function codeUnitCompare(this: string, that: string): number {
      const a = String(this);
      const b = String(that);
      return a < b ? -1 : a > b ? 1 : 0;
    },
  });
  try {
    return await load();
  } finally {
    Object.defineProperty(String.prototype, 'localeCompare', localeCompare);
  }
}

/** Prints a usage error in Besu's format (oclif's own, e.g. from a subcommand's flag parser, too). */
function reportUsageError(error: unknown, stderr: (text: string) => void): number {
  if (error instanceof CliUsageError) {
    stderr(formatUsageError(error));
    return USAGE_ERROR_EXIT_CODE;
  }
  if (error instanceof Errors.CLIError) {
    stderr(formatUsageError(new CliUsageError(error.message)));
    return error.oclif.exit ?? USAGE_ERROR_EXIT_CODE;
  }
  throw error;
}

/** Runs the command line (without the program name); resolves with the process exit code. */
export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const config = await loadConfig();
  const context: CommandContext = { ...PROCESS_CONTEXT, ...io };
  try {
    const commandLine = splitCommandLine(argv, config.commandIDs);
    if (commandLine === undefined) {
      return await withCommandContext(context, () => NodeCommand.run([...argv], config));
    }
    const code: unknown = await withCommandContext({ ...context, parentArgv: commandLine.parentArgv }, () =>
      run([...commandLine.commandArgv], config),
    );
    // Help output resolves with nothing.
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    return reportUsageError(error, context.stderr);
  }
}
