/**
 * JSON-RPC WebSocket authentication against node processes (rpc-auth-cli.md §6.5, §8): the token of the
 * upgrade request, checked again with every call; `POST /login` on the WebSocket port with its own key
 * (a token of the HTTP service is refused there, and the reverse); eth_subscribe needing its permission;
 * the attack list on the upgrade header; a subscription that stops when its token expires; ethers'
 * WebSocketProvider carrying the bearer header on its upgrade; a key the WebSocket service must not use
 * stops the node at start-up.
 */
import test from 'ava';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Network, WebSocketProvider } from 'ethers';
import WebSocket from 'ws';
import { removeDataPath, runCli, startNode, tempDataPath, type NodeProcess } from '../helpers/node-process.js';
import {
  decodeToken,
  EXAMPLE_CREDENTIALS,
  generateTestKey,
  hs256WithPublicKey,
  nowSeconds,
  signToken,
  unsignedToken,
  validClaims,
  withTamperedPayload,
} from '../helpers/jwt.js';
import { WsClient } from '../helpers/ws-client.js';

const keyDir = tempDataPath();
const credentialsFile = join(keyDir, 'credentials.toml');
writeFileSync(credentialsFile, EXAMPLE_CREDENTIALS);
/** The key of the public-key node: ES256 on secp256k1. */
const k1 = generateTestKey({ ec: 'secp256k1' });
const k1File = join(keyDir, 'k1.pem');
writeFileSync(k1File, k1.publicPem);

const started: NodeProcess[] = [];
const clients: WsClient[] = [];

/** A node started by the first test that needs it, with its WebSocket port. */
function sharedNode(args: string[]): () => Promise<{ node: NodeProcess; wsPort: number }> {
  let running: Promise<{ node: NodeProcess; wsPort: number }> | undefined;
  return () =>
    (running ??= (async () => {
      const node = await startNode({ args: ['--rpc-ws-enabled', ...args] });
      started.push(node);
      return { node, wsPort: Number(new URL(node.wsUrl!).port) };
    })());
}

/** Credentials mode on both services, each with its own key; two transport threads. */
const withCredentials = sharedNode([
  '--rpc-http-workers=2',
  '--rpc-http-authentication-enabled',
  `--rpc-http-authentication-credentials-file=${credentialsFile}`,
  '--rpc-ws-authentication-enabled',
  `--rpc-ws-authentication-credentials-file=${credentialsFile}`,
]);

/** Public-key mode on WebSocket only (ES256, secp256k1), net_version open to anyone; HTTP without authentication. */
const withPublicKey = sharedNode([
  '--rpc-http-workers=1',
  '--rpc-ws-authentication-enabled',
  `--rpc-ws-authentication-jwt-public-key-file=${k1File}`,
  '--rpc-ws-authentication-jwt-algorithm=ES256',
  '--rpc-ws-api-methods-no-auth=net_version',
  '--logging=DEBUG',
]);

test.after.always(async () => {
  for (const client of clients) client.socket.terminate();
  await Promise.all(started.map((node) => node.kill()));
  for (const node of started) removeDataPath(node.dataPath);
  removeDataPath(keyDir);
});

/** A WebSocket connection whose upgrade request carries `authorization` (none when undefined). */
async function connect(wsPort: number, authorization?: string): Promise<WsClient> {
  const client = await WsClient.open(`ws://127.0.0.1:${wsPort}`, authorization === undefined ? {} : { headers: { authorization } });
  clients.push(client);
  return client;
}

const bearer = (token: string) => `Bearer ${token}`;
const unauthorizedFrame = (id: unknown) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-40100,"message":"Unauthorized"}}`;

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; statusText: string; contentType: string | null; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, statusText: response.statusText, contentType: response.headers.get('content-type'), body: await response.text() };
}

async function login(url: string, username: string): Promise<string> {
  const answer = await post(`${url}/login`, JSON.stringify({ username, password: 'pegasys' }));
  if (answer.status !== 200) throw new Error(`login of ${username} at ${url} answered ${answer.status}: ${answer.body}`);
  return (JSON.parse(answer.body) as { token: string }).token;
}

/** Sends one raw message and answers the next message received. */
async function exchange(client: WsClient, text: string): Promise<string> {
  const from = client.received.length;
  client.send(text);
  return (await client.waitFor(() => true, from)).text;
}

const request = (method: string, id: unknown = 1, params: unknown[] = []) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

// ---------------------------------------------------------------------------------------------
// Credentials mode
// ---------------------------------------------------------------------------------------------

test('POST /login on the WebSocket port: every answer of §8.4, RS256 tokens with the claims in order', async (t) => {
  const { wsPort } = await withCredentials();
  const url = `http://127.0.0.1:${wsPort}`;
  for (const body of ['', 'null', '{"username":"admin"}', '{"password":"pegasys"}']) {
    const answer = await post(`${url}/login`, body);
    t.deepEqual([answer.status, answer.statusText, answer.body], [400, 'Bad Request', 'Authentication failed: username and password are required.'], body);
  }
  for (const [username, password] of [['admin', 'wrong'], ['nobody', 'pegasys']]) {
    const answer = await post(`${url}/login`, JSON.stringify({ username, password }));
    t.deepEqual([answer.status, answer.statusText, answer.body], [401, 'Unauthorized', 'Authentication failed: the username or password is incorrect.']);
  }
  const ok = await post(`${url}/login`, '{"username":"user","password":"pegasys"}');
  t.is(ok.status, 200);
  t.is(ok.contentType, 'application/json');
  const { payload, headerText } = decodeToken((JSON.parse(ok.body) as { token: string }).token);
  t.is(headerText, '{"typ":"JWT","alg":"RS256"}');
  t.deepEqual(Object.keys(payload), ['permissions', 'username', 'privacyPublicKey', 'iat', 'exp']);
  t.deepEqual(payload.permissions, ['net:*', 'eth:blockNumber', 'web3:*']);
  t.is(payload.exp, (payload.iat as number) + 300);
  // The port serves no other plain HTTP request.
  const other = await fetch(`${url}/login`);
  t.deepEqual([other.status, await other.text()], [400, "Websocket endpoint can't handle HTTP requests"]);
});

test.serial('basalt password hash makes a hash the node logs in with; the credentials file is read again on each login', async (t) => {
  const { wsPort } = await withCredentials();
  const url = `http://127.0.0.1:${wsPort}`;
  const hashed = await runCli(['password', 'hash', '--password=s3cret phrase']);
  t.is(hashed.code, 0, hashed.output);
  t.regex(hashed.stdout, /^\$2a\$10\$[./A-Za-z0-9]{53}\n$/);
  const usage = await runCli(['password']);
  t.is(usage.code, 0);
  t.true(usage.stdout.startsWith('Usage:'), usage.output);
  const missing = await runCli(['password', 'hash']);
  t.is(missing.code, 2);
  t.true(missing.stderr.startsWith("Missing required option: '--password=<password>'"), missing.output);

  const newcomer = JSON.stringify({ username: 'newcomer', password: 's3cret phrase' });
  t.is((await post(`${url}/login`, newcomer)).status, 401);
  // Replaced whole (written aside, then renamed), so that no login reads a half-written file.
  const edited = `${credentialsFile}.new`;
  writeFileSync(edited, `${EXAMPLE_CREDENTIALS}\n[Users.newcomer]\npassword = "${hashed.stdout.trimEnd()}"\npermissions = ["eth:subscribe"]\n`);
  renameSync(edited, credentialsFile);
  try {
    const answer = await post(`${url}/login`, newcomer);
    t.is(answer.status, 200, answer.body);
    const token = (JSON.parse(answer.body) as { token: string }).token;
    t.deepEqual(decodeToken(token).payload.permissions, ['eth:subscribe']);
    const client = await connect(wsPort, bearer(token));
    // Refused first, subscribed last: once subscribed, a new head's notification may come before any answer.
    t.is(await exchange(client, request('eth_blockNumber', 2)), unauthorizedFrame(2));
    t.regex(await exchange(client, request('eth_subscribe', 1, ['newHeads'])), /^\{"jsonrpc":"2.0","id":1,"result":"0x[0-9a-f]+"\}$/);
  } finally {
    writeFileSync(edited, EXAMPLE_CREDENTIALS);
    renameSync(edited, credentialsFile);
  }
  t.is((await post(`${url}/login`, newcomer)).status, 401);
});

test('a connection upgraded without a token: accepted, every method -40100 with its id, unknown and disabled methods first', async (t) => {
  const { wsPort } = await withCredentials();
  const client = await connect(wsPort);
  t.is(await exchange(client, request('eth_blockNumber', 7)), unauthorizedFrame(7));
  t.is(await exchange(client, request('web3_clientVersion', 'w')), unauthorizedFrame('w'), 'no method is open without a no-auth list');
  t.is(await exchange(client, request('eth_subscribe', 8, ['newHeads'])), unauthorizedFrame(8));
  t.is(await exchange(client, request('nope_nothing', 9)), '{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}}');
  t.is(await exchange(client, request('admin_peers', 10)), '{"jsonrpc":"2.0","id":10,"error":{"code":-32604,"message":"Method not enabled"}}');
  // Unlike HTTP, WebSocket messages are parsed whatever the token (§6.5): the §6.2 answers stand.
  t.is(await exchange(client, '{not json'), '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
  t.is(await exchange(client, '[]'), '[]');
  t.is(await exchange(client, `[${request('eth_blockNumber', 1)},${request('net_version', 2)}]`), `[${unauthorizedFrame(1)},${unauthorizedFrame(2)}]`);
});

test('the upgrade\'s Authorization must be exactly "Bearer <token>"', async (t) => {
  const { wsPort } = await withCredentials();
  const token = await login(`http://127.0.0.1:${wsPort}`, 'admin');
  t.regex(await exchange(await connect(wsPort, bearer(token)), request('eth_blockNumber')), /"result":"0x[0-9a-f]+"/);
  for (const authorization of [`bearer ${token}`, `BEARER ${token}`, `Bearer  ${token}`, `Bearer${token}`, `Basic ${token}`, token]) {
    t.is(await exchange(await connect(wsPort, authorization), request('eth_blockNumber', 'x')), unauthorizedFrame('x'), authorization.slice(0, 12));
  }
  // No query-string token either (§6.5).
  const byQuery = await WsClient.open(`ws://127.0.0.1:${wsPort}/?token=${token}`);
  clients.push(byQuery);
  t.is(await exchange(byQuery, request('eth_blockNumber', 'q')), unauthorizedFrame('q'));
});

test('each service signs with its own key: a token of the HTTP service is refused on WebSocket, and the reverse', async (t) => {
  const { node, wsPort } = await withCredentials();
  const httpToken = await login(node.url, 'admin');
  const wsToken = await login(`http://127.0.0.1:${wsPort}`, 'admin');
  t.is(await exchange(await connect(wsPort, bearer(httpToken)), request('eth_blockNumber', 'h')), unauthorizedFrame('h'));
  t.regex(await exchange(await connect(wsPort, bearer(wsToken)), request('eth_blockNumber')), /"result":"0x[0-9a-f]+"/);
  const onHttp = await post(node.url, request('eth_blockNumber', 'w'), { authorization: bearer(wsToken) });
  t.deepEqual([onHttp.status, onHttp.body], [401, unauthorizedFrame('w')]);
  t.is((await post(node.url, request('eth_blockNumber'), { authorization: bearer(httpToken) })).status, 200);
});

test('permissions per call on WebSocket: eth_subscribe needs its own, a batch cannot escalate', async (t) => {
  const { wsPort } = await withCredentials();
  const user = await connect(wsPort, bearer(await login(`http://127.0.0.1:${wsPort}`, 'user')));
  t.regex(await exchange(user, request('eth_blockNumber')), /"result":"0x[0-9a-f]+"/);
  t.is(await exchange(user, request('net_version', 2)), '{"jsonrpc":"2.0","id":2,"result":"1337"}');
  t.is(await exchange(user, request('eth_chainId', 3)), unauthorizedFrame(3));
  t.is(await exchange(user, request('eth_subscribe', 4, ['newHeads'])), unauthorizedFrame(4));
  t.is(await exchange(user, request('eth_unsubscribe', 5, ['0x1'])), unauthorizedFrame(5));
  const batch = JSON.parse(
    await exchange(user, `[${request('eth_blockNumber', 1)},${request('eth_chainId', 2)},${request('eth_subscribe', 3, ['newHeads'])},${request('admin_peers', 4)}]`),
  ) as { id: number; error?: { code: number } }[];
  t.deepEqual(batch.map((entry) => [entry.id, entry.error?.code ?? 'ok']), [[1, 'ok'], [2, -40100], [3, -40100], [4, -32604]]);

  const admin = await connect(wsPort, bearer(await login(`http://127.0.0.1:${wsPort}`, 'admin')));
  const subscription = await admin.subscribe('newHeads');
  const [head] = (await admin.notificationsOf(subscription, 1)) as { number: string }[];
  t.regex(head!.number, /^0x[0-9a-f]+$/);
  t.is((await admin.call('eth_unsubscribe', [subscription])).result, true);
});

test('ethers WebSocketProvider with the bearer header on its upgrade', async (t) => {
  const { wsPort } = await withCredentials();
  const url = `ws://127.0.0.1:${wsPort}`;
  const token = await login(`http://127.0.0.1:${wsPort}`, 'admin');
  const provider = new WebSocketProvider(() => new WebSocket(url, { headers: { Authorization: bearer(token) } }), undefined, { staticNetwork: true });
  const anonymous = new WebSocketProvider(url, undefined, { staticNetwork: Network.from(1337) });
  try {
    t.is((await provider.getNetwork()).chainId, 1337n);
    const first = await provider.getBlockNumber();
    const heard = await new Promise<number>((resolve) => void provider.on('block', (number: number) => resolve(number)));
    t.true(heard >= first);
    const refused = await t.throwsAsync(anonymous.send('eth_blockNumber', []));
    t.regex(JSON.stringify(refused), /-40100|Unauthorized/);
  } finally {
    await provider.destroy();
    await anonymous.destroy();
  }
});

// ---------------------------------------------------------------------------------------------
// Public-key mode (ES256 on secp256k1)
// ---------------------------------------------------------------------------------------------

test('attacks on the upgrade token all fail; the no-auth method answers whatever the token', async (t) => {
  const { wsPort } = await withPublicKey();
  const now = nowSeconds();
  const valid = signToken(k1.privateKey, 'ES256', validClaims(['eth:*']));
  const accepted = await connect(wsPort, bearer(valid));
  t.regex(await exchange(accepted, request('eth_blockNumber')), /"result":"0x[0-9a-f]+"/);
  t.regex(await exchange(await connect(wsPort, bearer(signToken(k1.privateKey, 'ES256K', validClaims(['eth:*'])))), request('eth_blockNumber')), /"result"/);
  const attacks: Record<string, string | undefined> = {
    'no token': undefined,
    'alg none': unsignedToken(validClaims()),
    'HS256 with the public key as secret': hs256WithPublicKey(k1.publicPem, validClaims()),
    'signed by another secp256k1 key': signToken(generateTestKey({ ec: 'secp256k1' }).privateKey, 'ES256', validClaims()),
    'signed by a P-256 key': signToken(generateTestKey({ ec: 'prime256v1' }).privateKey, 'ES256', validClaims()),
    'tampered payload, original signature': withTamperedPayload(valid, validClaims(['*:*'])),
    expired: signToken(k1.privateKey, 'ES256', { permissions: ['*:*'], iat: now - 600, exp: now - 1 }),
    'no exp': signToken(k1.privateKey, 'ES256', { permissions: ['*:*'], iat: now }),
    'nbf in the future': signToken(k1.privateKey, 'ES256', validClaims(['*:*'], { nbf: now + 120 })),
    'ES384 under an ES256 key': signToken(generateTestKey({ ec: 'secp384r1' }).privateKey, 'ES384', validClaims()),
  };
  for (const [attack, token] of Object.entries(attacks)) {
    const client = await connect(wsPort, token === undefined ? undefined : bearer(token));
    t.is(await exchange(client, request('eth_blockNumber', 'a')), unauthorizedFrame('a'), attack);
    t.is(await exchange(client, request('eth_subscribe', 'b', ['newHeads'])), unauthorizedFrame('b'), attack);
    t.is(await exchange(client, request('net_version', 'n')), '{"jsonrpc":"2.0","id":"n","result":"1337"}', attack);
    await client.close();
  }
});

test('public-key mode: /login on the WebSocket port answers 400 Authentication not enabled; HTTP stays open', async (t) => {
  const { node, wsPort } = await withPublicKey();
  const answer = await post(`http://127.0.0.1:${wsPort}/login`, '{"username":"admin","password":"pegasys"}');
  t.deepEqual([answer.status, answer.statusText, answer.body], [400, 'Authentication not enabled', '']);
  t.regex((await post(node.url, request('eth_blockNumber'))).body, /"result"/, 'authentication is per service');
});

test('a subscription stops when its token expires; the connection stays for the no-auth methods; others keep theirs', async (t) => {
  const { node, wsPort } = await withPublicKey();
  const now = nowSeconds();
  const shortLived = await connect(wsPort, bearer(signToken(k1.privateKey, 'ES256', { permissions: ['eth:*'], iat: now, exp: now + 4 })));
  const longLived = await connect(wsPort, bearer(signToken(k1.privateKey, 'ES256', validClaims(['eth:*']))));
  const since = node.output().length;
  const expiring = await shortLived.subscribe('newHeads');
  const lasting = await longLived.subscribe('newHeads');
  await shortLived.notificationsOf(expiring, 1);

  await node.waitForLog(/A WebSocket connection's token expired: its 1 subscription\(s\) dropped/, { since, timeoutMs: 20_000 });
  const heardBefore = shortLived.notifications(expiring).length;
  // The next block reaches the connection whose token is valid. Both connections are served by the
  // one transport thread, which writes a block's notifications to every subscriber at once: had the
  // expired connection still been subscribed, its notification would come before the answer below.
  const lastingCount = longLived.notifications(lasting).length;
  await longLived.notificationsOf(lasting, lastingCount + 1);
  t.is(await exchange(shortLived, request('net_version', 'n')), '{"jsonrpc":"2.0","id":"n","result":"1337"}');
  t.is(shortLived.notifications(expiring).length, heardBefore, 'no notification after the token expired');
  t.is(await exchange(shortLived, request('eth_blockNumber', 'e')), unauthorizedFrame('e'));
  t.is(await exchange(shortLived, request('eth_subscribe', 's', ['newHeads'])), unauthorizedFrame('s'));
  t.deepEqual(JSON.parse(await exchange(longLived, request('eth_blockNumber', 'l'))).error, undefined);
});

test('start-up: a WebSocket key the service must not use stops the node with exit 2', async (t) => {
  const dataPath = tempDataPath();
  const weak = join(keyDir, 'rsa-1024.pem');
  writeFileSync(weak, generateTestKey({ rsa: 1024 }).publicPem);
  try {
    const run = await runCli([
      '--network=dev', `--data-path=${dataPath}`, '--p2p-enabled=false', '--rpc-ws-enabled', '--rpc-ws-port=0',
      '--rpc-ws-authentication-enabled', `--rpc-ws-authentication-jwt-public-key-file=${weak}`,
    ]);
    t.is(run.code, 2, run.output);
    t.true(run.output.includes('Failed to start Basalt: Authentication RPC public key is a 1024-bit RSA key, but RS256 needs at least 2048 bits'), run.output);
    t.false(run.output.includes('Websocket service started'));
  } finally {
    removeDataPath(dataPath);
  }
});
