// Base of Basalt's commands. oclif finds, builds and runs them; what one invocation hands every command (its
// I/O, the node options given before the subcommand) travels in an AsyncLocalStorage set by main(), so tests
// can run main() in-process, concurrently, each with its own I/O and a stand-in for the node.

import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { Command } from '@oclif/core';
import { isBooleanWord } from './args.js';
import { CliUsageError } from './errors.js';
import { booleanWithOptionalValue } from './kinds.js';
import type { NodeOptions } from './options.js';
import type { Environment } from './resolve.js';
import type { ReadFile } from './toml.js';

export interface CommandContext {
  readonly env: Environment;
  readonly readFile: ReadFile;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** All of standard input, to its end (`rlp encode` without `--from`). */
  readonly readStdin: () => Promise<string>;
  /** Starts the node and resolves with the exit code when it stops (the supervisor's `runNode`). */
  readonly runNode: (options: NodeOptions) => Promise<number>;
  /** The node options given before the subcommand (Besu: `besu --data-path=x blocks import ...`). */
  readonly parentArgv: readonly string[];
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function runNodeFromSupervisor(options: NodeOptions): Promise<number> {
  // Loaded only when the node actually starts, so `--help` and parameter errors never load native modules.
  const { runNode } = await import('../supervisor/node.js');
  return runNode(options);
}

export const PROCESS_CONTEXT: CommandContext = {
  env: process.env,
  readFile: (path) => readFileSync(path, 'utf8'),
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin: readProcessStdin,
  runNode: runNodeFromSupervisor,
  parentArgv: [],
};

const invocation = new AsyncLocalStorage<CommandContext>();

/** Runs `body` with `context` as the context of every command it runs. */
export function withCommandContext<T>(context: CommandContext, body: () => Promise<T>): Promise<T> {
  return invocation.run(context, body);
}

export abstract class BasaltCommand extends Command {
  protected get context(): CommandContext {
    return invocation.getStore() ?? PROCESS_CONTEXT;
  }

  /** Errors go back to main(), which prints them in Besu's format and returns the exit code. */
  protected override async catch(error: Error): Promise<never> {
    throw error;
  }

  /** Resolves with the process exit code. */
  abstract override run(): Promise<number>;

  /** What `--version` prints, for the node and every subcommand alike. */
  protected versionLine(): string {
    return `${this.config.bin}/v${this.config.version}\n`;
  }
}

/** What separateNodeOptions needs of a command's oclif flags. */
type OwnFlags = Readonly<Record<string, { readonly type: 'boolean' | 'option'; readonly helpValue?: string | string[]; readonly multiple?: boolean }>>;

/**
 * Besu lets node options follow a subcommand's own options (`blocks import --from=f --data-path=x`), which
 * oclif's parser cannot tell apart. This takes out the words of the command's own long flags, in picocli's
 * syntax (a boolean may carry `=true|false` or a following `true`/`false`; a missing value gets picocli's
 * message), as words oclif parses; the rest are node options for the node's resolver.
 */
export function separateNodeOptions(argv: readonly string[], flags: OwnFlags): { own: string[]; nodeArgv: string[] } {
  const own: string[] = [];
  const nodeArgv: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const equals = word.indexOf('=');
    const name = word.startsWith('--') ? word.slice(2, equals < 0 ? undefined : equals) : '';
    const flag = Object.hasOwn(flags, name) ? flags[name] : undefined;
    if (flag === undefined) {
      nodeArgv.push(word);
      continue;
    }
    const attached = equals < 0 ? undefined : word.slice(equals + 1);
    const paramLabel = [flag.helpValue ?? '<value>'].flat().join(' ');
    if (given.has(name) && flag.multiple !== true) {
      throw new CliUsageError(flag.type === 'boolean' ? `option '--${name}' should be specified only once` : `option '--${name}' (${paramLabel}) should be specified only once`);
    }
    given.add(name);
    if (flag.type === 'boolean') {
      const next = argv[i + 1];
      const text = attached ?? (next !== undefined && isBooleanWord(next) ? argv[++i]! : 'true');
      const label = { name: `--${name}`, longestName: `--${name}`, paramLabel: booleanWithOptionalValue.paramLabel };
      // oclif's booleans take no value; false is their default.
      if (booleanWithOptionalValue.convert(text, label)) own.push(`--${name}`);
      continue;
    }
    const value = attached ?? argv[++i];
    if (value === undefined) throw new CliUsageError(`Missing required parameter for option '--${name}' (${paramLabel})`);
    if (attached === undefined && value.startsWith('--')) {
      throw new CliUsageError(`Expected parameter for option '--${name}' but found '${value}'`);
    }
    own.push(`--${name}=${value}`);
  }
  return { own, nodeArgv };
}
