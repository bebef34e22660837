/**
 * JSON-RPC HTTP authentication in public-key mode against node processes, with keys generated here: each
 * algorithm (ES256 on both secp256r1 and secp256k1) verifies its tokens; the attack list fails; the no-auth
 * list opens its methods to requests without a token; a key the node must not use stops it at start-up
 * with exit code 2.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDataPath, runCli, startNode, tempDataPath, type NodeProcess } from '../helpers/node-process.js';
import {
  generateTestKey,
  hs256WithPublicKey,
  nowSeconds,
  signToken,
  unsignedToken,
  validClaims,
  withTamperedPayload,
  type KeySpec,
  type TestAlgorithm,
  type TestKeyPair,
} from '../helpers/jwt.js';

const keyDir = tempDataPath();
const started: NodeProcess[] = [];
let keyFiles = 0;

test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  for (const node of started) removeDataPath(node.dataPath);
  removeDataPath(keyDir);
});

function keyFile(pem: string): string {
  const path = join(keyDir, `key-${keyFiles++}.pem`);
  writeFileSync(path, pem);
  return path;
}

async function nodeWithKey(pair: TestKeyPair, algorithm: string, extra: string[] = []): Promise<NodeProcess> {
  const node = await startNode({
    args: [
      '--rpc-http-workers=1',
      '--rpc-http-authentication-enabled',
      `--rpc-http-authentication-jwt-public-key-file=${keyFile(pair.publicPem)}`,
      `--rpc-http-authentication-jwt-algorithm=${algorithm}`,
      ...extra,
    ],
  });
  started.push(node);
  return node;
}

async function post(node: NodeProcess, body: string, token?: string): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(node.url, { method: 'POST', headers, body });
  return { status: response.status, body: await response.text() };
}

const call = (method: string, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params: [] });
const unauthorized = (id: unknown) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-40100,"message":"Unauthorized"}}`;

// ---------------------------------------------------------------------------------------------
// Each algorithm
// ---------------------------------------------------------------------------------------------

const ALGORITHMS: { name: string; key: KeySpec; configured: string; signedAs: TestAlgorithm[] }[] = [
  { name: 'RS256', key: { rsa: 2048 }, configured: 'RS256', signedAs: ['RS256'] },
  { name: 'RS384', key: { rsa: 2048 }, configured: 'rs384', signedAs: ['RS384'] },
  { name: 'RS512', key: { rsa: 3072 }, configured: 'RS512', signedAs: ['RS512'] },
  { name: 'ES256 on secp256r1', key: { ec: 'prime256v1' }, configured: 'ES256', signedAs: ['ES256'] },
  { name: 'ES256 on secp256k1', key: { ec: 'secp256k1' }, configured: 'ES256', signedAs: ['ES256', 'ES256K'] },
  { name: 'ES384', key: { ec: 'secp384r1' }, configured: 'ES384', signedAs: ['ES384'] },
  { name: 'ES512', key: { ec: 'secp521r1' }, configured: 'ES512', signedAs: ['ES512'] },
];

for (const { name, key, configured, signedAs } of ALGORITHMS) {
  test.serial(`${name}: tokens signed by the configured key are accepted, by another key refused`, async (t) => {
    const pair = generateTestKey(key);
    const node = await nodeWithKey(pair, configured);
    for (const algorithm of signedAs) {
      const token = signToken(pair.privateKey, algorithm, validClaims(['eth:*']));
      t.is((await post(node, call('eth_blockNumber'), token)).status, 200, algorithm);
      t.deepEqual(await post(node, call('net_version', 9), token), { status: 401, body: unauthorized(9) }, 'eth:* does not grant net_version');
      const stranger = generateTestKey(key);
      t.deepEqual(await post(node, call('eth_blockNumber', 2), signToken(stranger.privateKey, algorithm, validClaims())), { status: 401, body: unauthorized(2) });
    }
    await node.stop();
  });
}

// ---------------------------------------------------------------------------------------------
// The attack list, against an RS256 node that opens net_version to everyone
// ---------------------------------------------------------------------------------------------

const rsa = generateTestKey({ rsa: 2048 });
let rs256: Promise<NodeProcess> | undefined;
const rs256Node = () => (rs256 ??= nodeWithKey(rsa, 'RS256', ['--rpc-http-api-methods-no-auth=net_version']));

test('attacks on an RS256 node: every forged, altered or stale token gets -40100', async (t) => {
  const node = await rs256Node();
  const now = nowSeconds();
  const valid = signToken(rsa.privateKey, 'RS256', validClaims(['net:*']));
  t.is((await post(node, call('eth_blockNumber'), signToken(rsa.privateKey, 'RS256', validClaims(['*:*'])))).status, 200);
  const attacks: Record<string, string | undefined> = {
    'no token': undefined,
    'alg none': unsignedToken(validClaims()),
    'HS256 with the public key as secret': hs256WithPublicKey(rsa.publicPem, validClaims()),
    'signed by another key': signToken(generateTestKey({ rsa: 2048 }).privateKey, 'RS256', validClaims()),
    'tampered payload, original signature': withTamperedPayload(valid, validClaims(['*:*'])),
    expired: signToken(rsa.privateKey, 'RS256', { permissions: ['*:*'], iat: now - 600, exp: now - 1 }),
    'no exp': signToken(rsa.privateKey, 'RS256', { permissions: ['*:*'], iat: now }),
    'nbf in the future': signToken(rsa.privateKey, 'RS256', validClaims(['*:*'], { nbf: now + 120 })),
    'iat in the future': signToken(rsa.privateKey, 'RS256', validClaims(['*:*'], { iat: now + 120 })),
    'RS512 under an RS256 key': signToken(rsa.privateKey, 'RS512', validClaims()),
  };
  for (const [attack, token] of Object.entries(attacks)) {
    t.deepEqual(await post(node, call('eth_blockNumber', 'a'), token), { status: 401, body: unauthorized('a') }, attack);
    // The no-auth method answers whatever the token.
    t.is((await post(node, call('net_version'), token)).status, 200, attack);
  }
});

test('no-auth list: a request without a token is parsed and answered by the list', async (t) => {
  const node = await rs256Node();
  t.deepEqual(await post(node, call('net_version', 5)), { status: 200, body: '{"jsonrpc":"2.0","id":5,"result":"1337"}' });
  t.deepEqual(await post(node, '{not json'), { status: 400, body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}' });
  t.deepEqual(await post(node, call('nope_nothing', 6)), { status: 200, body: '{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found"}}' });
  const batch = await post(node, `[${call('net_version', 1)},${call('eth_blockNumber', 2)}]`);
  t.is(batch.status, 200);
  t.deepEqual((JSON.parse(batch.body) as { id: number; error?: { code: number } }[]).map((entry) => entry.error?.code ?? 'ok'), ['ok', -40100]);
});

test('a batch mixing permitted and forbidden methods cannot escalate', async (t) => {
  const node = await rs256Node();
  const token = signToken(rsa.privateKey, 'RS256', validClaims(['eth:blockNumber']));
  const batch = await post(node, `[${call('eth_blockNumber', 1)},${call('admin_peers', 2)},${call('eth_getBalance', 3)},${call('eth_chainId', 4)}]`, token);
  t.is(batch.status, 200);
  const entries = JSON.parse(batch.body) as { id: number; result?: string; error?: { code: number; message: string } }[];
  t.regex(entries[0]!.result ?? '', /^0x[0-9a-f]+$/);
  t.deepEqual(entries.slice(1), [
    { jsonrpc: '2.0', id: 2, error: { code: -32604, message: 'Method not enabled' } },
    { jsonrpc: '2.0', id: 3, error: { code: -40100, message: 'Unauthorized' } },
    { jsonrpc: '2.0', id: 4, error: { code: -40100, message: 'Unauthorized' } },
  ]);
});

test('an ES256 token is refused by a node whose key is on another curve', async (t) => {
  const k1 = generateTestKey({ ec: 'secp256k1' });
  const p256 = generateTestKey({ ec: 'prime256v1' });
  const [k1Node, p256Node] = await Promise.all([nodeWithKey(k1, 'ES256'), nodeWithKey(p256, 'ES256')]);
  t.is((await post(k1Node, call('eth_blockNumber'), signToken(p256.privateKey, 'ES256', validClaims()))).status, 401);
  t.is((await post(p256Node, call('eth_blockNumber'), signToken(k1.privateKey, 'ES256', validClaims()))).status, 401);
  t.is((await post(p256Node, call('eth_blockNumber'), signToken(k1.privateKey, 'ES256K', validClaims()))).status, 401);
  t.is((await post(p256Node, call('eth_blockNumber'), signToken(p256.privateKey, 'ES256', validClaims()))).status, 200);
  await Promise.all([k1Node.stop(), p256Node.stop()]);
});

test('/login in public-key mode: 400 Authentication not enabled', async (t) => {
  const node = await rs256Node();
  const response = await fetch(`${node.url}/login`, { method: 'POST', body: '{"username":"admin","password":"pegasys"}' });
  t.is(response.status, 400);
  t.is(response.statusText, 'Authentication not enabled');
  t.is(await response.text(), '');
});

// ---------------------------------------------------------------------------------------------
// Start-up refusals
// ---------------------------------------------------------------------------------------------

async function refusedAtStart(t: import('ava').ExecutionContext, pem: string | undefined, algorithm: string, message: string): Promise<void> {
  const dataPath = tempDataPath();
  try {
    const file = pem === undefined ? join(keyDir, 'absent.pem') : keyFile(pem);
    const run = await runCli([
      '--network=dev', `--data-path=${dataPath}`, '--p2p-enabled=false', '--rpc-http-enabled', '--rpc-http-port=0',
      '--rpc-http-authentication-enabled', `--rpc-http-authentication-jwt-public-key-file=${file}`, `--rpc-http-authentication-jwt-algorithm=${algorithm}`,
    ]);
    t.is(run.code, 2, run.output);
    t.true(run.output.includes(`Failed to start Basalt: ${message}`), run.output);
    t.false(run.output.includes('JSON-RPC HTTP service started'));
  } finally {
    removeDataPath(dataPath);
  }
}

test('start-up: an RSA key under 2048 bits, a key of the wrong kind or curve, HS256, no PEM, no file', async (t) => {
  await refusedAtStart(t, generateTestKey({ rsa: 1024 }).publicPem, 'RS256', 'Authentication RPC public key is a 1024-bit RSA key, but RS256 needs at least 2048 bits');
  await refusedAtStart(t, generateTestKey({ ec: 'secp384r1' }).publicPem, 'ES256', 'Authentication RPC public key is on curve secp384r1, but ES256 needs prime256v1 or secp256k1');
  await refusedAtStart(t, generateTestKey({ ec: 'prime256v1' }).publicPem, 'RS256', 'Authentication RPC public key is an EC key, but RS256 needs an RSA key');
  await refusedAtStart(t, rsa.publicPem, 'HS256', 'Authentication RPC public key cannot verify HS256 tokens');
  await refusedAtStart(t, 'not a key\n', 'RS256', 'Authentication RPC public key file format is invalid');
  await refusedAtStart(t, undefined, 'RS256', 'Authentication RPC public key could not be read');
});
