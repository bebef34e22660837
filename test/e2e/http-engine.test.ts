/**
 * The HTTP engine a node chooses at start (src/main/supervisor/http-engine.ts), in real processes:
 * uWebSockets.js where it loads, `node:http` and `ws` with one warning where it does not (made so
 * here with uWS' own UWS_USE_FALLBACK switch, as on a Node without a uWS build), serving JSON-RPC over
 * HTTP and WebSocket and GraphQL alike; `--Xhttp-engine=UWS` refused where uWS cannot serve.
 */
import test from 'ava';
import { probeNativeUws } from '../../src/main/supervisor/http-engine.js';
import { removeDataPath, runCli, startNode, tempDataPath } from '../helpers/node-process.js';
import { WsClient } from '../helpers/ws-client.js';

const ENGINE_LINE = /HTTP engine: .*/g;
const ALL_PORTS = ['--rpc-ws-enabled', '--rpc-http-workers=2'];

test('AUTO on this Node: the engine is logged once; uWebSockets.js when its build loads', async (t) => {
  const node = await startNode({ args: ['--Xhttp-engine=AUTO'] });
  try {
    const lines = node.output().match(ENGINE_LINE) ?? [];
    t.is(lines.length, 1);
    t.regex(lines[0]!, probeNativeUws().loaded ? /^HTTP engine: uWebSockets\.js \(.+@.+, native\)/ : /^HTTP engine: node:http and ws, because/);
    t.is(await node.rpc('eth_chainId'), '0x539');
  } finally {
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

// On Node 22/24 with a glibc older than 2.38 neither installed uWS build loads (CI runs this file under Node 22 from the npm
// registry: .ci/run); on Node 20 it loads and the first test above covers it.
const withoutUwsBinary = !probeNativeUws().loaded && process.env.UWS_USE_FALLBACK === undefined;
(withoutUwsBinary ? test : test.skip)('AUTO on a Node the uWebSockets.js build has no binary for: node:http serves, after a warning that says so', async (t) => {
  const node = await startNode({ args: ['--Xhttp-engine=AUTO'] });
  try {
    const escapedVersion = process.version.replace(/\./g, '\\.');
    t.regex(node.output(), new RegExp(`WARN +\\| Supervisor \\| HTTP engine: node:http and ws, because uWebSockets\\.js \\(.+\\) cannot serve: .*it has no binary for Node ${escapedVersion} \\(linux-x64, ABI ${process.versions.modules}\\)`));
    t.is(await node.rpc('eth_chainId'), '0x539');
  } finally {
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

test('where uWebSockets.js cannot serve, node:http and ws serve HTTP, WebSocket and GraphQL after one warning', async (t) => {
  const node = await startNode({ args: ['--Xhttp-engine=AUTO', ...ALL_PORTS], graphql: true, env: { UWS_USE_FALLBACK: '1' } });
  const ws = await WsClient.open(node.wsUrl!);
  try {
    const lines = node.output().match(ENGINE_LINE) ?? [];
    t.is(lines.length, 1);
    t.regex(node.output(), /WARN +\| Supervisor \| HTTP engine: node:http and ws, because uWebSockets\.js \(.+\) cannot serve: UWS_USE_FALLBACK forces its JavaScript shim\. Same routes and answers, slower/);
    t.is(await node.rpc('eth_chainId'), '0x539');
    t.is((await ws.call('eth_chainId')).result, '0x539');
    const reply = await fetch(node.graphqlUrl!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ chainID }' }) });
    t.deepEqual(await reply.json(), { data: { chainID: '0x539' } });
  } finally {
    await ws.close();
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

test('--Xhttp-engine=UWS where uWebSockets.js cannot serve is refused with the reason', async (t) => {
  const dataPath = tempDataPath();
  const { code, output } = await runCli(['--network=dev', `--data-path=${dataPath}`, '--rpc-http-enabled', '--rpc-http-port=0', '--p2p-enabled=false', '--Xhttp-engine=UWS'], {
    env: { UWS_USE_FALLBACK: '1' },
    timeoutMs: 30_000,
  });
  removeDataPath(dataPath);
  t.is(code, 2);
  t.regex(output, /Failed to start Basalt: --Xhttp-engine=UWS: uWebSockets\.js \(.+\) cannot serve: UWS_USE_FALLBACK forces its JavaScript shim/);
});
