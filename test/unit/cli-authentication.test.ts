// The authentication options (command line, environment, TOML), Besu's start-up refusals and warnings, and
// `basalt password`, through the CLI entry point in-process.
import test from 'ava';
import { main } from '../../src/main/cli/main.js';
import type { NodeOptions } from '../../src/main/cli/options.js';
import { dependencyWarnings } from '../../src/main/cli/resolve.js';
import { passwordMatches } from '../../src/shared/auth/password-hash.js';
import { isBesuMethodName, UNSERVED_BESU_METHOD_NAMES } from '../../src/shared/rpc/besu-method-names.js';
import { lookupMethod } from '../../src/shared/rpc/registry.js';
import { PEGASYS_HASH } from '../helpers/jwt.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  started: NodeOptions[];
}

const CREDENTIALS = `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = ["*:*"]\n`;

async function run(argv: string[], files: Record<string, string> = {}, env: Record<string, string> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const started: NodeOptions[] = [];
  const code = await main(argv, {
    env,
    readFile: (path) => {
      const content = files[path];
      if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return content;
    },
    runNode: async (options) => {
      started.push(options);
      return 0;
    },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr, started };
}

const HELP_POINTER = '\n\nTo display full help:\nbasalt [COMMAND] --help\n';

async function refused(t: import('ava').ExecutionContext, argv: string[], message: string, files: Record<string, string> = {}): Promise<void> {
  const result = await run(['--network=dev', '--rpc-http-enabled', ...argv], files);
  t.is(result.code, 2, argv.join(' '));
  t.is(result.stderr, `${message}${HELP_POINTER}`);
  t.deepEqual(result.started, []);
}

test('the options from the command line, the environment and TOML', async (t) => {
  const fromArgs = await run(
    [
      '--network=dev', '--rpc-http-enabled', '--rpc-http-authentication-enabled', '--rpc-http-authentication-jwt-public-key-file=/k.pem',
      '--rpc-http-authentication-jwt-algorithm=es256', '--rpc-http-api-methods-no-auth=net_version, eth_chainId',
    ],
  );
  t.is(fromArgs.code, 0, fromArgs.stderr);
  const options = fromArgs.started[0]!;
  t.true(options.rpcHttpAuthenticationEnabled);
  t.is(options.rpcHttpAuthenticationJwtPublicKeyFile, '/k.pem');
  t.is(options.rpcHttpAuthenticationJwtAlgorithm, 'ES256');
  t.deepEqual(options.rpcHttpApiMethodsNoAuth, ['net_version', 'eth_chainId']);

  const fromEnv = await run(['--network=dev', '--rpc-http-enabled'], { '/c.toml': CREDENTIALS }, {
    BASALT_RPC_HTTP_AUTHENTICATION_ENABLED: 'true',
    BASALT_RPC_HTTP_AUTHENTICATION_CREDENTIALS_FILE: '/c.toml',
    BASALT_RPC_HTTP_API_METHOD_NO_AUTH: 'net_version',
  });
  t.is(fromEnv.code, 0, fromEnv.stderr);
  t.is(fromEnv.started[0]!.rpcHttpAuthenticationCredentialsFile, '/c.toml');
  t.deepEqual(fromEnv.started[0]!.rpcHttpApiMethodsNoAuth, ['net_version']);

  const toml = [
    'rpc-http-enabled=true',
    'rpc-http-authentication-enabled=true',
    'rpc-http-authentication-jwt-public-key-file="/k.pem"',
    'rpc-http-authentication-jwt-algorithm="RS512"',
    'rpc-http-api-methods-no-auth=["web3_clientVersion"]',
  ].join('\n');
  const fromToml = await run(['--network=dev', '--config-file=/basalt.toml'], { '/basalt.toml': toml });
  t.is(fromToml.code, 0, fromToml.stderr);
  t.is(fromToml.started[0]!.rpcHttpAuthenticationJwtAlgorithm, 'RS512');
  t.deepEqual(fromToml.started[0]!.rpcHttpApiMethodsNoAuth, ['web3_clientVersion']);

  const defaults = await run(['--network=dev']);
  t.false(defaults.started[0]!.rpcHttpAuthenticationEnabled);
  t.is(defaults.started[0]!.rpcHttpAuthenticationJwtAlgorithm, 'RS256');
  t.deepEqual(defaults.started[0]!.rpcHttpApiMethodsNoAuth, []);
});

test('refusals with Besu\'s wording, exit 2', async (t) => {
  await refused(
    t,
    ['--rpc-http-authentication-enabled'],
    'Unable to authenticate JSON-RPC HTTP endpoint without a supplied credentials file or authentication public key file',
  );
  await refused(
    t,
    ['--rpc-http-api-methods-no-auth=net_version,eth_notAMethod'],
    "Invalid value for option '--rpc-http-api-methods-no-auth', options must be valid RPC methods",
  );
  await refused(
    t,
    ['--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/missing.toml'],
    "The specified RPC HTTP authentication credential file '/missing.toml' does not exist",
  );
  await refused(
    t,
    ['--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/c.toml'],
    'RPC authentication configuration file contains invalid values.',
    { '/c.toml': `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = []\n` },
  );
  await refused(
    t,
    ['--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/c.toml'],
    'RPC user specified without password.',
    { '/c.toml': '[Users.admin]\npermissions = ["*:*"]\n' },
  );
  await refused(
    t,
    ['--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/c.toml'],
    'An error occurred while parsing the specified RPC authentication configuration file.',
    { '/c.toml': '[Users.admin\n' },
  );
  await refused(
    t,
    ['--rpc-http-authentication-jwt-algorithm=PS256'],
    "Invalid value for option '--rpc-http-authentication-jwt-algorithm': expected one of [RS256, RS384, RS512, ES256, ES384, ES512, HS256] (case-insensitive) but was 'PS256'",
  );
  // Besu's method names that Basalt does not serve are still names.
  const served = await run(['--network=dev', '--rpc-http-api-method-no-auth=eth_subscribe,trace_block,qbft_getPendingVotes']);
  t.is(served.code, 0, served.stderr);
});

test('the credentials file is checked only with authentication on', async (t) => {
  const off = await run(['--network=dev', '--rpc-http-enabled', '--rpc-http-authentication-credentials-file=/missing.toml']);
  t.is(off.code, 0, off.stderr);
});

test('warnings: an algorithm without a public key file, both files, options of a disabled service', async (t) => {
  const algorithm = await run(
    ['--network=dev', '--rpc-http-enabled', '--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/c.toml', '--rpc-http-authentication-jwt-algorithm=ES256'],
    { '/c.toml': CREDENTIALS },
  );
  t.deepEqual(dependencyWarnings(algorithm.started[0]!), [
    '--rpc-http-authentication-jwt-algorithm has been ignored because --rpc-http-authentication-public-key-file was not defined on the command line.',
  ]);
  const both = await run(
    ['--network=dev', '--rpc-http-enabled', '--rpc-http-authentication-enabled', '--rpc-http-authentication-credentials-file=/c.toml', '--rpc-http-authentication-jwt-public-key-file=/k.pem'],
    { '/c.toml': CREDENTIALS },
  );
  t.regex(dependencyWarnings(both.started[0]!).join('\n'), /Both a credentials file and a public key file are set for the JSON-RPC HTTP endpoint/);
  const disabled = await run(['--network=dev', '--rpc-http-authentication-enabled', '--rpc-http-authentication-jwt-public-key-file=/k.pem']);
  t.deepEqual(dependencyWarnings(disabled.started[0]!), [
    '--rpc-http-authentication-enabled, --rpc-http-authentication-jwt-public-key-file has been ignored because --rpc-http-enabled was not defined on the command line.',
  ]);
});

test('basalt password hash prints a $2a$10$ hash of the password and a newline, exit 0', async (t) => {
  const result = await run(['password', 'hash', '--password=pegasys']);
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^\$2a\$10\$[./A-Za-z0-9]{53}\n$/);
  t.true(passwordMatches('pegasys', result.stdout.trimEnd()));
  t.deepEqual(result.started, []);
});

test('basalt password hash without --password: picocli\'s message, exit 2', async (t) => {
  const result = await run(['password', 'hash']);
  t.is(result.code, 2);
  t.is(result.stderr, `Missing required option: '--password=<password>'${HELP_POINTER}`);
});

test('basalt password alone prints its usage, exit 0; a stray word is a usage error', async (t) => {
  const usage = await run(['password']);
  t.is(usage.code, 0);
  t.true(usage.stdout.startsWith('Usage:\n\nbasalt password [-hV] [COMMAND]\n'));
  t.regex(usage.stdout, /Commands:\n {2}hash {2}This command generates the hash of a given password\.\n$/);
  const stray = await run(['password', 'hsh']);
  t.is(stray.code, 2);
  t.is(stray.stderr, `Unmatched argument at index 1: 'hsh'\nDid you mean: password hash?${HELP_POINTER}`);
});

test('the unserved Besu method names and the registry do not overlap (a method Basalt starts serving leaves the list)', (t) => {
  t.deepEqual([...UNSERVED_BESU_METHOD_NAMES].filter((name) => lookupMethod(name) !== undefined), []);
  t.true(isBesuMethodName('eth_blockNumber'));
  t.true(isBesuMethodName('trace_block'));
  t.false(isBesuMethodName('eth_blocknumber'));
});
