/**
 * JSON-RPC over WebSocket messages and IPC values (src/transport/jsonrpc-stream.ts, §6.2 and §7):
 * the answers that differ from HTTP's, and the methods each transport serves.
 */
import test from 'ava';
import { RpcErrors } from '../../src/shared/rpc/errors.js';
import { createMethodCaller, type Dispatch, type RpcCaller } from '../../src/transport/jsonrpc.js';
import { IPC_RULES, WS_RULES, handleStreamMessage } from '../../src/transport/jsonrpc-stream.js';
import { createWsPortPolicy, WS_PORT_HTTP_BODY } from '../../src/transport/http-policy.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

const echo: RpcCaller = async (method, params) => ({ result: `${method}:${params.length}` });

test('WebSocket: empty message, unparsable text, scalars, empty batch, notifications (§6.2)', async (t) => {
  const ws = (text: string) => handleStreamMessage(text, echo, WS_RULES);
  t.is(await ws(''), '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}');
  for (const text of ['nonsense', '{"id":1', '5', '"x"']) {
    t.is(await ws(text), '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}', text);
  }
  t.is(await ws('[]'), '[]');
  t.is(await ws('{"jsonrpc":"2.0","method":"eth_chainId"}'), undefined, 'a notification gets no answer at all');
  t.is(await ws('[{"jsonrpc":"2.0","method":"eth_chainId"}]'), '[]');
});

test('WebSocket: single requests keep their ids; batches have no size limit and keep their order', async (t) => {
  const ws = (text: string) => handleStreamMessage(text, echo, WS_RULES);
  t.is(await ws('{"jsonrpc":"2.0","id":12345678901234567890,"method":"m","params":[1]}'), '{"jsonrpc":"2.0","id":12345678901234567890,"result":"m:1"}');
  const batch = Array.from({ length: 3000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'm' }));
  const answer = JSON.parse(jsonTextToString((await ws(JSON.stringify([...batch, 5])))!)) as { id: number | null }[];
  t.is(answer.length, 3001);
  t.deepEqual(answer.slice(0, 3).map((entry) => entry.id), [0, 1, 2]);
  t.deepEqual(answer[3000], { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
});

test('IPC: parse failures are Parse error, an empty batch is Invalid Request (§7)', async (t) => {
  const ipc = (text: string) => handleStreamMessage(text, echo, IPC_RULES);
  t.is(await ipc('{"id":1'), '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
  t.is(await ipc('[]'), '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}');
  t.is(await ipc('{"jsonrpc":"2.0","id":"a","method":"m"}'), '{"jsonrpc":"2.0","id":"a","result":"m:0"}');
});

test('eth_subscribe and eth_unsubscribe: "Method not found" over HTTP, dispatched to the transport over WS and IPC whatever groups are on', async (t) => {
  const sent: string[] = [];
  const send: Dispatch = async (owner, method) => {
    sent.push(`${owner}:${method}`);
    return { result: '0x1' };
  };
  for (const transport of [undefined, 'http'] as const) {
    const call = createMethodCaller({ enabledApis: ['ETH', 'NET', 'WEB3', 'ADMIN'], ...(transport ? { transport } : {}), send });
    t.deepEqual(await call('eth_subscribe', ['newHeads']), { error: RpcErrors.METHOD_NOT_FOUND });
    t.deepEqual(await call('eth_unsubscribe', ['0x1']), { error: RpcErrors.METHOD_NOT_FOUND });
  }
  for (const transport of ['ws', 'ipc'] as const) {
    const call = createMethodCaller({ enabledApis: ['ETH'], transport, send });
    t.deepEqual(await call('eth_subscribe', ['newHeads']), { result: '0x1' });
    t.deepEqual(await call('eth_subscribe', ['nope']), { error: RpcErrors.INVALID_REQUEST });
    t.deepEqual(await call('eth_unsubscribe', ['0x1']), { result: '0x1' });
    // ETH off on this transport: its other methods are not enabled, subscriptions still are (§6.2).
    const withoutEth = createMethodCaller({ enabledApis: ['NET'], transport, send });
    t.deepEqual(await withoutEth('eth_chainId', []), { error: RpcErrors.METHOD_NOT_ENABLED });
    t.deepEqual(await withoutEth('eth_subscribe', ['newHeads']), { result: '0x1' });
    t.deepEqual(await withoutEth('eth_unsubscribe', ['0x1']), { result: '0x1' });
  }
  const both = ['transport:eth_subscribe', 'transport:eth_unsubscribe'];
  t.deepEqual(sent, [...both, ...both, ...both, ...both]);
});

test('the WebSocket port: handshakes checked against the host allow-list, plain HTTP refused (§6.1), /login with authentication on (§8.4)', (t) => {
  const policy = createWsPortPolicy({ hostAllowlist: ['localhost', '127.0.0.1'], loginServed: false, maxLoginBodyLength: 100 });
  const request = (method: string, path: string, host: string, contentLength?: string) => ({ method, path, host, contentLength });
  t.is(policy.upgrade('localhost:8546'), undefined);
  t.like(policy.upgrade('evil.example'), { status: 403, body: '' });
  t.like(policy.upgrade(undefined), { status: 403 });
  t.like(policy.request(request('GET', '/', '127.0.0.1')), { status: 400, body: WS_PORT_HTTP_BODY });
  t.like(policy.request(request('POST', '/anything', '127.0.0.1')), { status: 400, body: WS_PORT_HTTP_BODY });
  t.like(policy.request(request('POST', '/login', '127.0.0.1')), { status: 400, reason: 'Authentication not enabled', body: '' });
  t.like(policy.request(request('GET', '/', 'evil.example')), { status: 403, body: '{"message":"Host not authorized."}' });
  t.is(createWsPortPolicy({ hostAllowlist: ['*'], loginServed: false, maxLoginBodyLength: 100 }).upgrade(undefined), undefined);

  const withLogin = createWsPortPolicy({ hostAllowlist: ['127.0.0.1'], loginServed: true, maxLoginBodyLength: 100 });
  t.like(withLogin.request(request('POST', '/login', '127.0.0.1', '100')), { kind: 'proceed', route: 'login' });
  t.like(withLogin.request(request('POST', '/login/', '127.0.0.1')), { kind: 'proceed', route: 'login' });
  t.like(withLogin.request(request('POST', '/login', '127.0.0.1', '101')), { status: 413, closeConnection: true });
  t.like(withLogin.request(request('GET', '/login', '127.0.0.1')), { status: 400, body: WS_PORT_HTTP_BODY });
  t.like(withLogin.request(request('POST', '/login', 'evil.example')), { status: 403 });
});
