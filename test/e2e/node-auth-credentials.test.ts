/**
 * JSON-RPC HTTP authentication in credentials mode against a node process: `/login` with `fetch`, its
 * tokens used by ethers (a FetchRequest carrying the bearer header) and by raw requests, every answer of
 * §8.4/§8.6, the routes that need no token, the credentials file read again on each login, and the key
 * shared by every HTTP worker thread of the node.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FetchRequest, JsonRpcProvider, Network } from 'ethers';
import { removeDataPath, startNode, tempDataPath, type NodeProcess } from '../helpers/node-process.js';
import { decodeToken, EXAMPLE_CREDENTIALS, PEGASYS_HASH } from '../helpers/jwt.js';

const keyDir = tempDataPath();
const credentialsFile = join(keyDir, 'credentials.toml');
writeFileSync(credentialsFile, EXAMPLE_CREDENTIALS);

let node: NodeProcess;

test.before(async () => {
  node = await startNode({
    args: ['--rpc-http-workers=2', '--rpc-http-authentication-enabled', `--rpc-http-authentication-credentials-file=${credentialsFile}`],
  });
});

test.after.always(async () => {
  await node?.kill();
  if (node) removeDataPath(node.dataPath);
  removeDataPath(keyDir);
});

interface Answer {
  status: number;
  statusText: string;
  contentType: string | null;
  body: string;
}

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, statusText: response.statusText, contentType: response.headers.get('content-type'), body: await response.text() };
}

async function login(username: string, password: string): Promise<string> {
  const answer = await post('/login', JSON.stringify({ username, password }));
  if (answer.status !== 200) throw new Error(`login of ${username} answered ${answer.status}: ${answer.body}`);
  return (JSON.parse(answer.body) as { token: string }).token;
}

const call = (method: string, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params: [] });
const UNAUTHORIZED_NULL_ID = '{"jsonrpc":"2.0","id":null,"error":{"code":-40100,"message":"Unauthorized"}}';

test('/login: 400 without username or password, 401 for a wrong password or an unknown user, 200 with a token', async (t) => {
  for (const body of ['', 'null', '{"username":"admin"}', '{"password":"pegasys"}']) {
    const answer = await post('/login', body);
    t.is(answer.status, 400, body);
    t.is(answer.statusText, 'Bad Request');
    t.is(answer.body, 'Authentication failed: username and password are required.');
  }
  for (const [username, password] of [['admin', 'wrong'], ['nobody', 'pegasys'], ['Admin', 'pegasys']]) {
    const answer = await post('/login', JSON.stringify({ username, password }));
    t.is(answer.status, 401);
    t.is(answer.statusText, 'Unauthorized', `${username}: ${JSON.stringify(answer)}`);
    t.is(answer.body, 'Authentication failed: the username or password is incorrect.');
  }
  const ok = await post('/login', '{"username":"user","password":"pegasys"}');
  t.is(ok.status, 200);
  t.is(ok.contentType, 'application/json');
  const { header, payload, headerText } = decodeToken((JSON.parse(ok.body) as { token: string }).token);
  t.is(headerText, '{"typ":"JWT","alg":"RS256"}');
  t.deepEqual(Object.keys(payload), ['permissions', 'username', 'privacyPublicKey', 'iat', 'exp']);
  t.deepEqual(payload.permissions, ['net:*', 'eth:blockNumber', 'web3:*']);
  t.is(payload.exp, (payload.iat as number) + 300);
  t.is(header.alg, 'RS256');
});

test('without a token: 401 with id null before parsing, even bad JSON and unknown methods', async (t) => {
  for (const body of [call('eth_blockNumber'), '{not json', call('nope_nothing'), `[${call('eth_blockNumber')}]`]) {
    const answer = await post('/', body);
    t.is(answer.status, 401, body);
    t.is(answer.body, UNAUTHORIZED_NULL_ID);
  }
});

test('Authorization other than the exact "Bearer " prefix is no token', async (t) => {
  const token = await login('admin', 'pegasys');
  t.is((await post('/', call('eth_blockNumber'), { authorization: `Bearer ${token}` })).status, 200);
  for (const authorization of [`bearer ${token}`, `BEARER ${token}`, `Bearer  ${token}`, `Bearer\t${token}`, `Bearer${token}`, `Bearer:${token}`, `Basic ${token}`, token]) {
    const answer = await post('/', call('eth_blockNumber'), { authorization });
    t.is(answer.status, 401, authorization.slice(0, 12));
    t.regex(answer.body, /"code":-40100/);
  }
});

test('ethers JsonRpcProvider with a FetchRequest carrying the bearer header', async (t) => {
  const request = (token: string) => {
    const fetchRequest = new FetchRequest(node.url);
    fetchRequest.setHeader('Authorization', `Bearer ${token}`);
    return fetchRequest;
  };
  const admin = new JsonRpcProvider(request(await login('admin', 'pegasys')), undefined, { staticNetwork: Network.from(1337) });
  t.true((await admin.getBlockNumber()) >= 0);
  t.is((await admin.getNetwork()).chainId, 1337n);
  t.is(await admin.send('eth_chainId', []), '0x539');

  const user = new JsonRpcProvider(request(await login('user', 'pegasys')), undefined, { staticNetwork: Network.from(1337), batchMaxCount: 1 });
  t.true((await user.getBlockNumber()) >= 0);
  t.is(await user.send('net_version', []), '1337');
  const refused = await t.throwsAsync(user.send('eth_chainId', []));
  t.regex(JSON.stringify(refused), /-40100/);

  const anonymous = new JsonRpcProvider(node.url, undefined, { staticNetwork: Network.from(1337) });
  await t.throwsAsync(anonymous.getBlockNumber());
  for (const provider of [admin, user, anonymous]) provider.destroy();
});

test('permissions: single calls 401 with their id, a batch cannot escalate, unknown and disabled methods come first', async (t) => {
  const token = await login('user', 'pegasys');
  const auth = { authorization: `Bearer ${token}` };
  t.deepEqual(await post('/', call('eth_chainId', 'c'), auth).then((a) => [a.status, a.body]), [
    401,
    '{"jsonrpc":"2.0","id":"c","error":{"code":-40100,"message":"Unauthorized"}}',
  ]);
  t.is((await post('/', call('web3_clientVersion'), auth)).status, 200);
  t.deepEqual(await post('/', call('nope_nothing', 2), auth).then((a) => [a.status, a.body]), [200, '{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}']);
  t.deepEqual(await post('/', call('admin_peers', 3), auth).then((a) => [a.status, a.body]), [200, '{"jsonrpc":"2.0","id":3,"error":{"code":-32604,"message":"Method not enabled"}}']);

  const batch = await post('/', `[${call('eth_blockNumber', 1)},${call('eth_chainId', 2)},${call('eth_getBalance', 3)},${call('net_version', 4)}]`, auth);
  t.is(batch.status, 200);
  const entries = JSON.parse(batch.body) as { id: number; result?: unknown; error?: { code: number } }[];
  t.deepEqual(entries.map((entry) => [entry.id, entry.error?.code ?? 'ok']), [[1, 'ok'], [2, -40100], [3, -40100], [4, 'ok']]);
});

test('GET /, /liveness, /readiness and /login need no token', async (t) => {
  t.is((await fetch(`${node.url}/`)).status, 201);
  const liveness = await fetch(`${node.url}/liveness`);
  t.is(liveness.status, 200);
  t.is(await liveness.text(), '{\n  "status" : "UP"\n}');
  t.is((await fetch(`${node.url}/readiness?minPeers=0`)).status, 200);
  t.is((await post('/login', '{"username":"admin","password":"wrong"}')).status, 401);
});

test('every HTTP worker thread accepts a token any of them issued (one key per service)', async (t) => {
  const token = await login('admin', 'pegasys');
  // Each fetch to a fresh connection: the kernel spreads them over both workers' listening sockets.
  const statuses = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(node.url, { method: 'POST', headers: { authorization: `Bearer ${token}`, connection: 'close' }, body: call('eth_blockNumber') }).then((r) => r.status),
    ),
  );
  t.deepEqual(statuses, Array(20).fill(200));
});

test.serial('the credentials file is read again on each login', async (t) => {
  t.is((await post('/login', '{"username":"late","password":"pegasys"}')).status, 401);
  const original = readFileSync(credentialsFile, 'utf8');
  writeFileSync(credentialsFile, `${original}\n[Users.late]\npassword = "${PEGASYS_HASH}"\npermissions = ["eth:chainId"]\n`);
  try {
    const token = await login('late', 'pegasys');
    t.deepEqual(decodeToken(token).payload.permissions, ['eth:chainId']);
    t.is((await post('/', call('eth_chainId'), { authorization: `Bearer ${token}` })).status, 200);
  } finally {
    writeFileSync(credentialsFile, original);
  }
  t.is((await post('/login', '{"username":"late","password":"pegasys"}')).status, 401);
});
