import test, { type ExecutionContext } from 'ava';
import { availableParallelism } from 'node:os';
import { CliUsageError } from '../../src/main/cli/errors.js';
import { NODE_OPTIONS, OPTION_SPECS, type NodeOptions } from '../../src/main/cli/options.js';
import { dependencyWarnings, resolveInvocation, resolveOptions, type Environment } from '../../src/main/cli/resolve.js';
import type { ReadFile } from '../../src/main/cli/toml.js';
import { renderHelp } from '../../src/main/cli/help.js';
import { API_GROUPS } from '../../src/shared/rpc/api-groups.js';
import { METHOD_REGISTRY } from '../../src/shared/rpc/registry.js';

function notFound(path: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
}

/** A file system holding only the given files. */
function filesystem(files: Record<string, string> = {}): ReadFile {
  return (path) => {
    const content = files[path];
    if (content === undefined) throw notFound(path);
    return content;
  };
}

function resolve(argv: string[], env: Environment = {}, files: Record<string, string> = {}): NodeOptions {
  return resolveOptions(argv, env, filesystem(files));
}

function withToml(toml: string, argv: string[] = [], env: Environment = {}): NodeOptions {
  return resolve(['--config-file=/etc/basalt.toml', ...argv], env, { '/etc/basalt.toml': toml });
}

function expectUsageError(
  t: ExecutionContext,
  run: () => unknown,
  message: string,
  suggestion?: string,
): void {
  const error = t.throws(run, { instanceOf: CliUsageError });
  t.is(error?.message, message);
  t.is(error?.suggestion, suggestion);
}

// ---------------------------------------------------------------------------------------------------------
// Defaults

test('defaults when nothing is given', (t) => {
  const options = resolve([]);
  t.is(options.dataPath, './build/data');
  t.is(options.network, 'mainnet');
  t.is(options.configFile, undefined);
  t.is(options.genesisFile, undefined);
  t.is(options.networkId, undefined);
  t.is(options.nodePrivateKeyFile, undefined);
  t.is(options.identity, undefined);
  t.is(options.logging, 'INFO');
  t.false(options.revertReasonEnabled);
  t.false(options.rpcHttpEnabled);
  t.is(options.rpcHttpHost, '127.0.0.1');
  t.is(options.rpcHttpPort, 8545);
  t.deepEqual(options.rpcHttpApi, ['ETH', 'NET', 'WEB3']);
  t.deepEqual(options.rpcHttpCorsOrigins, []);
  t.deepEqual(options.hostAllowlist, ['localhost', '127.0.0.1']);
  t.is(options.rpcHttpMaxBatchSize, 1024);
  t.is(options.rpcHttpMaxRequestContentLength, 134217728);
  // Besu's is 80; here no limit unless given (options.ts says why).
  t.is(options.rpcHttpMaxActiveConnections, undefined);
  t.is(options.rpcHttpWorkers, availableParallelism());
  t.false(options.jsonPrettyPrintEnabled);
  t.is(options.rpcMaxLogsRange, 5000);
  t.is(options.rpcMaxLogsCount, 10000);
  t.is(options.rpcGasCap, 100000000n);
  t.is(options.minerExtraData, undefined);
  t.is(options.minGasPrice, 1000n);
  t.is(options.minPriorityFee, 0n);
  t.is(options.targetGasLimit, undefined);
  t.is(options.txPoolPriceBump, 10);
  t.is(options.txPoolMinGasPrice, 1000n);
  t.is(options.txPoolMaxFutureBySender, 200);
  t.is(options.txPoolBlobPriceBump, 100);
  t.is(options.txPool, 'LAYERED');
  t.is(options.txPoolLayerMaxCapacity, 25_000_000);
  t.is(options.txPoolMaxPrioritized, 4000);
  t.deepEqual(options.txPoolMaxPrioritizedByType, { 3: 72 });
  t.is(options.txPoolRetentionHours, 13);
  t.is(options.txPoolLimitByAccountPercentage, 0.001);
  t.is(options.txPoolMaxSize, 4096);
  t.is(options.rpcTxFeecap, 1000000000000000000n);
  t.false(options.txPoolNoLocalPriority);
  t.false(options.strictTxReplayProtectionEnabled);
  t.true(options.p2pEnabled);
  t.is(options.p2pHost, '127.0.0.1');
  t.is(options.p2pPort, 30303);
  t.true(options.discoveryEnabled);
  t.is(options.bootnodes, undefined);
  t.is(options.maxPeers, 25);
  t.is(options.specified.size, 0);
});

test('the resolved object has exactly one field per table row plus `specified`', (t) => {
  const keys = Object.keys(resolve([])).sort();
  t.deepEqual(keys, [...NODE_OPTIONS.map((row) => row.key), 'specified'].sort());
  t.true(Object.isFrozen(resolve([])));
});

test('environment variable and TOML key names are derived from the option names', (t) => {
  const apis = OPTION_SPECS.find((spec) => spec.row.key === 'rpcHttpApi')!;
  t.deepEqual(apis.envNames, ['BASALT_RPC_HTTP_API', 'BASALT_RPC_HTTP_APIS']);
  t.deepEqual(apis.tomlKeys, ['rpc-http-api', 'rpc-http-apis']);
  const logging = OPTION_SPECS.find((spec) => spec.row.key === 'logging')!;
  t.deepEqual(logging.envNames, ['BASALT_LOGGING']);
  t.deepEqual(logging.tomlKeys, ['logging']);
});

// ---------------------------------------------------------------------------------------------------------
// Precedence: command line > environment > TOML > default

const PRECEDENCE_CASES: { cli: boolean; env: boolean; toml: boolean; expected: number }[] = [];
for (const cli of [false, true]) {
  for (const env of [false, true]) {
    for (const toml of [false, true]) {
      PRECEDENCE_CASES.push({ cli, env, toml, expected: cli ? 1001 : env ? 1002 : toml ? 1003 : 8545 });
    }
  }
}

for (const { cli, env, toml, expected } of PRECEDENCE_CASES) {
  test(`precedence: command line ${cli ? 'yes' : 'no'}, environment ${env ? 'yes' : 'no'}, TOML ${toml ? 'yes' : 'no'}`, (t) => {
    const argv = cli ? ['--rpc-http-port=1001'] : [];
    const environment: Environment = env ? { BASALT_RPC_HTTP_PORT: '1002' } : {};
    const options = toml ? withToml('rpc-http-port = 1003\n', argv, environment) : resolve(argv, environment);
    t.is(options.rpcHttpPort, expected);
    t.is(options.specified.has('rpcHttpPort'), cli || env || toml);
  });
}

test('precedence holds per option, sources can be mixed', (t) => {
  const options = withToml('rpc-http-port = 3\nrpc-http-host = "10.0.0.3"\nmax-peers = 3\n', ['--rpc-http-port', '1'], {
    BASALT_RPC_HTTP_HOST: '10.0.0.2',
  });
  t.is(options.rpcHttpPort, 1);
  t.is(options.rpcHttpHost, '10.0.0.2');
  t.is(options.maxPeers, 3);
  t.deepEqual([...options.specified].sort(), ['configFile', 'maxPeers', 'rpcHttpHost', 'rpcHttpPort']);
});

test('a command-line list replaces the TOML list rather than merging with it', (t) => {
  t.deepEqual(withToml('rpc-http-api = ["ETH", "ADMIN"]\n', ['--rpc-http-api=NET']).rpcHttpApi, ['NET']);
  t.deepEqual(withToml('rpc-http-api = ["ETH", "ADMIN"]\n').rpcHttpApi, ['ETH', 'ADMIN']);
});

test('an environment list replaces the TOML list', (t) => {
  t.deepEqual(withToml('rpc-http-api = ["ETH", "ADMIN"]\n', [], { BASALT_RPC_HTTP_API: 'TXPOOL' }).rpcHttpApi, ['TXPOOL']);
});

test('environment: lists are comma separated, API lists tolerate one space around commas', (t) => {
  t.deepEqual(resolve([], { BASALT_RPC_HTTP_API: 'ETH, NET ,QBFT' }).rpcHttpApi, ['ETH', 'NET', 'QBFT']);
  t.deepEqual(resolve([], { BASALT_HOST_ALLOWLIST: 'a.example,b.example' }).hostAllowlist, ['a.example', 'b.example']);
  t.deepEqual(resolve([], { BASALT_BOOTNODES: 'enode://a@1.2.3.4:30303,enode://b@1.2.3.5:30303' }).bootnodes, [
    'enode://a@1.2.3.4:30303',
    'enode://b@1.2.3.5:30303',
  ]);
});

test('environment: every alias has a variable, the first alias wins', (t) => {
  t.deepEqual(resolve([], { BASALT_RPC_HTTP_APIS: 'ADMIN' }).rpcHttpApi, ['ADMIN']);
  t.deepEqual(resolve([], { BASALT_RPC_HTTP_APIS: 'ADMIN', BASALT_RPC_HTTP_API: 'DEBUG' }).rpcHttpApi, ['DEBUG']);
  t.is(resolve([], { BASALT_P2P_PEER_UPPER_BOUND: '7' }).maxPeers, 7);
});

test('environment: booleans, numbers, enums and wei amounts', (t) => {
  const options = resolve([], {
    BASALT_RPC_HTTP_ENABLED: 'true',
    BASALT_P2P_ENABLED: 'FALSE',
    BASALT_NETWORK: 'dev',
    BASALT_MIN_GAS_PRICE: '0',
    BASALT_LOGGING: 'debug',
    BASALT_NETWORK_ID: '1337',
  });
  t.true(options.rpcHttpEnabled);
  t.false(options.p2pEnabled);
  t.is(options.network, 'dev');
  t.is(options.minGasPrice, 0n);
  t.is(options.logging, 'DEBUG');
  t.is(options.networkId, 1337n);
});

test('environment: variables of other programs and unknown BASALT_ variables are ignored', (t) => {
  const options = resolve([], { BESU_RPC_HTTP_PORT: '1', BASALT_NOT_AN_OPTION: 'x', RPC_HTTP_PORT: '2' });
  t.is(options.rpcHttpPort, 8545);
});

test('environment: values are converted with the same messages as on the command line', (t) => {
  expectUsageError(t, () => resolve([], { BASALT_RPC_HTTP_PORT: 'abc' }), "Invalid value for option '--rpc-http-port': 'abc' is not an int");
  expectUsageError(t, () => resolve([], { BASALT_RPC_HTTP_ENABLED: 'yes' }), "Invalid value for option '--rpc-http-enabled': 'yes' is not a boolean");
  expectUsageError(
    t,
    () => resolve([], { BASALT_RPC_HTTP_API: 'ETH,BOB' }),
    "Invalid value for option '--rpc-http-api': invalid entries found [BOB]",
  );
});

// ---------------------------------------------------------------------------------------------------------
// Command-line forms

test('values attached with = or as the next word', (t) => {
  t.is(resolve(['--rpc-http-port=1234']).rpcHttpPort, 1234);
  t.is(resolve(['--rpc-http-port', '1234']).rpcHttpPort, 1234);
  t.is(resolve(['--identity=a=b']).identity, 'a=b');
  t.is(resolve(['--identity', '-dash-first']).identity, '-dash-first');
  // As in picocli, a word starting with a short option name is that option, not a value.
  expectUsageError(t, () => resolve(['--identity', '-lDEBUG']), "Expected parameter for option '--identity' but found '-lDEBUG'");
  t.is(resolve(['--rpc-http-max-batch-size', '-1']).rpcHttpMaxBatchSize, -1);
  t.is(resolve(['--identity=']).identity, '');
});

test('short option -l in its three forms, levels case-insensitive, FATAL read as ERROR', (t) => {
  t.is(resolve(['-l', 'DEBUG']).logging, 'DEBUG');
  t.is(resolve(['-l=trace']).logging, 'TRACE');
  t.is(resolve(['-lWarn']).logging, 'WARN');
  t.is(resolve(['--logging', 'all']).logging, 'ALL');
  t.is(resolve(['--logging=fatal']).logging, 'ERROR');
});

test('boolean flag: bare means true, =true|false attached, any case', (t) => {
  t.true(resolve(['--rpc-http-enabled']).rpcHttpEnabled);
  t.true(resolve(['--rpc-http-enabled=true']).rpcHttpEnabled);
  t.false(resolve(['--rpc-http-enabled=false']).rpcHttpEnabled);
  t.false(resolve(['--rpc-http-enabled=FALSE']).rpcHttpEnabled);
  t.true(resolve(['--rpc-http-enabled']).specified.has('rpcHttpEnabled'));
});

test('boolean flag: a separate false word is not its value', (t) => {
  expectUsageError(t, () => resolve(['--rpc-http-enabled', 'false']), "Unmatched argument at index 1: 'false'");
  expectUsageError(t, () => resolve(['--rpc-http-enabled=no']), "Invalid value for option '--rpc-http-enabled': 'no' is not a boolean");
});

test('boolean with required value (--p2p-enabled, --discovery-enabled)', (t) => {
  t.false(resolve(['--p2p-enabled', 'false']).p2pEnabled);
  t.false(resolve(['--p2p-enabled=false']).p2pEnabled);
  t.true(resolve(['--p2p-enabled', 'TRUE']).p2pEnabled);
  t.false(resolve(['--discovery-enabled', 'false']).discoveryEnabled);
  expectUsageError(t, () => resolve(['--p2p-enabled']), "Missing required parameter for option '--p2p-enabled' (<Boolean>)");
  expectUsageError(
    t,
    () => resolve(['--discovery-enabled', '--rpc-http-enabled']),
    "Expected parameter for option '--discovery-enabled' but found '--rpc-http-enabled'",
  );
  expectUsageError(t, () => resolve(['--p2p-enabled', 'off']), "Invalid value for option '--p2p-enabled': 'off' is not a boolean");
});

test('boolean with optional value (--tx-pool-no-local-priority, --strict-tx-replay-protection-enabled)', (t) => {
  t.true(resolve(['--tx-pool-no-local-priority']).txPoolNoLocalPriority);
  t.false(resolve(['--tx-pool-no-local-priority', 'false']).txPoolNoLocalPriority);
  t.false(resolve(['--tx-pool-no-local-priority=false']).txPoolNoLocalPriority);
  const both = resolve(['--strict-tx-replay-protection-enabled', '--rpc-http-enabled']);
  t.true(both.strictTxReplayProtectionEnabled);
  t.true(both.rpcHttpEnabled);
  // A word that is not a boolean is left alone (and here is a stray argument).
  expectUsageError(t, () => resolve(['--tx-pool-no-local-priority', 'maybe']), "Unmatched argument at index 1: 'maybe'");
});

test('missing value of a single-value option', (t) => {
  expectUsageError(t, () => resolve(['--rpc-http-port']), "Missing required parameter for option '--rpc-http-port' (<PORT>)");
  expectUsageError(
    t,
    () => resolve(['--data-path', '--rpc-http-enabled']),
    "Expected parameter for option '--data-path' but found '--rpc-http-enabled'",
  );
  expectUsageError(t, () => resolve(['-l']), "Missing required parameter for option '--logging' (<LOG VERBOSITY LEVEL>)");
});

test('list options: repeated occurrences accumulate, one occurrence consumes following words', (t) => {
  t.deepEqual(resolve(['--rpc-http-api=ETH', '--rpc-http-api', 'NET']).rpcHttpApi, ['ETH', 'NET']);
  t.deepEqual(resolve(['--rpc-http-api', 'ETH', 'NET', '--rpc-http-enabled']).rpcHttpApi, ['ETH', 'NET']);
  t.deepEqual(resolve(['--rpc-http-api=ETH', 'QBFT']).rpcHttpApi, ['ETH', 'QBFT']);
  t.deepEqual(resolve(['--rpc-http-apis=ETH,NET', '--rpc-http-api=ADMIN']).rpcHttpApi, ['ETH', 'NET', 'ADMIN']);
  t.deepEqual(resolve(['--rpc-http-api=ETH, NET']).rpcHttpApi, ['ETH', 'NET']);
  t.deepEqual(resolve(['--rpc-http-api=ETH,ETH']).rpcHttpApi, ['ETH']);
  expectUsageError(t, () => resolve(['--rpc-http-api']), "Missing required parameter for option '--rpc-http-apis' at index 0 (<api name>)");
});

test('--bootnodes may be given without a value (no bootnodes)', (t) => {
  t.deepEqual(resolve(['--bootnodes']).bootnodes, []);
  t.deepEqual(resolve(['--bootnodes', '--rpc-http-enabled']).bootnodes, []);
  t.deepEqual(resolve(['--bootnodes=enode://a@1.1.1.1:1,enode://b@2.2.2.2:2']).bootnodes, ['enode://a@1.1.1.1:1', 'enode://b@2.2.2.2:2']);
});

test('option aliases', (t) => {
  t.is(resolve(['--p2p-peer-upper-bound=3']).maxPeers, 3);
  expectUsageError(
    t,
    () => resolve(['--max-peers=3', '--p2p-peer-upper-bound=4']),
    "option '--p2p-peer-upper-bound' (<INTEGER>) should be specified only once",
  );
});

// ---------------------------------------------------------------------------------------------------------
// Parameter errors (Besu's wording)

test('unknown option with suggestions of names sharing its first two letters', (t) => {
  const error = t.throws(() => resolve(['--rpc-htp-port=1']), { instanceOf: CliUsageError });
  t.is(error?.message, "Unknown option: '--rpc-htp-port=1'");
  const suggested = error?.suggestion?.replace(/^Possible solutions: /, '').split(', ') ?? [];
  t.true(error?.suggestion?.startsWith('Possible solutions: '));
  t.true(suggested.includes('--rpc-http-port'));
  t.true(suggested.includes('--rpc-http-apis'));
  t.true(suggested.every((name) => name.startsWith('--rp')));
  const expected = OPTION_SPECS.flatMap((spec) => spec.row.names).filter((name) => name.startsWith('--rp'));
  t.deepEqual(suggested, expected);
});

test('unknown option without similar names has no suggestion line', (t) => {
  expectUsageError(t, () => resolve(['--zzz']), "Unknown option: '--zzz'");
});

test('several unknown options, and an unknown option followed by its value', (t) => {
  expectUsageError(t, () => resolve(['--foo', '--bar']), "Unknown options: '--foo', '--bar'");
  expectUsageError(t, () => resolve(['--sync-mode', 'FULL']), "Unknown options: '--sync-mode', 'FULL'");
  expectUsageError(t, () => resolve(['--p2p-prt=1']), "Unknown option: '--p2p-prt=1'", 'Possible solutions: --p2p-enabled, --p2p-host, --p2p-interface, --p2p-port, --p2p-peer-upper-bound');
  expectUsageError(t, () => resolve(['-x']), "Unknown option: '-x'");
});

test('stray positional arguments', (t) => {
  expectUsageError(t, () => resolve(['extra']), "Unmatched argument at index 0: 'extra'");
  expectUsageError(t, () => resolve(['--rpc-http-enabled', 'a', 'b']), "Unmatched arguments from index 1: 'a', 'b'");
});

test('bad numbers', (t) => {
  expectUsageError(t, () => resolve(['--rpc-http-port=abc']), "Invalid value for option '--rpc-http-port': 'abc' is not an int");
  expectUsageError(t, () => resolve(['--max-peers=1.5']), "Invalid value for option '--p2p-peer-upper-bound': '1.5' is not an int");
  expectUsageError(t, () => resolve(['--max-peers=2147483648']), "Invalid value for option '--p2p-peer-upper-bound': '2147483648' is not an int");
  expectUsageError(t, () => resolve(['--rpc-max-logs-range=x']), "Invalid value for option '--rpc-max-logs-range': 'x' is not a long");
  expectUsageError(t, () => resolve(['--rpc-max-logs-count=-1']), "Invalid value for option '--rpc-max-logs-count': '-1' must be at least 0");
  t.is(resolve(['--rpc-max-logs-count=0']).rpcMaxLogsCount, 0);
  expectUsageError(t, () => resolve(['--target-gas-limit=0x10']), "Invalid value for option '--target-gas-limit': '0x10' is not a long");
  expectUsageError(
    t,
    () => resolve(['--rpc-gas-cap=9223372036854775808']),
    "Invalid value for option '--rpc-gas-cap': '9223372036854775808' is not a long",
  );
  t.is(resolve(['--rpc-gas-cap=9223372036854775807']).rpcGasCap, 9223372036854775807n);
  t.is(resolve(['--target-gas-limit=+30000000']).targetGasLimit, 30000000n);
});

test('ports and worker counts are range-checked', (t) => {
  expectUsageError(t, () => resolve(['--rpc-http-port=70000']), "Invalid value for option '--rpc-http-port': '70000' must be between 0 and 65535");
  expectUsageError(t, () => resolve(['--p2p-port=-1']), "Invalid value for option '--p2p-port': '-1' must be between 0 and 65535");
  expectUsageError(t, () => resolve(['--rpc-http-workers=0']), "Invalid value for option '--rpc-http-workers': '0' must be at least 1");
  t.is(resolve(['--rpc-http-workers=3']).rpcHttpWorkers, 3);
  t.is(resolve(['--rpc-http-port=0']).rpcHttpPort, 0);
});

test('wei amounts: unsigned 64-bit decimals with Besu converter messages', (t) => {
  t.is(resolve(['--min-gas-price=18446744073709551615']).minGasPrice, 18446744073709551615n);
  t.is(resolve(['--rpc-tx-feecap=0']).rpcTxFeecap, 0n);
  expectUsageError(
    t,
    () => resolve(['--min-gas-price=abc']),
    'Invalid value for option \'--min-gas-price\': cannot convert \'abc\' to Wei (java.lang.NumberFormatException: For input string: "abc")',
  );
  expectUsageError(
    t,
    () => resolve(['--rpc-tx-feecap=-1']),
    "Invalid value for option '--rpc-tx-feecap': cannot convert '-1' to Wei (java.lang.NumberFormatException: Illegal leading minus sign on unsigned string -1.)",
  );
  expectUsageError(
    t,
    () => resolve(['--min-priority-fee=18446744073709551616']),
    "Invalid value for option '--min-priority-fee': cannot convert '18446744073709551616' to Wei (java.lang.NumberFormatException: String value 18446744073709551616 exceeds range of unsigned long.)",
  );
});

test('--network-id is a big integer', (t) => {
  t.is(resolve(['--network-id=2018']).networkId, 2018n);
  t.is(resolve(['--network-id=123456789012345678901234567890']).networkId, 123456789012345678901234567890n);
  expectUsageError(
    t,
    () => resolve(['--network-id=abc']),
    'Invalid value for option \'--network-id\': cannot convert \'abc\' to BigInteger (java.lang.NumberFormatException: For input string: "abc")',
  );
});

test('--tx-pool-price-bump is a percentage 0..100', (t) => {
  t.is(resolve(['--tx-pool-price-bump=25']).txPoolPriceBump, 25);
  expectUsageError(
    t,
    () => resolve(['--tx-pool-price-bump=101']),
    "Invalid value for option '--tx-pool-price-bump': cannot convert '101' to Percentage (org.hyperledger.besu.cli.converter.exception.PercentageConversionException: Invalid value: 101, should be a number between 0 and 100 inclusive.)",
  );
});

test('repeated single-value option', (t) => {
  expectUsageError(t, () => resolve(['--rpc-http-port=1', '--rpc-http-port=2']), "option '--rpc-http-port' (<PORT>) should be specified only once");
  expectUsageError(t, () => resolve(['--rpc-http-enabled', '--rpc-http-enabled']), "option '--rpc-http-enabled' (<Boolean>) should be specified only once");
  expectUsageError(t, () => resolve(['-l', 'INFO', '--logging=DEBUG']), "option '--logging' (<LOG VERBOSITY LEVEL>) should be specified only once");
});

test('API names are validated uppercase-exact', (t) => {
  t.deepEqual(resolve(['--rpc-http-api=ETH,NET,WEB3,ADMIN,DEBUG,TXPOOL,QBFT,MINER,PERM,TRACE,PLUGINS,IBFT,ENGINE,TESTING']).rpcHttpApi.length, 14);
  expectUsageError(t, () => resolve(['--rpc-http-api=ETH,BOB']), "Invalid value for option '--rpc-http-api': invalid entries found [BOB]");
  expectUsageError(t, () => resolve(['--rpc-http-api=eth']), "Invalid value for option '--rpc-http-api': invalid entries found [eth]");
  expectUsageError(t, () => resolve(['--rpc-http-apis=BOB,FOO']), "Invalid value for option '--rpc-http-api': invalid entries found [BOB, FOO]");
});

test('the API groups the CLI accepts are the registry\'s, and help lists them', (t) => {
  const groupsOfMethods = new Set(Object.values(METHOD_REGISTRY).map((method) => method.group));
  groupsOfMethods.delete('RPC');
  for (const group of groupsOfMethods) t.deepEqual(resolve([`--rpc-http-api=${group}`]).rpcHttpApi, [group]);
  const description = renderHelp().split('--rpc-http-api,')[1]!.split('\n      --')[0]!.replace(/\s+/g, ' ');
  t.true(description.includes(API_GROUPS.join(', ')), description);
});

test('--network is case- and separator-insensitive; bad names list the choices', (t) => {
  t.is(resolve(['--network=DEV']).network, 'dev');
  t.is(resolve(['--network', 'Linea-Mainnet']).network, 'linea_mainnet');
  t.is(resolve(['--network=future_eips']).network, 'future_eips');
  expectUsageError(
    t,
    () => resolve(['--network=foo']),
    "Invalid value for option '--network': expected one of [MAINNET, SEPOLIA, HOLESKY, HOODI, EPHEMERY, LINEA_MAINNET, LINEA_SEPOLIA, LUKSO, DEV, FUTURE_EIPS, EXPERIMENTAL_EIPS] (case-insensitive) but was 'foo'",
  );
});

test('--network and --genesis-file exclude each other, from any source', (t) => {
  const message =
    "--network option and --genesis-file option can't be used at the same time.  Please refer to CLI reference for more details about this constraint.";
  expectUsageError(t, () => resolve(['--network=dev', '--genesis-file=/g.json']), message);
  expectUsageError(t, () => resolve(['--genesis-file=/g.json'], { BASALT_NETWORK: 'dev' }), message);
  expectUsageError(t, () => withToml('network = "dev"\n', ['--genesis-file=/g.json']), message);
  const custom = resolve(['--genesis-file=/g.json']);
  t.is(custom.network, undefined);
  t.is(custom.genesisFile, '/g.json');
});

test('bad logging level', (t) => {
  expectUsageError(t, () => resolve(['--logging=LOUD']), 'Unknown logging value: LOUD');
  expectUsageError(t, () => resolve([], { BASALT_LOGGING: 'verbose' }), 'Unknown logging value: verbose');
});

test('host allow-list: *, all, none and their combination errors', (t) => {
  t.deepEqual(resolve(['--host-allowlist=*']).hostAllowlist, ['*']);
  t.deepEqual(resolve(['--host-allowlist=all']).hostAllowlist, ['*']);
  t.deepEqual(resolve(['--host-allowlist=none']).hostAllowlist, []);
  t.deepEqual(resolve(['--host-allowlist=node.example,10.0.0.1']).hostAllowlist, ['node.example', '10.0.0.1']);
  expectUsageError(t, () => resolve(['--host-allowlist=*,foo']), "Values '*' or 'all' can't be used with other hostnames");
  expectUsageError(t, () => resolve(['--host-allowlist=foo', '--host-allowlist=all']), "Values '*' or 'all' can't be used with other hostnames");
  expectUsageError(t, () => resolve(['--host-allowlist=none,foo']), "Value 'none' can't be used with other hostnames");
  expectUsageError(t, () => resolve(['--host-allowlist=a,,b']), 'Hostname cannot be empty string or null string.');
});

test('CORS origins: all, none, * alone, regular expressions', (t) => {
  t.deepEqual(resolve(['--rpc-http-cors-origins=all']).rpcHttpCorsOrigins, ['*']);
  t.deepEqual(resolve(['--rpc-http-cors-origins=none']).rpcHttpCorsOrigins, []);
  t.deepEqual(resolve(['--rpc-http-cors-origins=http://a.example,https://.*\\.b\\.example']).rpcHttpCorsOrigins, [
    'http://a.example',
    'https://.*\\.b\\.example',
  ]);
  expectUsageError(t, () => resolve(['--rpc-http-cors-origins=*,http://a.example']), "Values '*' or 'all' can't be used with other domains");
  expectUsageError(t, () => resolve(['--rpc-http-cors-origins=none,http://a']), "Value 'none' can't be used with other domains");
  expectUsageError(t, () => resolve(['--rpc-http-cors-origins=http://(a']), 'Domain values result in invalid regex pattern');
});

test('miner extra data', (t) => {
  const options = resolve(['--miner-extra-data=0x0102ff']);
  t.deepEqual(options.minerExtraData, Uint8Array.from([1, 2, 255]));
  t.deepEqual(resolve(['--miner-extra-data=abc']).minerExtraData, Uint8Array.from([0x0a, 0xbc]));
  t.deepEqual(resolve([`--miner-extra-data=0x${'ab'.repeat(32)}`]).minerExtraData?.length, 32);
  expectUsageError(
    t,
    () => resolve([`--miner-extra-data=0x${'ab'.repeat(33)}`]),
    `Invalid value for option '--miner-extra-data': '0x${'ab'.repeat(33)}' is longer than 32 bytes`,
  );
  expectUsageError(t, () => resolve(['--miner-extra-data=0xzz']), "Invalid value for option '--miner-extra-data': '0xzz' is not a hex string");
});

test('--miner-enabled and --miner-coinbase are refused as Besu refuses them: unknown options', (t) => {
  const suggestions = 'Possible solutions: --miner-extra-data, --min-gas-price, --min-priority-fee';
  expectUsageError(t, () => resolve(['--miner-enabled']), "Unknown option: '--miner-enabled'", suggestions);
  expectUsageError(t, () => resolve(['--miner-coinbase=0xfe3b557e8fb62b89f4916b721be55ceb828dbd73']), "Unknown option: '--miner-coinbase=0xfe3b557e8fb62b89f4916b721be55ceb828dbd73'", suggestions);
  expectUsageError(t, () => withToml('miner-enabled = true\n'), 'Unknown option in TOML configuration file: miner-enabled');
});

test('--config-file on the command line and BASALT_CONFIG_FILE together', (t) => {
  expectUsageError(
    t,
    () => resolve(['--config-file=/cli.toml'], { BASALT_CONFIG_FILE: '/env.toml' }, { '/cli.toml': 'max-peers=1', '/env.toml': 'max-peers=2' }),
    'Both BASALT_CONFIG_FILE=--config-file and /env.toml [/cli.toml] specified. Please specify only one.',
  );
});

test('BASALT_CONFIG_FILE alone names the config file', (t) => {
  const options = resolve([], { BASALT_CONFIG_FILE: '/env.toml' }, { '/env.toml': 'max-peers = 2\n' });
  t.is(options.maxPeers, 2);
  t.is(options.configFile, '/env.toml');
});

// ---------------------------------------------------------------------------------------------------------
// Transaction-pool rules (§12.2, §12.3)

test('tx-pool-min-gas-price follows a lower min-gas-price unless set', (t) => {
  t.is(resolve(['--min-gas-price=500']).txPoolMinGasPrice, 500n);
  t.is(resolve(['--min-gas-price=0']).txPoolMinGasPrice, 0n);
  t.is(resolve(['--min-gas-price=5000']).txPoolMinGasPrice, 1000n);
  t.is(resolve(['--tx-pool-min-gas-price=500']).txPoolMinGasPrice, 500n);
  t.is(resolve(['--min-gas-price=0', '--tx-pool-min-gas-price=0']).txPoolMinGasPrice, 0n);
});

test('tx-pool-min-gas-price set above min-gas-price is an error', (t) => {
  expectUsageError(t, () => resolve(['--tx-pool-min-gas-price=2000']), 'tx-pool-min-gas-price cannot be greater than the value of min-gas-price');
  expectUsageError(
    t,
    () => resolve(['--min-gas-price=0'], { BASALT_TX_POOL_MIN_GAS_PRICE: '1' }),
    'tx-pool-min-gas-price cannot be greater than the value of min-gas-price',
  );
});

test('price bump is forced to 0 with --min-gas-price=0 unless set', (t) => {
  t.is(resolve(['--min-gas-price=0']).txPoolPriceBump, 0);
  t.is(resolve(['--min-gas-price=0', '--tx-pool-price-bump=15']).txPoolPriceBump, 15);
  t.is(resolve(['--min-gas-price=1']).txPoolPriceBump, 10);
});

test('layered pool limits from every source; the by-type map replaces the default', (t) => {
  const options = resolve(['--tx-pool-layer-max-capacity=1000000', '--tx-pool-max-prioritized=10', '--tx-pool-max-prioritized-by-type=EIP1559=5,FRONTIER=2']);
  t.is(options.txPoolLayerMaxCapacity, 1_000_000);
  t.is(options.txPoolMaxPrioritized, 10);
  t.deepEqual(options.txPoolMaxPrioritizedByType, { 2: 5, 0: 2 });
  t.deepEqual(resolve([], { BASALT_TX_POOL_MAX_PRIORITIZED_BY_TYPE: 'BLOB=3' }).txPoolMaxPrioritizedByType, { 3: 3 });
  t.deepEqual(withToml('tx-pool-max-prioritized-by-type=["BLOB=1", "DELEGATE_CODE=4"]').txPoolMaxPrioritizedByType, { 3: 1, 4: 4 });
  t.is(resolve(['--tx-pool=layered']).txPool, 'LAYERED');
  t.is(resolve(['--tx-pool-blob-price-bump=50']).txPoolBlobPriceBump, 50);
});

test('bad by-type limits', (t) => {
  expectUsageError(
    t,
    () => resolve(['--tx-pool-max-prioritized-by-type=BLOB']),
    "Value for option option '--tx-pool-max-prioritized-by-type' (MAP<TYPE,INTEGER>) should be in KEY=VALUE format but was BLOB",
  );
  expectUsageError(
    t,
    () => resolve(['--tx-pool-max-prioritized-by-type=blob=3']),
    "Invalid value for option '--tx-pool-max-prioritized-by-type': expected one of [FRONTIER, ACCESS_LIST, EIP1559, BLOB, DELEGATE_CODE] (case-sensitive) but was 'blob'",
  );
  expectUsageError(
    t,
    () => resolve(['--tx-pool-max-prioritized-by-type=BLOB=x']),
    "Invalid value for option '--tx-pool-max-prioritized-by-type': 'x' is not an int",
  );
});

test('sequenced pool options with the layered pool, and layered ones with a sequenced pool, are Besu\'s errors', (t) => {
  expectUsageError(
    t,
    () => resolve(['--tx-pool-retention-hours=5']),
    'Could not use legacy or sequenced transaction pool options with layered implementation [--tx-pool-retention-hours]',
  );
  expectUsageError(
    t,
    () => resolve(['--tx-pool-max-size=10'], { BASALT_TX_POOL_LIMIT_BY_ACCOUNT_PERCENTAGE: '0.5' }),
    'Could not use legacy or sequenced transaction pool options with layered implementation [--tx-pool-limit-by-account-percentage, --tx-pool-max-size]',
  );
  expectUsageError(
    t,
    () => resolve(['--tx-pool=SEQUENCED', '--tx-pool-max-prioritized=3', '--tx-pool-layer-max-capacity=9']),
    'Could not use layered transaction pool options with legacy or sequenced implementation [--tx-pool-layer-max-capacity, --tx-pool-max-prioritized]',
  );
  expectUsageError(
    t,
    () => resolve(['--tx-pool-limit-by-account-percentage=1.5']),
    "Invalid value for option '--tx-pool-limit-by-account-percentage': cannot convert '1.5' to Fraction (org.hyperledger.besu.cli.converter.exception.FractionConversionException: Invalid value: 1.5, should be a number between 0.0 and 1.0 inclusive.)",
  );
});

test('a sequenced or legacy pool is refused: Basalt implements the layered one only', (t) => {
  expectUsageError(t, () => resolve(['--tx-pool=sequenced']), '--tx-pool=SEQUENCED is not supported: Basalt implements the LAYERED transaction pool only');
  expectUsageError(t, () => resolve(['--tx-pool=LEGACY', '--tx-pool-retention-hours=1']), '--tx-pool=LEGACY is not supported: Basalt implements the LAYERED transaction pool only');
});

test('ports of enabled services must differ', (t) => {
  const clash = "Port number '30303' has been specified multiple times. Please review the supplied configuration.";
  expectUsageError(t, () => resolve(['--rpc-http-enabled', '--rpc-http-port=30303']), clash);
  t.notThrows(() => resolve(['--rpc-http-port=30303']));
  t.notThrows(() => resolve(['--rpc-http-enabled', '--rpc-http-port=30303', '--p2p-enabled=false']));
  t.notThrows(() => resolve(['--rpc-http-enabled', '--rpc-http-port=0', '--p2p-port=0']));
});

// ---------------------------------------------------------------------------------------------------------
// TOML

test('TOML: keys are option names, headings are ignored, any alias works', (t) => {
  const options = withToml(
    [
      'data-path = "/var/basalt"',
      'rpc-http-enabled = true',
      '[RPC]',
      'rpc-http-port = 9545',
      'rpc-http-apis = ["ETH", "QBFT"]',
      '[p2p.settings]',
      'max-peers = 10',
      'bootnodes = []',
      'host-allowlist = ["*"]',
      'network = "DEV"',
    ].join('\n'),
  );
  t.is(options.dataPath, '/var/basalt');
  t.true(options.rpcHttpEnabled);
  t.is(options.rpcHttpPort, 9545);
  t.deepEqual(options.rpcHttpApi, ['ETH', 'QBFT']);
  t.is(options.maxPeers, 10);
  t.deepEqual(options.bootnodes, []);
  t.deepEqual(options.hostAllowlist, ['*']);
  t.is(options.network, 'dev');
});

test('TOML: dotted keys are matched by their last element', (t) => {
  t.is(withToml('rpc.rpc-http-port = 7545\n').rpcHttpPort, 7545);
});

test('TOML: numbers may be given as strings; wei amounts beyond 64-bit TOML integers as strings', (t) => {
  t.is(withToml('rpc-http-port = "7545"\n').rpcHttpPort, 7545);
  t.is(withToml('rpc-tx-feecap = "18446744073709551615"\n').rpcTxFeecap, 18446744073709551615n);
  t.is(withToml('min-gas-price = 0\n').minGasPrice, 0n);
  t.is(withToml('network-id = 2018\n').networkId, 2018n);
});

test('TOML: values are converted with the usual messages', (t) => {
  expectUsageError(t, () => withToml('rpc-http-port = "abc"\n'), "Invalid value for option '--rpc-http-port': 'abc' is not an int");
  expectUsageError(t, () => withToml('rpc-http-port = 1.5\n'), "Invalid value for option '--rpc-http-port': '1.5' is not an int");
  expectUsageError(t, () => withToml('rpc-http-api = ["ETH", "BOB"]\n'), "Invalid value for option '--rpc-http-api': invalid entries found [BOB]");
  expectUsageError(t, () => withToml('logging = "LOUD"\n'), 'Unknown logging value: LOUD');
});

test('TOML: types must match the option', (t) => {
  expectUsageError(
    t,
    () => withToml('rpc-http-enabled = "true"\n'),
    "Invalid value for option '--rpc-http-enabled' in TOML configuration file: expected a boolean",
  );
  expectUsageError(
    t,
    () => withToml('rpc-http-api = "ETH"\n'),
    "Invalid value for option '--rpc-http-apis' in TOML configuration file: expected an array",
  );
  expectUsageError(t, () => withToml('data-path = 5\n'), "Invalid value for option '--data-path' in TOML configuration file: expected a string");
  expectUsageError(t, () => withToml('max-peers = true\n'), "Invalid value for option '--p2p-peer-upper-bound' in TOML configuration file: expected a number");
  expectUsageError(
    t,
    () => withToml('bootnodes = [["a"]]\n'),
    "Invalid value for option '--bootnodes' in TOML configuration file: expected an array of values",
  );
});

test('TOML: unknown keys', (t) => {
  expectUsageError(t, () => withToml('sync-mode = "FULL"\n'), 'Unknown option in TOML configuration file: sync-mode');
  expectUsageError(
    t,
    () => withToml('max-peers = 1\nfoo = 1\n[section]\nbar = "x"\n'),
    'Unknown options in TOML configuration file: foo, bar',
  );
});

test('TOML: the same option twice', (t) => {
  expectUsageError(t, () => withToml('rpc-http-api = ["ETH"]\nrpc-http-apis = ["NET"]\n'), "Option '--rpc-http-api' should be specified only once");
  expectUsageError(t, () => withToml('[a]\nmax-peers = 1\n[b]\nmax-peers = 2\n'), "Option '--max-peers' should be specified only once");
});

test('TOML: missing, empty and malformed files', (t) => {
  expectUsageError(t, () => resolve(['--config-file=/nope.toml']), 'Unable to read TOML configuration, file not found: /nope.toml');
  expectUsageError(t, () => withToml(''), 'Unable to read from empty TOML configuration file.');
  expectUsageError(t, () => withToml('\n  \n'), 'Unable to read from empty TOML configuration file.');
  expectUsageError(t, () => withToml('# only a comment\n'), 'Unable to read from empty TOML configuration file.');
  const error = t.throws(() => withToml('rpc-http-port = \n'), { instanceOf: CliUsageError });
  t.regex(error?.message ?? '', /^Invalid TOML configuration: .+/);
  const duplicate = t.throws(() => withToml('max-peers = 1\nmax-peers = 2\n'), { instanceOf: CliUsageError });
  t.regex(duplicate?.message ?? '', /^Invalid TOML configuration: .*Duplicate/);
});

test('TOML: other read failures are reported', (t) => {
  const readFile: ReadFile = () => {
    throw Object.assign(new Error('EISDIR: illegal operation on a directory, read'), { code: 'EISDIR' });
  };
  expectUsageError(
    t,
    () => resolveOptions(['--config-file=/etc'], {}, readFile),
    'Unable to read TOML configuration file /etc: EISDIR: illegal operation on a directory, read',
  );
});

test('TOML: a config-file key is ignored', (t) => {
  t.is(withToml('config-file = "/other.toml"\nmax-peers = 4\n').configFile, '/etc/basalt.toml');
});

// ---------------------------------------------------------------------------------------------------------
// Help, version, warnings

test('resolveInvocation: help and version requests', (t) => {
  t.deepEqual(resolveInvocation(['--help'], {}, filesystem()), { kind: 'help' });
  t.deepEqual(resolveInvocation(['--rpc-http-enabled', '-h'], {}, filesystem()), { kind: 'help' });
  t.deepEqual(resolveInvocation(['--unknown', '-h'], {}, filesystem()), { kind: 'help' });
  t.deepEqual(resolveInvocation(['-V'], {}, filesystem()), { kind: 'version' });
  t.deepEqual(resolveInvocation(['--version'], {}, filesystem()), { kind: 'version' });
  expectUsageError(t, () => resolveInvocation(['--rpc-http-port=abc', '--help'], {}, filesystem()), "Invalid value for option '--rpc-http-port': 'abc' is not an int");
  const run = resolveInvocation(['--network=dev'], {}, filesystem());
  t.is(run.kind, 'run');
  t.is(run.kind === 'run' ? run.options.network : undefined, 'dev');
});

test('warnings for options of a disabled service', (t) => {
  t.deepEqual(dependencyWarnings(resolve(['--rpc-http-port=1', '--rpc-http-api=ETH'])), [
    '--rpc-http-api, --rpc-http-port has been ignored because --rpc-http-enabled was not defined on the command line.',
  ]);
  t.deepEqual(dependencyWarnings(resolve(['--p2p-enabled=false', '--max-peers=3'], { BASALT_BOOTNODES: 'enode://a@1.1.1.1:1' })), [
    '--bootnodes, --max-peers has been ignored because --p2p-enabled was not defined on the command line.',
  ]);
  t.deepEqual(dependencyWarnings(resolve(['--rpc-http-enabled', '--rpc-http-port=1'])), []);
  t.deepEqual(dependencyWarnings(resolve([])), []);
});

test('--rpc-http-max-active-connections given with HTTP on: no warning (the limit is enforced)', (t) => {
  t.deepEqual(dependencyWarnings(resolve(['--rpc-http-enabled', '--rpc-http-max-active-connections=300'])), []);
});

test('table invariants: unique keys and names, a long name first, short names are one letter', (t) => {
  const keys = NODE_OPTIONS.map((row) => row.key);
  t.is(new Set(keys).size, keys.length);
  const names = NODE_OPTIONS.flatMap((row) => row.names);
  t.is(new Set(names).size, names.length);
  for (const row of NODE_OPTIONS) {
    // Besu's hidden experimental options keep their `--X` prefix (`--Xqbft-enable-early-round-change`).
    t.regex(row.names[0], /^--X?[a-z0-9]+(-[a-z0-9]+)*$/);
    for (const name of row.names) t.regex(name, /^(--X?[a-z0-9]+(-[a-z0-9]+)*|-[a-zA-Z])$/);
  }
});
