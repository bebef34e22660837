/**
 * The WebSocket and IPC options: Besu's names and defaults, the same command-line, environment and
 * TOML forms as every other option, IPC hidden from --help, the port clash with HTTP, and Besu's
 * warning for WebSocket options given without --rpc-ws-enabled.
 */
import test from 'ava';
import { CliUsageError } from '../../src/main/cli/errors.js';
import { renderHelp } from '../../src/main/cli/help.js';
import { OPTION_SPECS, type NodeOptions } from '../../src/main/cli/options.js';
import { dependencyWarnings, resolveOptions } from '../../src/main/cli/resolve.js';

function resolve(argv: string[], env: Record<string, string> = {}, toml?: string): NodeOptions {
  const files: Record<string, string> = toml === undefined ? {} : { '/basalt.toml': toml };
  const readFile = (path: string): string => {
    const content = files[path];
    if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return content;
  };
  return resolveOptions(toml === undefined ? argv : ['--config-file=/basalt.toml', ...argv], env, readFile);
}

test('defaults', (t) => {
  const options = resolve([]);
  t.false(options.rpcWsEnabled);
  t.is(options.rpcWsHost, '127.0.0.1');
  t.is(options.rpcWsPort, 8546);
  t.deepEqual(options.rpcWsApi, ['ETH', 'NET', 'WEB3']);
  t.is(options.rpcWsMaxActiveConnections, 80);
  t.is(options.rpcWsMaxFrameSize, 1048576);
  t.false(options.rpcIpcEnabled);
  t.is(options.rpcIpcPath, undefined);
  t.deepEqual(options.rpcIpcApi, ['ETH', 'NET', 'WEB3']);
});

test('every --rpc-ws-* and --Xrpc-ipc-* option: BASALT_ + upper snake case, TOML key = the long name', (t) => {
  const specs = OPTION_SPECS.filter((spec) => spec.longNames.some((name) => name.startsWith('--rpc-ws-') || name.startsWith('--Xrpc-ipc-')));
  t.is(specs.length, 14);
  for (const spec of specs) {
    t.deepEqual(spec.envNames, spec.longNames.map((name) => `BASALT_${name.slice(2).toUpperCase().replace(/-/g, '_')}`));
    t.deepEqual(spec.tomlKeys, spec.longNames.map((name) => name.slice(2)));
  }
});

test('the three sources, for WebSocket and IPC alike', (t) => {
  const fromEnv = resolve([], {
    BASALT_RPC_WS_ENABLED: 'true',
    BASALT_RPC_WS_PORT: '9546',
    BASALT_RPC_WS_APIS: 'ETH,TXPOOL',
    BASALT_XRPC_IPC_ENABLED: 'true',
    BASALT_XRPC_IPC_PATH: '/run/basalt.ipc',
  });
  t.like(fromEnv, { rpcWsEnabled: true, rpcWsPort: 9546, rpcIpcEnabled: true, rpcIpcPath: '/run/basalt.ipc' });
  t.deepEqual(fromEnv.rpcWsApi, ['ETH', 'TXPOOL']);
  const fromToml = resolve([], {}, 'rpc-ws-enabled = true\nrpc-ws-max-frame-size = 2048\nXrpc-ipc-enabled = true\nXrpc-ipc-api = ["ETH", "DEBUG"]\n');
  t.like(fromToml, { rpcWsEnabled: true, rpcWsMaxFrameSize: 2048, rpcIpcEnabled: true });
  t.deepEqual(fromToml.rpcIpcApi, ['ETH', 'DEBUG']);
  const fromCli = resolve(['--rpc-ws-enabled', '--rpc-ws-max-active-connections=5', '--Xrpc-ipc-apis=NET'], { BASALT_RPC_WS_MAX_ACTIVE_CONNECTIONS: '7' });
  t.is(fromCli.rpcWsMaxActiveConnections, 5);
  t.deepEqual(fromCli.rpcIpcApi, ['NET']);
});

test('--rpc-ws-host defaults to the --p2p-host value (§6.1), however that is given', (t) => {
  t.is(resolve(['--p2p-host=10.1.2.3']).rpcWsHost, '10.1.2.3');
  t.is(resolve([], { BASALT_P2P_HOST: '10.1.2.4' }).rpcWsHost, '10.1.2.4');
  t.is(resolve([], {}, 'p2p-host = "10.1.2.5"\n').rpcWsHost, '10.1.2.5');
  t.is(resolve(['--p2p-host=10.1.2.3', '--rpc-ws-host=0.0.0.0']).rpcWsHost, '0.0.0.0');
  t.is(resolve(['--rpc-ws-host=0.0.0.0'], {}, 'p2p-host = "10.1.2.5"\n').rpcWsHost, '0.0.0.0');
  t.true(renderHelp([]).includes('the --p2p-host value'));
});

test('bad values, and the WebSocket port clashing with the HTTP port', (t) => {
  t.throws(() => resolve(['--rpc-ws-api=ETH,NOPE']), { instanceOf: CliUsageError, message: "Invalid value for option '--rpc-ws-api': invalid entries found [NOPE]" });
  t.throws(() => resolve(['--rpc-ws-port=70000']), { instanceOf: CliUsageError });
  t.throws(() => resolve(['--rpc-ws-enabled', '--rpc-http-enabled', '--rpc-http-port=9000', '--rpc-ws-port=9000']), {
    instanceOf: CliUsageError,
    message: "Port number '9000' has been specified multiple times. Please review the supplied configuration.",
  });
  t.notThrows(() => resolve(['--rpc-ws-enabled', '--rpc-http-enabled', '--rpc-http-port=0', '--rpc-ws-port=0']));
});

test('WebSocket options without --rpc-ws-enabled are ignored with Besu\'s warning; --rpc-http-workers serves WebSocket too', (t) => {
  t.deepEqual(dependencyWarnings(resolve(['--rpc-ws-port=9', '--rpc-ws-api=ETH'])), [
    '--rpc-ws-api, --rpc-ws-port has been ignored because --rpc-ws-enabled was not defined on the command line.',
  ]);
  t.deepEqual(dependencyWarnings(resolve(['--rpc-ws-enabled', '--rpc-ws-port=9', '--rpc-http-workers=2'])), []);
  t.deepEqual(dependencyWarnings(resolve(['--rpc-http-workers=2'])), [
    '--rpc-http-workers has been ignored because --rpc-http-enabled was not defined on the command line.',
  ]);
});

test('--help lists the WebSocket options and hides the IPC ones, as Besu does', (t) => {
  const help = renderHelp([]);
  for (const name of ['--rpc-ws-enabled', '--rpc-ws-host', '--rpc-ws-port', '--rpc-ws-api, --rpc-ws-apis', '--rpc-ws-max-active-connections', '--rpc-ws-max-frame-size']) {
    t.true(help.includes(name), name);
  }
  t.false(help.includes('--Xrpc-ipc'));
});
