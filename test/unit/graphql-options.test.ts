/**
 * The GraphQL options (spec rpc-auth-cli.md §10.1, §11): Besu's `--graphql-http-*` and Basalt's query
 * limits, with their defaults, on the command line, in the environment and in the config file, and
 * the cross-option rules they take part in.
 */
import test from 'ava';
import { CliUsageError } from '../../src/main/cli/errors.js';
import { dependencyWarnings, resolveOptions, type Environment } from '../../src/main/cli/resolve.js';
import { BESU_MAX_QUERY_COMPLEXITY } from '../../src/transport/graphql/limits.js';
import { transportWorkerRoles } from '../../src/main/supervisor/node.js';

function resolve(argv: string[], env: Environment = {}, toml?: string) {
  const files: Record<string, string> = toml === undefined ? {} : { '/etc/basalt.toml': toml };
  const read = (path: string) => {
    const content = files[path];
    if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return content;
  };
  return resolveOptions(toml === undefined ? argv : ['--config-file=/etc/basalt.toml', ...argv], env, read);
}

test('defaults: off, 127.0.0.1:8547, no CORS origin, Besu\'s complexity limit, no depth limit', (t) => {
  const options = resolve([]);
  t.false(options.graphqlHttpEnabled);
  t.is(options.graphqlHttpHost, '127.0.0.1');
  t.is(options.graphqlHttpPort, 8547);
  t.deepEqual(options.graphqlHttpCorsOrigins, []);
  t.is(options.graphqlMaxQueryComplexity, BESU_MAX_QUERY_COMPLEXITY);
  t.is(options.graphqlMaxQueryDepth, 0);
  t.is(options.graphqlHttpWorkers, 0);
});

const GIVEN = {
  graphqlHttpEnabled: true,
  graphqlHttpHost: '0.0.0.0',
  graphqlHttpPort: 9547,
  graphqlHttpCorsOrigins: ['http://a.example', 'http://b.example'],
  graphqlMaxQueryComplexity: 500,
  graphqlMaxQueryDepth: 12,
  graphqlHttpWorkers: 3,
};

function picked(options: ReturnType<typeof resolve>) {
  const { graphqlHttpEnabled, graphqlHttpHost, graphqlHttpPort, graphqlHttpCorsOrigins, graphqlMaxQueryComplexity, graphqlMaxQueryDepth, graphqlHttpWorkers } = options;
  return { graphqlHttpEnabled, graphqlHttpHost, graphqlHttpPort, graphqlHttpCorsOrigins, graphqlMaxQueryComplexity, graphqlMaxQueryDepth, graphqlHttpWorkers };
}

test('every option on the command line', (t) => {
  const options = resolve([
    '--graphql-http-enabled',
    '--graphql-http-host=0.0.0.0',
    '--graphql-http-port',
    '9547',
    '--graphql-http-cors-origins=http://a.example,http://b.example',
    '--graphql-max-query-complexity=500',
    '--graphql-max-query-depth=12',
    '--graphql-http-workers=3',
  ]);
  t.deepEqual(picked(options), GIVEN);
});

test('every option in the environment', (t) => {
  const options = resolve([], {
    BASALT_GRAPHQL_HTTP_ENABLED: 'true',
    BASALT_GRAPHQL_HTTP_HOST: '0.0.0.0',
    BASALT_GRAPHQL_HTTP_PORT: '9547',
    BASALT_GRAPHQL_HTTP_CORS_ORIGINS: 'http://a.example,http://b.example',
    BASALT_GRAPHQL_MAX_QUERY_COMPLEXITY: '500',
    BASALT_GRAPHQL_MAX_QUERY_DEPTH: '12',
    BASALT_GRAPHQL_HTTP_WORKERS: '3',
  });
  t.deepEqual(picked(options), GIVEN);
});

test('every option in the config file', (t) => {
  const options = resolve(
    [],
    {},
    [
      'graphql-http-enabled=true',
      'graphql-http-host="0.0.0.0"',
      'graphql-http-port=9547',
      'graphql-http-cors-origins=["http://a.example","http://b.example"]',
      'graphql-max-query-complexity=500',
      'graphql-max-query-depth=12',
      'graphql-http-workers=3',
    ].join('\n'),
  );
  t.deepEqual(picked(options), GIVEN);
});

test('the command line beats the environment, which beats the config file', (t) => {
  const options = resolve(['--graphql-http-port=1001'], { BASALT_GRAPHQL_HTTP_PORT: '1002', BASALT_GRAPHQL_HTTP_HOST: '10.0.0.1' }, 'graphql-http-port=1003\ngraphql-http-host="10.0.0.2"');
  t.is(options.graphqlHttpPort, 1001);
  t.is(options.graphqlHttpHost, '10.0.0.1');
});

test('CORS origins: all means any origin; an invalid pattern is Besu\'s error', (t) => {
  t.deepEqual(resolve(['--graphql-http-cors-origins=all']).graphqlHttpCorsOrigins, ['*']);
  const error = t.throws(() => resolve(['--graphql-http-cors-origins=(']), { instanceOf: CliUsageError });
  t.is(error?.message, 'Domain values result in invalid regex pattern');
});

test('limits: complexity at least 1, depth 0 (none) or more', (t) => {
  t.throws(() => resolve(['--graphql-max-query-complexity=0']), { instanceOf: CliUsageError });
  t.throws(() => resolve(['--graphql-max-query-depth=-1']), { instanceOf: CliUsageError });
  t.is(resolve(['--graphql-max-query-depth=0']).graphqlMaxQueryDepth, 0);
});

test('the GraphQL port must differ from the other enabled ports', (t) => {
  const clash = "Port number '8545' has been specified multiple times. Please review the supplied configuration.";
  const error = t.throws(() => resolve(['--rpc-http-enabled', '--graphql-http-enabled', '--graphql-http-port=8545']), { instanceOf: CliUsageError });
  t.is(error?.message, clash);
  t.notThrows(() => resolve(['--rpc-http-enabled', '--graphql-http-port=8545']), 'a disabled service holds no port');
  t.notThrows(() => resolve(['--rpc-http-enabled', '--rpc-http-port=0', '--graphql-http-enabled', '--graphql-http-port=0', '--p2p-port=0']));
});

test('GraphQL options given without --graphql-http-enabled are reported as ignored', (t) => {
  t.deepEqual(dependencyWarnings(resolve(['--graphql-http-port=9547', '--graphql-max-query-depth=3'])), [
    '--graphql-http-port, --graphql-max-query-depth has been ignored because --graphql-http-enabled was not defined on the command line.',
  ]);
  t.deepEqual(dependencyWarnings(resolve(['--graphql-http-enabled', '--graphql-http-port=9547'])), []);
});

test('transport threads: GraphQL shares the JSON-RPC threads unless it is given its own, which come first', (t) => {
  const role = (jsonRpc: boolean, graphql: boolean, ipc = false) => ({ jsonRpc, ipc, graphql });
  t.deepEqual(transportWorkerRoles(resolve(['--rpc-http-enabled', '--graphql-http-enabled', '--rpc-http-workers=2'])), [role(true, true), role(true, true)]);
  t.deepEqual(transportWorkerRoles(resolve(['--graphql-http-enabled', '--rpc-http-workers=2'])), [role(false, true), role(false, true)]);
  t.deepEqual(transportWorkerRoles(resolve(['--rpc-http-enabled', '--graphql-http-enabled', '--rpc-http-workers=2', '--graphql-http-workers=1'])), [
    role(false, true),
    role(true, false),
    role(true, false),
  ]);
  t.deepEqual(transportWorkerRoles(resolve(['--rpc-ws-enabled', '--graphql-http-enabled', '--rpc-http-workers=1', '--graphql-http-workers=2'])), [
    role(false, true),
    role(false, true),
    role(true, false),
  ]);
  t.deepEqual(transportWorkerRoles(resolve(['--graphql-http-enabled', '--graphql-http-workers=1'])), [role(false, true)]);
  t.deepEqual(transportWorkerRoles(resolve(['--graphql-http-workers=1'])), [], 'nothing to serve');
  t.deepEqual(transportWorkerRoles(resolve(['--rpc-http-enabled', '--rpc-http-workers=1', '--graphql-http-workers=1'])), [role(true, false)]);
  // IPC is on the first JSON-RPC thread; alone it needs one thread, shared GraphQL takes them all.
  t.deepEqual(transportWorkerRoles(resolve(['--Xrpc-ipc-enabled', '--rpc-http-enabled', '--graphql-http-enabled', '--rpc-http-workers=2', '--graphql-http-workers=1'])), [
    role(false, true),
    role(true, false, true),
    role(true, false),
  ]);
  t.deepEqual(transportWorkerRoles(resolve(['--Xrpc-ipc-enabled', '--graphql-http-enabled', '--graphql-http-workers=1'])), [role(false, true), role(false, false, true)]);
  t.deepEqual(transportWorkerRoles(resolve(['--Xrpc-ipc-enabled', '--graphql-http-enabled', '--rpc-http-workers=2'])), [role(false, true, true), role(false, true)]);
});

test('--rpc-http-workers is reported as ignored only when no JSON-RPC port and no shared GraphQL port uses it', (t) => {
  const ignored = (argv: string[]) => dependencyWarnings(resolve(argv)).some((w) => w.includes('--rpc-http-workers'));
  t.false(ignored(['--graphql-http-enabled', '--rpc-http-workers=2']));
  t.true(ignored(['--graphql-http-enabled', '--graphql-http-workers=1', '--rpc-http-workers=2']));
  t.false(ignored(['--rpc-ws-enabled', '--rpc-http-workers=2']));
});
