// The CLI entry point in-process, with injected I/O and a stand-in for the supervisor's runNode.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { loadConfig, main, type MainIo } from '../../src/main/cli/main.js';
import type { NodeOptions } from '../../src/main/cli/options.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

interface Captured {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly started: NodeOptions[];
}

async function runCli(argv: string[], io: MainIo = {}): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const started: NodeOptions[] = [];
  const code = await main(argv, {
    env: {},
    readFile: () => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    },
    runNode: async (options) => {
      started.push(options);
      return 0;
    },
    ...io,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr, started };
}

test('runs the node with the resolved options and exits with its code', async (t) => {
  const result = await runCli(['--network=dev', '--rpc-http-enabled'], { env: { BASALT_RPC_HTTP_PORT: '9999' } });
  t.is(result.code, 0);
  t.is(result.stderr, '');
  t.is(result.started.length, 1);
  t.is(result.started[0]?.network, 'dev');
  t.true(result.started[0]?.rpcHttpEnabled);
  t.is(result.started[0]?.rpcHttpPort, 9999);

  const stopped = await runCli([], { runNode: async () => 3 });
  t.is(stopped.code, 3);
});

test('a node that fails to start: Besu\'s wording, exit code 2', async (t) => {
  const result = await runCli(['--network=dev'], {
    runNode: async () => {
      throw new Error('Port(s) \'[8545]\' already in use. Check for other processes using the port(s).');
    },
  });
  t.is(result.code, 2);
  t.is(result.stderr, "Failed to start Basalt: Port(s) '[8545]' already in use. Check for other processes using the port(s).\n");
});

test('parameter error: message, blank line, help pointer, exit code 2, node not started', async (t) => {
  const result = await runCli(['--rpc-http-port=abc']);
  t.is(result.code, 2);
  t.is(result.stdout, '');
  t.is(result.stderr, "Invalid value for option '--rpc-http-port': 'abc' is not an int\n\nTo display full help:\nbasalt [COMMAND] --help\n");
  t.deepEqual(result.started, []);
});

test('unknown option: the suggestion line comes before the blank line', async (t) => {
  const result = await runCli(['--p2p-prt=1']);
  t.is(result.code, 2);
  t.is(
    result.stderr,
    "Unknown option: '--p2p-prt=1'\nPossible solutions: --p2p-enabled, --p2p-host, --p2p-interface, --p2p-port, --p2p-peer-upper-bound\n\nTo display full help:\nbasalt [COMMAND] --help\n",
  );
});

test('--help and -h print help generated from the options table, exit 0', async (t) => {
  for (const flag of ['--help', '-h']) {
    const result = await runCli([flag]);
    t.is(result.code, 0);
    t.is(result.stderr, '');
    t.true(result.stdout.startsWith('Usage:\n\nbasalt [OPTIONS] [COMMAND]\n'));
    t.regex(result.stdout, /--rpc-http-api, --rpc-http-apis=<api name>\[,<api name>\.\.\.\]\.\.\./);
    t.regex(result.stdout, /-l, --logging=<LOG VERBOSITY LEVEL>/);
    t.regex(result.stdout, /--rpc-http-port=<PORT> +Port for JSON-RPC HTTP to listen on \(default: 8545\)/);
    t.deepEqual(result.started, []);
  }
});

test('--version and -V print basalt/v<version>, exit 0', async (t) => {
  for (const flag of ['--version', '-V']) {
    const result = await runCli([flag]);
    t.is(result.code, 0);
    t.is(result.stdout, `basalt/v${PACKAGE_VERSION}\n`);
  }
});

test('the commands oclif found are listed in the help', async (t) => {
  const help = await runCli(['--help']);
  t.regex(help.stdout, /\nCommands:\n +blocks export +Export blocks from the database as RLP blocks\.\n +blocks import +Import blocks from a file of concatenated RLP blocks\.\n +help +Display help/);
});

test('a node option\'s value that is a command word is no subcommand: the node runs', async (t) => {
  const result = await runCli(['--network=dev', '--identity', 'blocks']);
  t.is(result.code, 0, result.stderr);
  t.is(result.started[0]?.identity, 'blocks');
});

test('a help or version option before a subcommand is the node\'s, as with picocli', async (t) => {
  const help = await runCli(['--data-path=/d', '--help', 'blocks', 'import']);
  t.is(help.code, 0);
  t.true(help.stdout.startsWith('Usage:\n\nbasalt [OPTIONS] [COMMAND]\n'));
  const version = await runCli(['-V', 'blocks', 'import', '--from=x']);
  t.is(version.stdout, `basalt/v${PACKAGE_VERSION}\n`);
  t.deepEqual([...help.started, ...version.started], []);
});

test.serial('loading the command line sorts the commands without ICU collation, in the order it gives', async (t) => {
  const icuCompare = String.prototype.localeCompare;
  let icuCalls = 0;
  const countingCompare = function (this: string, that: string): number {
    icuCalls++;
    return icuCompare.call(this, that);
  };
  String.prototype.localeCompare = countingCompare;
  let ids: string[];
  try {
    ids = (await loadConfig()).commands.map((command) => command.id);
    t.is(String.prototype.localeCompare, countingCompare, 'restored once loaded');
  } finally {
    String.prototype.localeCompare = icuCompare;
  }
  t.is(icuCalls, 0);
  t.true(ids.length > 5);
  t.deepEqual(ids, [...ids].sort((a, b) => icuCompare.call(a, b)));
});
