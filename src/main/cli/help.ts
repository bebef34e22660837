// `basalt --help` (and `basalt help`), generated from the options table in picocli's layout, and the oclif
// help class (package.json `oclif.helpClass`) that shows it as the root help; topics and subcommands get
// oclif's own help.

import { Help, toConfiguredId, type Interfaces } from '@oclif/core';
import { BIN_NAME } from './errors.js';
import { envVarName, OPTION_SPECS, REMOVED_BESU_OPTIONS, type OptionSpec } from './options.js';

const NAME_COLUMN = 44;
const LINE_WIDTH = 100;

export interface CommandSummary {
  readonly id: string;
  readonly summary: string;
}

/** The subcommands oclif found, as typed on the command line (`blocks import`). */
export function commandSummaries(config: Interfaces.Config): CommandSummary[] {
  return config.commands
    .filter((command) => !command.hidden)
    .map((command) => ({ id: toConfiguredId(command.id, config), summary: command.summary ?? '' }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

function synopsisOf(spec: OptionSpec): string {
  const names = [...spec.shortNames, ...spec.longNames].join(', ');
  const kind = spec.row.kind;
  if (kind.shape === 'list') {
    const entry = kind.paramLabel;
    return kind.allowsNoValue ? `${names}[=${entry}[,${entry}...]...]` : `${names}=${entry}[,${entry}...]...`;
  }
  switch (kind.arity) {
    case 'flag':
      return names;
    case 'optional':
      return `${names}[=${kind.paramLabel}]`;
    case 'one':
      return `${names}=${kind.paramLabel}`;
  }
}

function formatDefault(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

function defaultOf(spec: OptionSpec): string | undefined {
  if (spec.row.defaultText !== undefined) return spec.row.defaultText;
  const value: unknown = spec.row.default;
  return value === undefined ? undefined : formatDefault(value);
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Two columns: names (short names indented like picocli's `-l, --logging`) and the description. */
function row(names: string, description: string): string[] {
  const indent = ' '.repeat(NAME_COLUMN);
  const left = `  ${names.startsWith('--') ? '    ' : ''}${names}`;
  const descriptionLines = wrap(description, LINE_WIDTH - NAME_COLUMN);
  const first = left.length < NAME_COLUMN ? left.padEnd(NAME_COLUMN) + (descriptionLines.shift() ?? '') : left;
  return [first, ...descriptionLines.map((line) => indent + line)];
}

export function renderHelp(commands: readonly CommandSummary[] = []): string {
  const lines = [
    'Usage:',
    '',
    `${BIN_NAME} [OPTIONS] [COMMAND]`,
    '',
    'Description:',
    '',
    'Basalt is a Hyperledger Besu compatible Ethereum node for QBFT permissioned networks.',
    '',
    'Options:',
  ];
  for (const spec of OPTION_SPECS) {
    if (spec.row.hidden) continue;
    const fallback = defaultOf(spec);
    const description = fallback === undefined ? spec.row.description : `${spec.row.description} (default: ${fallback})`;
    lines.push(...row(synopsisOf(spec), description));
  }
  lines.push(...row('-h, --help', 'Show this help message and exit.'));
  lines.push(...row('-V, --version', 'Print version information and exit.'));
  if (commands.length > 0) {
    lines.push('', 'Commands:');
    for (const command of commands) lines.push(...row(command.id, command.summary));
  }
  lines.push(
    '',
    ...wrap(
      `Not accepted (removed from Besu with proof-of-work mining, refused as unknown options): ${REMOVED_BESU_OPTIONS.map(({ name, why }) => `${name} (${why})`).join('; ')}.`,
      LINE_WIDTH,
    ),
  );
  lines.push(
    '',
    `Every option can also be set through the environment (${envVarName('--rpc-http-port')}=8545 for --rpc-http-port)`,
    'or in the TOML file named by --config-file (rpc-http-port=8545). The command line wins over the',
    'environment, which wins over the config file.',
  );
  return lines.join('\n') + '\n';
}

export default class BasaltHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    this.log(renderHelp(commandSummaries(this.config)).trimEnd());
  }
}
