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

/** The two services with authentication, and how Besu's options and messages name each. */
const SERVICES = [
  { name: 'HTTP', flag: 'rpc-http', env: 'RPC_HTTP', key: 'rpcHttp', endpoint: 'JSON-RPC HTTP endpoint', fileLabel: 'HTTP' },
  { name: 'WebSocket', flag: 'rpc-ws', env: 'RPC_WS', key: 'rpcWs', endpoint: 'JSON-RPC WebSocket endpoint', fileLabel: 'WS' },
] as const;
type Service = (typeof SERVICES)[number];

/** The service's option `suffix` of the resolved options (`AuthenticationEnabled` → rpcWsAuthenticationEnabled). */
function valueOf(options: NodeOptions, service: Service, suffix: string): unknown {
  return (options as unknown as Record<string, unknown>)[`${service.key}${suffix}`];
}

async function refused(t: import('ava').ExecutionContext, service: Service, argv: string[], message: string, files: Record<string, string> = {}): Promise<void> {
  const result = await run(['--network=dev', `--${service.flag}-enabled`, ...argv], files);
  t.is(result.code, 2, argv.join(' '));
  t.is(result.stderr, `${message}${HELP_POINTER}`);
  t.deepEqual(result.started, []);
}

for (const service of SERVICES) {
  const f = service.flag;
  test(`${service.name}: the options from the command line, the environment and TOML`, async (t) => {
    const fromArgs = await run(
      [
        '--network=dev', `--${f}-enabled`, `--${f}-authentication-enabled`, `--${f}-authentication-jwt-public-key-file=/k.pem`,
        `--${f}-authentication-jwt-algorithm=es256`, `--${f}-api-methods-no-auth=net_version, eth_chainId`,
      ],
    );
    t.is(fromArgs.code, 0, fromArgs.stderr);
    const options = fromArgs.started[0]!;
    t.true(valueOf(options, service, 'AuthenticationEnabled'));
    t.is(valueOf(options, service, 'AuthenticationJwtPublicKeyFile'), '/k.pem');
    t.is(valueOf(options, service, 'AuthenticationJwtAlgorithm'), 'ES256');
    t.deepEqual(valueOf(options, service, 'ApiMethodsNoAuth'), ['net_version', 'eth_chainId']);

    const fromEnv = await run(['--network=dev', `--${f}-enabled`], { '/c.toml': CREDENTIALS }, {
      [`BASALT_${service.env}_AUTHENTICATION_ENABLED`]: 'true',
      [`BASALT_${service.env}_AUTHENTICATION_CREDENTIALS_FILE`]: '/c.toml',
      [`BASALT_${service.env}_API_METHOD_NO_AUTH`]: 'net_version',
    });
    t.is(fromEnv.code, 0, fromEnv.stderr);
    t.is(valueOf(fromEnv.started[0]!, service, 'AuthenticationCredentialsFile'), '/c.toml');
    t.deepEqual(valueOf(fromEnv.started[0]!, service, 'ApiMethodsNoAuth'), ['net_version']);

    const toml = [
      `${f}-enabled=true`,
      `${f}-authentication-enabled=true`,
      `${f}-authentication-jwt-public-key-file="/k.pem"`,
      `${f}-authentication-jwt-algorithm="RS512"`,
      `${f}-api-methods-no-auth=["web3_clientVersion"]`,
    ].join('\n');
    const fromToml = await run(['--network=dev', '--config-file=/basalt.toml'], { '/basalt.toml': toml });
    t.is(fromToml.code, 0, fromToml.stderr);
    t.is(valueOf(fromToml.started[0]!, service, 'AuthenticationJwtAlgorithm'), 'RS512');
    t.deepEqual(valueOf(fromToml.started[0]!, service, 'ApiMethodsNoAuth'), ['web3_clientVersion']);

    const defaults = await run(['--network=dev']);
    t.false(valueOf(defaults.started[0]!, service, 'AuthenticationEnabled'));
    t.is(valueOf(defaults.started[0]!, service, 'AuthenticationJwtAlgorithm'), 'RS256');
    t.deepEqual(valueOf(defaults.started[0]!, service, 'ApiMethodsNoAuth'), []);
  });

  test(`${service.name}: refusals with Besu's wording, exit 2`, async (t) => {
    await refused(
      t,
      service,
      [`--${f}-authentication-enabled`],
      `Unable to authenticate ${service.endpoint} without a supplied credentials file or authentication public key file`,
    );
    await refused(
      t,
      service,
      [`--${f}-api-methods-no-auth=net_version,eth_notAMethod`],
      `Invalid value for option '--${f}-api-methods-no-auth', options must be valid RPC methods`,
    );
    await refused(
      t,
      service,
      [`--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/missing.toml`],
      `The specified RPC ${service.fileLabel} authentication credential file '/missing.toml' does not exist`,
    );
    await refused(
      t,
      service,
      [`--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/c.toml`],
      'RPC authentication configuration file contains invalid values.',
      { '/c.toml': `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = []\n` },
    );
    await refused(
      t,
      service,
      [`--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/c.toml`],
      'RPC user specified without password.',
      { '/c.toml': '[Users.admin]\npermissions = ["*:*"]\n' },
    );
    await refused(
      t,
      service,
      [`--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/c.toml`],
      'An error occurred while parsing the specified RPC authentication configuration file.',
      { '/c.toml': '[Users.admin\n' },
    );
    await refused(
      t,
      service,
      [`--${f}-authentication-jwt-algorithm=PS256`],
      `Invalid value for option '--${f}-authentication-jwt-algorithm': expected one of [RS256, RS384, RS512, ES256, ES384, ES512, HS256] (case-insensitive) but was 'PS256'`,
    );
    // Besu's method names that Basalt does not serve are still names.
    const served = await run(['--network=dev', `--${f}-enabled`, `--${f}-api-method-no-auth=eth_subscribe,trace_block,qbft_getPendingVotes`]);
    t.is(served.code, 0, served.stderr);
  });

  test(`${service.name}: the credentials file is checked only with authentication on`, async (t) => {
    const off = await run(['--network=dev', `--${f}-enabled`, `--${f}-authentication-credentials-file=/missing.toml`]);
    t.is(off.code, 0, off.stderr);
  });

  test(`${service.name}: warnings: an algorithm without a public key file, both files, options of a disabled service`, async (t) => {
    const algorithm = await run(
      ['--network=dev', `--${f}-enabled`, `--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/c.toml`, `--${f}-authentication-jwt-algorithm=ES256`],
      { '/c.toml': CREDENTIALS },
    );
    t.deepEqual(dependencyWarnings(algorithm.started[0]!), [
      `--${f}-authentication-jwt-algorithm has been ignored because --${f}-authentication-public-key-file was not defined on the command line.`,
    ]);
    const both = await run(
      ['--network=dev', `--${f}-enabled`, `--${f}-authentication-enabled`, `--${f}-authentication-credentials-file=/c.toml`, `--${f}-authentication-jwt-public-key-file=/k.pem`],
      { '/c.toml': CREDENTIALS },
    );
    t.regex(dependencyWarnings(both.started[0]!).join('\n'), new RegExp(`Both a credentials file and a public key file are set for the ${service.endpoint}`));
    const disabled = await run(['--network=dev', `--${f}-authentication-enabled`, `--${f}-authentication-jwt-public-key-file=/k.pem`]);
    t.deepEqual(dependencyWarnings(disabled.started[0]!), [
      `--${f}-authentication-enabled, --${f}-authentication-jwt-public-key-file has been ignored because --${f}-enabled was not defined on the command line.`,
    ]);
  });
}

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
