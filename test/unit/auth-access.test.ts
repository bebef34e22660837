// Who may call what: the bearer header, permission matching, the token cache, and the JSON-RPC body flow
// with authentication (pre-check, availability before permission, batches), all without sockets.
import test from 'ava';
import { Authenticator } from '../../src/transport/auth/authenticator.js';
import { authenticatedJsonRpc, UNAUTHORIZED_REPLY } from '../../src/transport/auth/authenticated-json-rpc.js';
import { bearerToken } from '../../src/transport/auth/bearer.js';
import { ConnectionAuthentication } from '../../src/transport/auth/connection-authentication.js';
import { createAccess, grants, permissionsGranting } from '../../src/transport/auth/permissions.js';
import type { TokenVerifier, VerifiedToken } from '../../src/transport/auth/token-verifier.js';
import { createMethodCaller, type Dispatch, type RpcCaller } from '../../src/transport/jsonrpc.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

test('bearer: exact, case-sensitive "Bearer " prefix', (t) => {
  t.is(bearerToken('Bearer abc.def.ghi'), 'abc.def.ghi');
  t.is(bearerToken('Bearer  abc'), ' abc', 'two spaces: a token no key verifies');
  t.is(bearerToken('Bearer '), '');
  for (const header of [undefined, '', 'bearer abc', 'BEARER abc', 'Bearer\tabc', 'Bearerabc', ' Bearer abc', 'Basic abc', 'Token abc']) {
    t.is(bearerToken(header), undefined, String(header));
  }
});

test('permissions: *:*, <group>:*, <group>:<method> with every _ as :, nothing else', (t) => {
  t.deepEqual(permissionsGranting('eth_getBalance'), ['*:*', 'eth:*', 'eth:getBalance']);
  t.deepEqual(permissionsGranting('engine_preparePayload_debug'), ['*:*', 'engine:*', 'engine:preparePayload:debug']);
  const granted = (permissions: string[], method: string) => grants(new Set(permissions), method);
  t.true(granted(['*:*'], 'admin_addPeer'));
  t.true(granted(['eth:*'], 'eth_getBalance'));
  t.true(granted(['eth:getBalance'], 'eth_getBalance'));
  t.true(granted(['qbft:getPendingVotes'], 'qbft_getPendingVotes'));
  for (const near of ['eth:get*', 'ETH:*', 'eth:getbalance', 'eth_getBalance', '*', '*:getBalance', 'eth:', 'eth:*:*', ' eth:*', 'eth:getBalance ']) {
    t.false(granted([near], 'eth_getBalance'), near);
  }
  t.false(granted(['net:*'], 'eth_blockNumber'));
});

test('access: the no-auth methods for everyone, permissions on top', (t) => {
  const noAuth = new Set(['net_version']);
  const anonymous = createAccess([], noAuth);
  t.true(anonymous.permits('net_version'));
  t.false(anonymous.permits('eth_blockNumber'));
  const user = createAccess(['eth:blockNumber'], noAuth);
  t.true(user.permits('net_version'));
  t.true(user.permits('eth_blockNumber'));
  t.false(user.permits('eth_chainId'));
});

// ---------------------------------------------------------------------------------------------
// The token cache
// ---------------------------------------------------------------------------------------------

function countingVerifier(valid: Record<string, VerifiedToken>): { verifier: TokenVerifier; calls: string[]; release(): void } {
  const calls: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    calls,
    release,
    verifier: {
      async verify(token) {
        calls.push(token);
        await gate;
        return valid[token];
      },
    },
  };
}

test('a token is verified once, concurrent first uses share the verification, then it is cached until exp', async (t) => {
  let now = 1_000_000_000_000;
  const exp = now / 1000 + 300;
  const { verifier, calls, release } = countingVerifier({ good: { permissions: ['eth:*'], exp } });
  const authenticator = new Authenticator(verifier, [], { clock: () => now });
  const first = authenticator.accessOf('good');
  const second = authenticator.accessOf('good');
  t.true(first instanceof Promise);
  release();
  const [a, b] = await Promise.all([first, second]);
  t.is(a, b);
  t.true(a.permits('eth_blockNumber'));
  t.deepEqual(calls, ['good']);
  const cached = authenticator.accessOf('good');
  t.false(cached instanceof Promise, 'known tokens are answered synchronously');
  t.is(cached, a);
  t.true(authenticator.stillValid('good'));
  now = exp * 1000 - 1;
  t.true((authenticator.accessOf('good') as { permits(m: string): boolean }).permits('eth_blockNumber'));
  now = exp * 1000;
  t.false(authenticator.stillValid('good'));
  t.is(authenticator.accessOf('good'), authenticator.anonymous, 'at exp the token grants nothing');
  t.deepEqual(calls, ['good'], 'an expired token is not verified again');
});

test('invalid tokens are not cached; the cache is bounded', async (t) => {
  const now = 1_000_000_000_000;
  const valid: Record<string, VerifiedToken> = {};
  for (let i = 0; i < 5; i++) valid[`t${i}`] = { permissions: ['*:*'], exp: now / 1000 + 300 };
  const { verifier, calls, release } = countingVerifier(valid);
  release();
  const authenticator = new Authenticator(verifier, [], { clock: () => now, maxEntries: 3 });
  t.is(await authenticator.accessOf('forged'), authenticator.anonymous);
  t.is(await authenticator.accessOf('forged'), authenticator.anonymous);
  t.deepEqual(calls, ['forged', 'forged']);
  for (let i = 0; i < 5; i++) await authenticator.accessOf(`t${i}`);
  t.false(authenticator.stillValid('t0'), 'the oldest went');
  t.false(authenticator.stillValid('t1'));
  t.true(authenticator.stillValid('t4'));
  t.is(authenticator.accessOf(undefined), authenticator.anonymous);
});

// ---------------------------------------------------------------------------------------------
// The HTTP body flow with authentication
// ---------------------------------------------------------------------------------------------

const TOKENS: Record<string, VerifiedToken> = {
  all: { permissions: ['*:*'], exp: Number.MAX_SAFE_INTEGER },
  blockNumber: { permissions: ['eth:blockNumber'], exp: Number.MAX_SAFE_INTEGER },
};
const verifier: TokenVerifier = { verify: async (token) => TOKENS[token] };

function flow(noAuthMethods: string[] = []) {
  const executed: string[] = [];
  const send: Dispatch = async (_owner, method) => {
    executed.push(method);
    return { result: '0x1' };
  };
  const call = createMethodCaller({ enabledApis: ['ETH', 'NET', 'WEB3'], send });
  const handle = authenticatedJsonRpc({ maxBatchSize: 1024, call }, new Authenticator(verifier, noAuthMethods));
  return { handle, executed };
}

const request = (method: string, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params: [] });

test('no token and no no-auth method: 401 with id null before parsing, whatever the body', async (t) => {
  const { handle, executed } = flow();
  for (const body of [request('eth_blockNumber'), '{not json', request('nope_nothing'), '[]']) {
    t.deepEqual(await handle(body, undefined), UNAUTHORIZED_REPLY, body);
    t.deepEqual(await handle(body, 'bearer all'), UNAUTHORIZED_REPLY, 'lower-case scheme is no token');
  }
  t.is(UNAUTHORIZED_REPLY.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-40100,"message":"Unauthorized"}}');
  t.deepEqual(executed, []);
});

test('an invalid token: parsed, unknown and not-enabled methods answered first, then 401 with the id', async (t) => {
  const { handle, executed } = flow();
  t.deepEqual(await handle('{not json', 'Bearer forged'), { status: 400, body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}' });
  t.deepEqual(await handle(request('nope_nothing', 3), 'Bearer forged'), {
    status: 200,
    body: '{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}',
  });
  t.deepEqual(await handle(request('admin_peers', 4), 'Bearer forged'), {
    status: 200,
    body: '{"jsonrpc":"2.0","id":4,"error":{"code":-32604,"message":"Method not enabled"}}',
  });
  t.deepEqual(await handle(request('eth_blockNumber', 'x'), 'Bearer forged'), {
    status: 401,
    body: '{"jsonrpc":"2.0","id":"x","error":{"code":-40100,"message":"Unauthorized"}}',
  });
  t.deepEqual(executed, []);
});

test('a valid token: permitted methods run, others 401; a batch cannot escalate (200, -40100 per entry)', async (t) => {
  const { handle, executed } = flow();
  t.deepEqual(await handle(request('eth_blockNumber'), 'Bearer blockNumber'), { status: 200, body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' });
  t.is((await handle(request('eth_chainId'), 'Bearer blockNumber')).status, 401);
  const notification = JSON.stringify({ jsonrpc: '2.0', method: 'eth_blockNumber' });
  const batch = `[${request('eth_chainId', 1)},${request('eth_blockNumber', 2)},${request('net_version', 3)},${notification}]`;
  const reply = await handle(batch, 'Bearer blockNumber');
  t.is(reply.status, 200);
  t.deepEqual(JSON.parse(jsonTextToString(reply.body)), [
    { jsonrpc: '2.0', id: 1, error: { code: -40100, message: 'Unauthorized' } },
    { jsonrpc: '2.0', id: 2, result: '0x1' },
    { jsonrpc: '2.0', id: 3, error: { code: -40100, message: 'Unauthorized' } },
  ]);
  t.deepEqual(executed, ['eth_blockNumber', 'eth_blockNumber'], 'the notification ran, nothing forbidden did');
  t.is((await handle(request('net_version'), 'Bearer all')).status, 200);
});

test('with no-auth methods: no token reaches the methods, which answer by the list', async (t) => {
  const { handle } = flow(['net_version']);
  t.deepEqual(await handle(request('net_version'), undefined), { status: 200, body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}' });
  t.is((await handle(request('eth_blockNumber'), undefined)).status, 401);
  t.is((await handle('{bad', undefined)).status, 400);
});

// ---------------------------------------------------------------------------------------------
// A WebSocket connection's token
// ---------------------------------------------------------------------------------------------

test('a connection re-checks its token on every call, and its subscriptions are dropped when the token expires', async (t) => {
  let now = 1_000_000_000_000;
  const exp = now / 1000 + 300;
  const pending: { at: number; run: () => void }[] = [];
  const timers = {
    setTimeout: (run: () => void, ms: number) => {
      const entry = { at: now + ms, run };
      pending.push(entry);
      return entry;
    },
    clearTimeout: (handle: unknown) => void pending.splice(pending.indexOf(handle as never), 1),
    now: () => now,
  };
  const authenticator = new Authenticator({ verify: async (token) => (token === 'good' ? { permissions: ['eth:*'], exp } : undefined) }, ['net_version'], { clock: () => now });
  const seen: string[] = [];
  const base: RpcCaller = async (method, _params, access) => {
    seen.push(`${method}:${access?.permits(method) ? 'yes' : 'no'}`);
    return { result: null };
  };
  let expired = 0;
  const connection = new ConnectionAuthentication(authenticator, 'good', () => expired++, timers);
  const call = connection.caller(base);
  await call('eth_subscribe', []);
  await call('net_peerCount', []);
  await call('net_version', []);
  t.deepEqual(seen, ['eth_subscribe:yes', 'net_peerCount:no', 'net_version:yes']);
  t.is(pending.length, 1, 'an expiry timer is set once the token is verified');
  t.is(pending[0]!.at, exp * 1000);

  now = exp * 1000;
  pending.shift()!.run();
  t.is(expired, 1);
  await call('eth_subscribe', []);
  t.is(seen.at(-1), 'eth_subscribe:no', 'after exp the connection\'s calls are refused');

  // Without a token: the no-auth methods only, no timer; close clears a pending timer.
  const anonymous = new ConnectionAuthentication(authenticator, undefined, () => expired++, timers);
  await anonymous.caller(base)('eth_blockNumber', []);
  t.is(seen.at(-1), 'eth_blockNumber:no');
  now = 1_000_000_000_000;
  const other = new ConnectionAuthentication(authenticator, 'good', () => expired++, timers);
  await other.access();
  await Promise.resolve();
  t.is(pending.length, 1);
  other.close();
  t.is(pending.length, 0);
  t.is(expired, 1);
});

test('a token expiring beyond what setTimeout can wait is waited for in steps', async (t) => {
  let now = 0;
  const exp = 2 ** 32 / 1000 * 3;
  const delays: number[] = [];
  let next: (() => void) | undefined;
  const timers = {
    setTimeout: (run: () => void, ms: number) => {
      delays.push(ms);
      next = run;
      return run;
    },
    clearTimeout: () => undefined,
    now: () => now,
  };
  const authenticator = new Authenticator({ verify: async () => ({ permissions: [], exp }) }, [], { clock: () => now });
  let expired = false;
  new ConnectionAuthentication(authenticator, 'long', () => (expired = true), timers);
  await new Promise((resolve) => setImmediate(resolve));
  while (!expired) {
    now += delays.at(-1)!;
    next!();
  }
  t.true(delays.every((delay) => delay <= 2 ** 31 - 1));
  t.true(delays.length > 1);
  t.is(now, exp * 1000);
});
