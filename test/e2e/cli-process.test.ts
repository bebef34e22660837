// bin/run.js as a process: exit codes and the exact stderr/stdout text; the command tree oclif owns.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPTION_SPECS } from '../../src/main/cli/options.js';
import { REPO_ROOT, runCli } from '../helpers/node-process.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const HELP_POINTER = '\nTo display full help:\nbasalt [COMMAND] --help\n';

/** The machine's BASALT_ variables are left out (runCli), only `env` is added. */
const basalt = (args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []) => runCli(args, { env, nodeFlags, timeoutMs: 30_000 });

const tmp = mkdtempSync(join(tmpdir(), 'basalt-cli-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));

function tomlFile(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

test('unknown option: exit 2 with the message, suggestions and the help pointer', async (t) => {
  const result = await basalt(['--rpc-htp-port=1']);
  t.is(result.code, 2);
  t.is(result.stdout, '');
  const lines = result.stderr.split('\n');
  t.is(lines[0], "Unknown option: '--rpc-htp-port=1'");
  t.regex(lines[1] ?? '', /^Possible solutions: --rpc-http-enabled, .*--rpc-http-port, /);
  t.true(result.stderr.endsWith(`\n${HELP_POINTER}`));
});

test('stray argument and bad value: exit 2', async (t) => {
  const stray = await basalt(['--rpc-http-enabled', 'false']);
  t.is(stray.code, 2);
  t.is(stray.stderr, `Unmatched argument at index 1: 'false'\n${HELP_POINTER}`);

  const bad = await basalt(['--rpc-http-api=ETH,BOB']);
  t.is(bad.code, 2);
  t.is(bad.stderr, `Invalid value for option '--rpc-http-api': invalid entries found [BOB]\n${HELP_POINTER}`);
});

test('bad environment value: exit 2', async (t) => {
  const result = await basalt([], { BASALT_RPC_HTTP_PORT: 'abc' });
  t.is(result.code, 2);
  t.is(result.stderr, `Invalid value for option '--rpc-http-port': 'abc' is not an int\n${HELP_POINTER}`);
});

test('bad TOML files: exit 2 with Besu\'s messages', async (t) => {
  const unknown = await basalt([`--config-file=${tomlFile('unknown.toml', '[RPC]\nrpc-http-port = 8545\nsync-mode = "FULL"\n')}`]);
  t.is(unknown.code, 2);
  t.is(unknown.stderr, `Unknown option in TOML configuration file: sync-mode\n${HELP_POINTER}`);

  const syntax = await basalt([`--config-file=${tomlFile('syntax.toml', 'rpc-http-port = = 1\n')}`]);
  t.is(syntax.code, 2);
  t.regex(syntax.stderr, /^Invalid TOML configuration: .+\n\nTo display full help:\nbasalt \[COMMAND\] --help\n$/);

  const empty = await basalt([], { BASALT_CONFIG_FILE: tomlFile('empty.toml', '') });
  t.is(empty.code, 2);
  t.is(empty.stderr, `Unable to read from empty TOML configuration file.\n${HELP_POINTER}`);

  const missing = join(tmp, 'missing.toml');
  const notFound = await basalt([`--config-file=${missing}`]);
  t.is(notFound.code, 2);
  t.is(notFound.stderr, `Unable to read TOML configuration, file not found: ${missing}\n${HELP_POINTER}`);

  const typed = await basalt([`--config-file=${tomlFile('typed.toml', 'rpc-http-enabled = "yes"\n')}`]);
  t.is(typed.code, 2);
  t.is(typed.stderr, `Invalid value for option '--rpc-http-enabled' in TOML configuration file: expected a boolean\n${HELP_POINTER}`);
});

test('--help: exit 0, every option of the table listed except hidden ones', async (t) => {
  const result = await basalt(['--help']);
  t.is(result.code, 0);
  t.is(result.stderr, '');
  t.true(result.stdout.startsWith('Usage:'));
  for (const spec of OPTION_SPECS) {
    // Besu's experimental --X options are accepted but not advertised.
    for (const name of spec.row.names) t.is(result.stdout.includes(name), !spec.row.hidden, `help ${spec.row.hidden ? 'hides' : 'lists'} ${name}`);
  }
});

test('--version and -V: exit 0', async (t) => {
  for (const flag of ['--version', '-V']) {
    const result = await basalt([flag]);
    t.is(result.code, 0);
    t.is(result.stdout, `basalt/v${PACKAGE_VERSION}\n`);
  }
});

test('refuses to run on a Node.js older than 20, exit 1; a later one runs', async (t) => {
  const pretend = (version: string) => `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;
  const result = await basalt(['--version'], {}, ['--import', pretend('18.20.0')]);
  t.is(result.code, 1);
  t.is(result.stdout, '');
  t.regex(result.stderr, /^Basalt requires Node\.js 20 or later; this is Node\.js 18\.20\.0\.\n$/);
  const later = await basalt(['--version'], {}, ['--import', pretend('24.1.0')]);
  t.is(later.code, 0);
  t.is(later.stderr, '');
});

test('help: `help` is `--help`; topics and subcommands get their own', async (t) => {
  const root = (await basalt(['--help']));
  t.is((await basalt(['help'])).stdout, root.stdout);
  t.regex(root.stdout, /\nCommands:\n +blocks export +Export blocks from the database as RLP blocks\.\n +blocks import +Import blocks from a file of concatenated RLP blocks\.\n/);

  const topic = (await basalt(['blocks', '--help']));
  t.is(topic.code, 0);
  t.is(topic.stderr, '');
  t.regex(topic.stdout, /^Blocks related actions.*\n\nUSAGE\n +\$ basalt blocks COMMAND\n\nCOMMANDS\n +blocks export +Export blocks.*\n +blocks import +Import blocks from a file/s);
  t.is((await basalt(['help', 'blocks'])).stdout, topic.stdout);

  const command = (await basalt(['blocks', 'import', '--help']));
  t.is(command.code, 0);
  t.is(command.stderr, '');
  t.regex(command.stdout, /^Import blocks from a file of concatenated RLP blocks\.\n\nUSAGE\n +\$ basalt blocks import --from=<FILE>/);
  for (const flag of ['--from=<FILE>', '--skip-pow-validation-enabled', '--format=<FORMAT>']) t.true(command.stdout.includes(flag), flag);
  // The node's options are the root help's, not the subcommand's.
  t.false(command.stdout.includes('--rpc-http-port'));
  for (const args of [['blocks', 'import', '-h'], ['help', 'blocks', 'import'], ['--data-path=/d', 'blocks', 'import', '--from=x', '--help']]) {
    t.is((await basalt(args)).stdout, command.stdout, args.join(' '));
  }
});

test('a help or version option before the subcommand is the node\'s', async (t) => {
  t.is((await basalt(['--version', 'blocks', 'import'])).stdout, `basalt/v${PACKAGE_VERSION}\n`);
  // ...and a subcommand answers its own --version the same way, without running.
  const own = (await basalt(['blocks', 'import', '--version']));
  t.is(own.code, 0);
  t.is(own.stdout, `basalt/v${PACKAGE_VERSION}\n`);
  t.true((await basalt(['-h', 'blocks'])).stdout.startsWith('Usage:\n\nbasalt [OPTIONS] [COMMAND]\n'));
});

test('unknown or missing subcommand: exit 2 with picocli\'s message', async (t) => {
  const unknown = (await basalt(['--network=dev', 'blocks', 'imprt', '--from=x']));
  t.is(unknown.code, 2);
  t.is(unknown.stdout, '');
  t.is(unknown.stderr, `Unmatched argument at index 2: 'imprt'\nDid you mean: blocks export or blocks import?\n${HELP_POINTER}`);
  t.is((await basalt(['blocks', 'imprt', '--help'])).code, 2);

  const missing = (await basalt(['blocks']));
  t.is(missing.code, 2);
  t.is(missing.stderr, `Missing required subcommand\n${HELP_POINTER}`);

  const help = (await basalt(['help', 'nope']));
  t.is(help.code, 2);
  t.regex(help.stderr, /^Command nope not found\.\n/);
});

test('node options before the subcommand: checked by the node\'s parser, with Besu\'s messages', async (t) => {
  const bad = (await basalt(['--rpc-http-port=abc', 'blocks', 'import', '--from=x']));
  t.is(bad.code, 2);
  t.is(bad.stderr, `Invalid value for option '--rpc-http-port': 'abc' is not an int\n${HELP_POINTER}`);

  const unknown = (await basalt(['--rpc-http-prt=1', 'blocks', 'import', '--from=x']));
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /^Unknown option: '--rpc-http-prt=1'\nPossible solutions: /);

  // A subcommand's own flag is not a node option.
  const misplaced = (await basalt(['--from=x', 'blocks', 'import']));
  t.is(misplaced.code, 2);
  t.is(misplaced.stderr, `Unknown option: '--from=x'\n${HELP_POINTER}`);

  // A node option's value is never a command word: here the node runs its checks.
  const value = (await basalt(['--identity', 'blocks', '--rpc-http-port=abc']));
  t.is(value.code, 2);
  t.is(value.stderr, `Invalid value for option '--rpc-http-port': 'abc' is not an int\n${HELP_POINTER}`);
});
