/**
 * The JSON-RPC HTTP port end to end: real uWS servers on unix sockets behind the connection guard on
 * loopback, as the node runs them; raw HTTP requests (node:http, so that Host and other headers are
 * exactly what the test says).
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcErrors } from '../../src/shared/rpc/errors.js';
import type { RpcCaller } from '../../src/transport/jsonrpc.js';
import type { Json } from '../../src/shared/rpc/types.js';
import {
  acceptsJson,
  createCorsPolicy,
  createHostAllowlist,
  createHttpPolicy,
  type HttpRequestFacts,
  hostnameOfHostHeader,
  isReady,
  resolveRoute,
  type HealthSnapshot,
} from '../../src/transport/http-policy.js';
import { loadTransportEngine, type HttpServerConfig } from '../../src/transport/engine.js';
import type { HttpEngineName } from '../../src/shared/actors/worker-data.js';
import { startConnectionGuard } from '../../src/main/supervisor/http-connection-guard.js';
import { chooseHttpEngine, probeNativeUws } from '../../src/main/supervisor/http-engine.js';
import { StartupError } from '../../src/main/supervisor/network.js';

interface Reply {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface RequestOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Sends the body with Transfer-Encoding: chunked, in pieces. */
  chunks?: string[];
}

function send(port: number, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `localhost:${port}`, ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    if (options.chunks !== undefined) headers['transfer-encoding'] = 'chunked';
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path ?? '/', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, statusText: res.statusMessage!, headers: res.headers, body }));
    });
    req.on('error', reject);
    if (options.chunks !== undefined) for (const chunk of options.chunks) req.write(chunk);
    req.end(options.body);
  });
}

const rpcBody = (method: string, params: Json[] = [], id: Json = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A stand-in for the method layer: `echo` answers its params, `hang` never answers. */
const fakeCall: RpcCaller = async (method, params) => {
  if (method === 'echo') return { result: params as Json };
  if (method === 'hang') return new Promise(() => undefined);
  return { error: RpcErrors.METHOD_NOT_FOUND };
};

interface TestServer {
  port: number;
  close(): Promise<void>;
}

/** What a server test gets: its engine's shared server, and a way to start more with other settings. */
interface Harness {
  engine: HttpEngineName;
  main: TestServer;
  /** Servers with `overrides`, one per entry of `calls`, behind one guard on a free loopback port. */
  servers(overrides: Partial<HttpServerConfig>, calls: RpcCaller[]): Promise<TestServer>;
  server(overrides?: Partial<HttpServerConfig>): Promise<TestServer>;
  /** What the main server's /readiness reads. */
  setHealth(health: HealthSnapshot): void;
}

/** The engines that run in this process: both on Node 20, the node:http one alone where uWS does not load. */
const ENGINES: readonly HttpEngineName[] = probeNativeUws().loaded ? ['uws', 'node'] : ['node'];

async function harness(name: HttpEngineName): Promise<Harness> {
  const engine = await loadTransportEngine(name);
  let health: HealthSnapshot = { p2pEnabled: true, peerCount: 0 };
  const servers = async (overrides: Partial<HttpServerConfig>, calls: RpcCaller[]): Promise<TestServer> => {
    const dir = mkdtempSync(join(tmpdir(), 'basalt-http-test-'));
    const closers: (() => Promise<void>)[] = [];
    const close = async () => {
      for (const closer of closers.reverse()) await closer();
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      const socketPaths = calls.map((_, i) => join(dir, `worker-${i}.sock`));
      for (const [i, call] of calls.entries()) {
        const http = await engine.startHttpServer({
          host: '127.0.0.1',
          port: 0,
          socketPath: socketPaths[i]!,
          hostAllowlist: ['localhost', '127.0.0.1'],
          corsOrigins: ['http://foo.io', 'https://.*\\.example\\.org'],
          maxRequestContentLength: 1000,
          maxBatchSize: 3,
          prettyPrint: false,
          call,
          health: () => health,
          ...overrides,
        });
        closers.push(() => http.close());
      }
      const guard = await startConnectionGuard({ host: '127.0.0.1', port: 0, maxActiveConnections: 80, upstreams: socketPaths });
      closers.push(() => guard.close());
      guard.open();
      return { port: guard.port, close };
    } catch (err) {
      await close();
      throw err;
    }
  };
  const server = (overrides: Partial<HttpServerConfig> = {}): Promise<TestServer> => servers(overrides, [overrides.call ?? fakeCall]);
  return { engine: name, main: await server(), servers, server, setHealth: (next) => (health = next) };
}

const harnesses = new Map<HttpEngineName, Promise<Harness>>();
test.before(() => {
  for (const engine of ENGINES) harnesses.set(engine, harness(engine));
});
test.after.always(async () => {
  for (const h of harnesses.values()) await (await h).main.close();
});

/** A test of the HTTP port, run once per engine: both must give the same answers. */
function serverTest(title: string, body: (t: ExecutionContext, h: Harness) => Promise<void>): void {
  for (const engine of ENGINES) test(`${engine}: ${title}`, async (t) => body(t, await harnesses.get(engine)!));
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC over HTTP
// ---------------------------------------------------------------------------------------------

serverTest('POST / answers JSON-RPC with application/json', async (t, { main, server, servers, setHealth }) => {
  const reply = await send(main.port, { body: rpcBody('echo', ['a', 1]) });
  t.is(reply.status, 200);
  t.is(reply.headers['content-type'], 'application/json');
  t.is(reply.body, '{"jsonrpc":"2.0","id":1,"result":["a",1]}');
});

serverTest('parse errors and empty batches are 400, method errors 200', async (t, { main, server, servers, setHealth }) => {
  const parse = await send(main.port, { body: '{"jsonrpc"' });
  t.is(parse.status, 400);
  t.is(parse.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
  t.is(parse.headers['content-type'], 'application/json');
  const empty = await send(main.port, { body: '' });
  t.is(empty.status, 400);
  t.is((await send(main.port, { body: '[]' })).status, 400);
  const notFound = await send(main.port, { body: rpcBody('nope') });
  t.is(notFound.status, 200);
  t.is(notFound.body, '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}');
});

serverTest('a notification answers 200 with an empty body', async (t, { main, server, servers, setHealth }) => {
  const reply = await send(main.port, { body: '{"jsonrpc":"2.0","method":"echo"}' });
  t.is(reply.status, 200);
  t.is(reply.body, '');
});

serverTest('batches: array answer, notifications omitted; over the limit a single -32005 object with 200', async (t, { main, server, servers, setHealth }) => {
  const batch = await send(main.port, { body: `[${rpcBody('echo', [1], 1)},{"method":"echo"},5]` });
  t.is(batch.status, 200);
  t.is(batch.body, '[{"jsonrpc":"2.0","id":1,"result":[1]},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]');
  const tooMany = await send(main.port, { body: `[${[1, 2, 3, 4].map((id) => rpcBody('echo', [], id)).join(',')}]` });
  t.is(tooMany.status, 200);
  t.is(tooMany.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Number of requests exceeds max batch size"}}');
});

serverTest('a chunked request body is read', async (t, { main, server, servers, setHealth }) => {
  const reply = await send(main.port, { chunks: ['{"jsonrpc":"2.0","id":9,', '"method":"echo","params":["x"]}'] });
  t.is(reply.status, 200);
  t.is(reply.body, '{"jsonrpc":"2.0","id":9,"result":["x"]}');
});

serverTest('pretty printing applies to single responses, not batches', async (t, { main, server, servers, setHealth }) => {
  const pretty = await server({ prettyPrint: true });
  try {
    t.is((await send(pretty.port, { body: rpcBody('echo', [1]) })).body, '{\n  "jsonrpc" : "2.0",\n  "id" : 1,\n  "result" : [ 1 ]\n}');
    t.is((await send(pretty.port, { body: `[${rpcBody('echo', [1])}]` })).body, '[{"jsonrpc":"2.0","id":1,"result":[1]}]');
  } finally {
    await pretty.close();
  }
});

serverTest('a JSON-RPC body still running at the timeout answers 408', async (t, { main, server, servers, setHealth }) => {
  const slow = await server({ timeoutSeconds: 0.2 });
  try {
    const reply = await send(slow.port, { body: rpcBody('hang') });
    t.is(reply.status, 408);
    t.is(reply.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Timeout expired"}}');
    t.is(reply.headers['content-type'], 'application/json');
  } finally {
    await slow.close();
  }
});

serverTest('concurrent requests are all answered with their own ids', async (t, { main, server, servers, setHealth }) => {
  const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => send(main.port, { body: rpcBody('echo', [i], i) })));
  replies.forEach((reply, i) => t.is(reply.body, `{"jsonrpc":"2.0","id":${i},"result":[${i}]}`));
});

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

serverTest('GET / → 201 with an empty body', async (t, { main, server, servers, setHealth }) => {
  const reply = await send(main.port, { method: 'GET' });
  t.is(reply.status, 201);
  t.is(reply.body, '');
});

serverTest('unknown path → 404 with Vert.x body; known path with another method → 405 empty', async (t, { main, server, servers, setHealth }) => {
  const missing = await send(main.port, { method: 'GET', path: '/nothing/here' });
  t.is(missing.status, 404);
  t.is(missing.body, '<html><body><h1>Resource not found</h1></body></html>');
  for (const [method, path] of [
    ['PUT', '/'],
    ['DELETE', '/'],
    ['GET', '/login'],
    ['POST', '/liveness'],
    ['POST', '/readiness'],
  ] as const) {
    const reply = await send(main.port, { method, path });
    t.is(reply.status, 405, `${method} ${path}`);
    t.is(reply.body, '');
  }
});

serverTest('POST /login without authentication → 400 "Authentication not enabled", empty body', async (t, { main, server, servers, setHealth }) => {
  const reply = await send(main.port, { path: '/login', body: '{"username":"u","password":"p"}' });
  t.is(reply.status, 400);
  t.is(reply.statusText, 'Authentication not enabled');
  t.is(reply.body, '');
});

serverTest('an Accept header that excludes JSON → 406 on the JSON routes', async (t, { main, server, servers, setHealth }) => {
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { accept: 'text/html' } })).status, 406);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { accept: 'text/html, application/*;q=0.5' } })).status, 200);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { accept: '*/*' } })).status, 200);
});

serverTest('/liveness is always UP; /readiness follows peers, sync and query parameters', async (t, { main, server, servers, setHealth }) => {
  const up = '{\n  "status" : "UP"\n}';
  const down = '{\n  "status" : "DOWN"\n}';
  const check = async (path: string, status: number, body: string) => {
    const reply = await send(main.port, { method: 'GET', path });
    t.is(reply.status, status, path);
    t.is(reply.body, body, path);
  };
  setHealth({ p2pEnabled: true, peerCount: 0 });
  await check('/liveness', 200, up);
  await check('/readiness', 503, down);
  await check('/readiness?minPeers=0', 200, up);
  await check('/readiness?minPeers=abc', 503, down);
  setHealth({ p2pEnabled: false, peerCount: 0 });
  await check('/readiness', 200, up);
  setHealth({ p2pEnabled: false, peerCount: 0, sync: { currentBlock: 10n, highestBlock: 15n } });
  await check('/readiness', 503, down);
  await check('/readiness?maxBlocksBehind=5', 200, up);
  await check('/readiness?maxBlocksBehind=x', 503, down);
  setHealth({ p2pEnabled: true, peerCount: 0 });
});

// ---------------------------------------------------------------------------------------------
// Host allow-list, CORS, size limit, and their order
// ---------------------------------------------------------------------------------------------

serverTest('Host not in the allow-list → 403 JSON message; the check is case-insensitive and ignores the port', async (t, { main, server, servers, setHealth }) => {
  const rejected = await send(main.port, { body: rpcBody('echo'), headers: { host: 'evil.com:8545' } });
  t.is(rejected.status, 403);
  t.is(rejected.body, '{"message":"Host not authorized."}');
  t.is(rejected.headers['content-type'], 'application/json; charset=utf-8');
  t.is((await send(main.port, { method: 'GET', path: '/liveness', headers: { host: 'evil.com' } })).status, 403);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { host: 'LOCALHOST:1' } })).status, 200);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { host: '127.0.0.1' } })).status, 200);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { host: 'localhost.evil.com' } })).status, 403);
});

serverTest('allow-list "*" accepts any Host', async (t, { main, server, servers, setHealth }) => {
  const open = await server({ hostAllowlist: ['*'] });
  try {
    t.is((await send(open.port, { body: rpcBody('echo'), headers: { host: 'anything.example' } })).status, 200);
  } finally {
    await open.close();
  }
});

serverTest('CORS: allowed origins are echoed, others get 403, requests without Origin pass', async (t, { main, server, servers, setHealth }) => {
  const allowed = await send(main.port, { body: rpcBody('echo'), headers: { origin: 'http://foo.io' } });
  t.is(allowed.status, 200);
  t.is(allowed.headers['access-control-allow-origin'], 'http://foo.io');
  // entries are regular expressions: the dot of foo.io matches any character
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { origin: 'http://fooxio' } })).status, 200);
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { origin: 'https://a.example.org' } })).status, 200);
  const denied = await send(main.port, { body: rpcBody('echo'), headers: { origin: 'http://bar.io' } });
  t.is(denied.status, 403);
  t.is(denied.body, 'Exception thrown handling RPC');
  t.is((await send(main.port, { body: rpcBody('echo'), headers: { origin: 'http://foo.io.evil' } })).status, 403);
  t.is((await send(main.port, { body: rpcBody('echo') })).headers['access-control-allow-origin'], undefined);
});

serverTest('CORS preflight: allowed → 204 with allowed headers; denied → 403', async (t, { main, server, servers, setHealth }) => {
  const preflight = await send(main.port, {
    method: 'OPTIONS',
    headers: { origin: 'http://foo.io', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers['access-control-allow-origin'], 'http://foo.io');
  t.is(preflight.headers['access-control-allow-headers'], '*,content-type');
  const denied = await send(main.port, { method: 'OPTIONS', headers: { origin: 'http://bar.io', 'access-control-request-method': 'POST' } });
  t.is(denied.status, 403);
  // OPTIONS without a preflight header is an ordinary request: no OPTIONS route
  t.is((await send(main.port, { method: 'OPTIONS', headers: { origin: 'http://foo.io' } })).status, 405);
});

serverTest('CORS with no configured origins rejects every Origin; "*" accepts any, extensions included', async (t, { main, server, servers, setHealth }) => {
  const none = await server({ corsOrigins: [] });
  const any = await server({ corsOrigins: ['*'] });
  try {
    t.is((await send(none.port, { body: rpcBody('echo'), headers: { origin: 'http://localhost' } })).status, 403);
    t.is((await send(none.port, { body: rpcBody('echo') })).status, 200);
    t.is((await send(any.port, { body: rpcBody('echo'), headers: { origin: 'chrome-extension://abcdef' } })).status, 200);
  } finally {
    await none.close();
    await any.close();
  }
});

serverTest('a body over the limit → 413, for declared and for chunked lengths', async (t, { main, server, servers, setHealth }) => {
  const declared = await send(main.port, { body: rpcBody('echo', ['x'.repeat(2000)]) });
  t.is(declared.status, 413);
  t.is(declared.statusText, 'Request Entity Too Large');
  const chunked = await send(main.port, { chunks: Array.from({ length: 5 }, () => 'x'.repeat(300)) });
  t.is(chunked.status, 413);
  const justUnder = rpcBody('echo', ['y'.repeat(900)]);
  t.true(Buffer.byteLength(justUnder) <= 1000);
  t.is((await send(main.port, { body: justUnder })).status, 200);
});

serverTest('checks run in Besu order: host, then CORS, then size', async (t, { main, server, servers, setHealth }) => {
  const big = rpcBody('echo', ['x'.repeat(5000)]);
  t.is((await send(main.port, { body: big, headers: { host: 'evil.com', origin: 'http://bar.io' } })).status, 403);
  const corsFirst = await send(main.port, { body: big, headers: { origin: 'http://bar.io' } });
  t.is(corsFirst.status, 403);
  t.is(corsFirst.body, 'Exception thrown handling RPC');
  t.is((await send(main.port, { body: big, headers: { origin: 'http://foo.io' } })).status, 413);
  // host before routing too
  t.is((await send(main.port, { method: 'GET', path: '/nowhere', headers: { host: 'evil.com' } })).status, 403);
});

serverTest('every answer after the CORS step carries the allowed Origin, on the JSON-RPC route and the others alike', async (t, { main, server, servers, setHealth }) => {
  const origin = { origin: 'http://foo.io' };
  const big = rpcBody('echo', ['x'.repeat(5000)]);
  const answers = {
    'POST / 200': await send(main.port, { body: rpcBody('echo'), headers: origin }),
    'POST / 413 declared': await send(main.port, { body: big, headers: origin }),
    'POST / 413 chunked': await send(main.port, { chunks: Array.from({ length: 5 }, () => 'x'.repeat(300)), headers: origin }),
    'POST / 406': await send(main.port, { body: rpcBody('echo'), headers: { ...origin, accept: 'text/html' } }),
    'POST /login 406': await send(main.port, { path: '/login', body: '{}', headers: { ...origin, accept: 'text/html' } }),
    'POST /nowhere 413': await send(main.port, { path: '/nowhere', body: big, headers: origin }),
    'GET /nowhere 404': await send(main.port, { method: 'GET', path: '/nowhere', headers: origin }),
    'DELETE / 405': await send(main.port, { method: 'DELETE', headers: origin }),
    'GET / 201': await send(main.port, { method: 'GET', headers: origin }),
  };
  for (const [name, reply] of Object.entries(answers)) {
    t.is(reply.headers['access-control-allow-origin'], 'http://foo.io', name);
    t.is(reply.headers.vary, 'origin', name);
  }
  t.deepEqual(Object.values(answers).map((reply) => reply.status), [200, 413, 413, 406, 406, 413, 404, 405, 201]);
});

serverTest('the guard spreads connections over the servers behind it and owns its port exclusively', async (t, { main, server, servers, setHealth }) => {
  const answeredBy = (name: string): RpcCaller => async () => ({ result: name });
  const both = await servers({}, [answeredBy('first'), answeredBy('second')]);
  try {
    const exclusive = net.createServer();
    await t.throwsAsync(new Promise<void>((resolve, reject) => exclusive.once('error', reject).listen({ host: '127.0.0.1', port: both.port, exclusive: true }, resolve)), { code: 'EADDRINUSE' });
    const replies = await Promise.all(Array.from({ length: 40 }, () => send(both.port, { body: rpcBody('any') })));
    const names = new Set(replies.map((reply) => (JSON.parse(reply.body) as { result: string }).result));
    t.deepEqual([...names].sort(), ['first', 'second']);
  } finally {
    await both.close();
  }
});

serverTest('an invalid CORS pattern is a start-up error with Besu\'s message', async (t, { main, server, servers, setHealth }) => {
  await t.throwsAsync(server({ corsOrigins: ['(unclosed'] }), { message: 'Domain values result in invalid regex pattern' });
});

// ---------------------------------------------------------------------------------------------
// Pure policy functions
// ---------------------------------------------------------------------------------------------

test('Host header parsing', (t) => {
  t.is(hostnameOfHostHeader('localhost:8545'), 'localhost');
  t.is(hostnameOfHostHeader('localhost'), 'localhost');
  t.is(hostnameOfHostHeader('[::1]:8545'), '[::1]');
  t.is(hostnameOfHostHeader('a:b:c'), undefined);
  t.is(hostnameOfHostHeader('host:port'), undefined);
  t.is(hostnameOfHostHeader('host:123456'), undefined);
  const allow = createHostAllowlist(['localhost', '::1']);
  t.false(allow(undefined));
  t.true(allow('[::1]:8545'));
  t.false(createHostAllowlist(['none'])('localhost'));
  t.false(createHostAllowlist([])('localhost'));
  t.true(createHostAllowlist(['all'])(undefined));
});

test('CORS pattern matching is whole-origin', (t) => {
  const allows = createCorsPolicy(['http://foo.io']);
  t.true(allows('http://foo.io'));
  t.false(allows('xhttp://foo.io'));
  t.false(allows('http://foo.io:80'));
  t.true(createCorsPolicy(['all'])('moz-extension://x'));
  t.false(createCorsPolicy(['none'])('http://foo.io'));
});

test('readiness decision', (t) => {
  const q = (s: string) => new URLSearchParams(s);
  t.false(isReady({ p2pEnabled: true, peerCount: 0 }, q('')));
  t.true(isReady({ p2pEnabled: true, peerCount: 1 }, q('')));
  t.true(isReady({ p2pEnabled: true, peerCount: 2 }, q('minPeers=2')));
  t.false(isReady({ p2pEnabled: true, peerCount: 2 }, q('minPeers=3')));
  t.false(isReady({ p2pEnabled: true, peerCount: 5 }, q('minPeers=99999999999')));
  t.true(isReady({ p2pEnabled: false, peerCount: 0 }, q('minPeers=5')));
  t.true(isReady({ p2pEnabled: false, peerCount: 0, sync: { currentBlock: 8n, highestBlock: 10n } }, q('')));
  t.false(isReady({ p2pEnabled: false, peerCount: 0, sync: { currentBlock: 7n, highestBlock: 10n } }, q('')));
});

test('route table', (t) => {
  t.is(resolveRoute('POST', '/'), 'jsonrpc');
  t.is(resolveRoute('GET', '/'), 'created');
  t.is(resolveRoute('GET', '/liveness/'), 'liveness');
  t.is(resolveRoute('HEAD', '/readiness'), 'method-not-allowed');
  t.is(resolveRoute('POST', '/rpc'), 'not-found');
});

test('Accept negotiation', (t) => {
  t.true(acceptsJson(undefined));
  t.true(acceptsJson('application/json'));
  t.true(acceptsJson('text/plain, */*;q=0.1'));
  t.false(acceptsJson('text/plain'));
  t.false(acceptsJson('application/json;q=0'));
});

test('the HTTP policy: host allow-list, CORS, size, route, Accept, in that order; CORS headers on what follows', (t) => {
  const policy = createHttpPolicy({ hostAllowlist: ['localhost'], corsOrigins: ['http://foo.io'], maxRequestContentLength: 100 });
  const request = (facts: Partial<HttpRequestFacts>): HttpRequestFacts => ({
    method: 'POST', path: '/', host: 'localhost', origin: undefined, contentLength: '10', accept: undefined, accessControlRequestMethod: undefined, ...facts,
  });
  const summary = (facts: Partial<HttpRequestFacts>) => {
    const verdict = policy(request(facts));
    return verdict.kind === 'answer' ? `${verdict.status} ${verdict.headers.map(([name]) => name).join(',')}` : `${verdict.route} ${verdict.headers.map(([name]) => name).join(',')}`;
  };
  const cors = 'access-control-allow-origin,vary';
  t.is(summary({}), 'jsonrpc ');
  t.is(summary({ host: 'evil.com', origin: 'http://bar.io', contentLength: '1000', path: '/x', accept: 'text/html' }), '403 content-type');
  t.is(summary({ host: undefined }), '403 content-type');
  t.is(summary({ origin: 'http://bar.io', contentLength: '1000', path: '/x' }), '403 ');
  t.is(summary({ origin: '' }), '403 ', 'an empty Origin is an Origin');
  t.is(summary({ origin: 'http://foo.io', contentLength: '1000', path: '/x' }), `413 ${cors}`);
  t.is(summary({ contentLength: '1000', path: '/x' }), '413 ');
  t.is(summary({ origin: 'http://foo.io', path: '/x', accept: 'text/html' }), `404 ${cors},content-type`);
  t.is(summary({ method: 'PUT', accept: 'text/html' }), '405 ');
  t.is(summary({ accept: 'text/html' }), '406 ');
  t.is(summary({ method: 'GET', accept: 'text/html' }), 'created ', 'Accept only matters on the routes producing JSON');
  t.is(summary({ path: '/login', origin: 'http://foo.io' }), `login ${cors}`);
  t.is(summary({ method: 'OPTIONS', path: '/x', origin: 'http://foo.io', accessControlRequestMethod: 'POST' }), `204 ${cors},access-control-allow-headers`);
  t.is(summary({ method: 'OPTIONS', origin: 'http://foo.io' }), `405 ${cors}`, 'OPTIONS without Access-Control-Request-Method is no preflight');
  t.is(policy(request({})), policy(request({})), 'a request without Origin gets a shared verdict');
  const tooLarge = policy(request({ contentLength: '101' }));
  t.like(tooLarge, { kind: 'answer', status: 413, reason: 'Request Entity Too Large', body: 'Request Entity Too Large', closeConnection: true });
});

// ---------------------------------------------------------------------------------------------
// The engines: the same answers, and the choice at start
// ---------------------------------------------------------------------------------------------

/** Headers each engine writes of its own (date, keep-alive, uWS' name), not the node's answer; framing is compared. */
const ENGINE_HEADERS = new Set(['date', 'connection', 'keep-alive', 'uwebsockets']);

const answerOf = (reply: Reply) => ({
  status: reply.status,
  statusText: reply.statusText,
  body: reply.body,
  headers: Object.entries(reply.headers).filter(([name]) => !ENGINE_HEADERS.has(name)),
});

test('both engines give the same status line, headers and body to the same requests', async (t) => {
  if (ENGINES.length < 2) {
    t.pass(`only ${ENGINES.join()} loads on Node ${process.version}: nothing to compare`);
    return;
  }
  const [uws, node] = await Promise.all(ENGINES.map((engine) => harnesses.get(engine)!));
  const requests: RequestOptions[] = [
    { body: rpcBody('echo', ['a']) },
    { body: '{"jsonrpc"' },
    { body: '[]' },
    { method: 'GET' },
    // Not /readiness: another test changes the health it reads.
    { method: 'GET', path: '/liveness' },
    { method: 'GET', path: '/nothing' },
    { method: 'PUT', path: '/' },
    { path: '/login', body: '{}' },
    { body: rpcBody('echo'), headers: { accept: 'text/html' } },
    { body: rpcBody('echo'), headers: { host: 'evil.com' } },
    { body: rpcBody('echo'), headers: { origin: 'http://foo.io' } },
    { body: rpcBody('echo'), headers: { origin: 'http://bar.io' } },
    { method: 'OPTIONS', headers: { origin: 'http://foo.io', 'access-control-request-method': 'POST' } },
    { body: 'x'.repeat(1001), headers: { origin: 'http://foo.io' } },
    { chunks: ['x'.repeat(600), 'x'.repeat(600)] },
  ];
  for (const request of requests) {
    const [fromUws, fromNode] = await Promise.all([send(uws!.main.port, request), send(node!.main.port, request)]);
    t.deepEqual(answerOf(fromNode), answerOf(fromUws), JSON.stringify(request).slice(0, 120));
  }
});

test('the engine is uWebSockets.js where its native build loads, node:http and ws otherwise or when forced', (t) => {
  const loads = () => ({ loaded: true as const, build: 'uWebSockets.js@20.30.0', skipped: [] });
  const fails = () => ({ loaded: false as const, build: 'uWebSockets.js@20.30.0', reason: 'it has no binary for Node v24.0.0' });
  t.like(chooseHttpEngine('auto', loads), { engine: 'uws', warn: false, message: 'HTTP engine: uWebSockets.js (uWebSockets.js@20.30.0, native)' });
  const fallback = chooseHttpEngine('auto', fails);
  t.like(fallback, { engine: 'node', warn: true });
  t.regex(fallback.message, /^HTTP engine: node:http and ws, because uWebSockets\.js \(uWebSockets\.js@20\.30\.0\) cannot serve: it has no binary for Node v24\.0\.0/);
  t.like(chooseHttpEngine('node', loads), { engine: 'node', warn: false });
  const forced = t.throws(() => chooseHttpEngine('uws', fails), { instanceOf: StartupError });
  t.regex(forced.message, /--Xhttp-engine=UWS/);
});

/** The two builds package.json installs, in the order src/shared/uws-select tries them. */
const CURRENT_UWS_BUILD = '@btc-vision/uwebsockets.js@20.57.0';
const LEGACY_UWS_BUILD = '@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0';

function glibcAtLeast(major: number, minor: number): boolean {
  const version = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  if (version === undefined) return false;
  const [have, haveMinor] = version.split('.').map(Number);
  return have! > major || (have === major && haveMinor! >= minor);
}

test('the newest installed uWebSockets.js build that loads serves: 20.57 on glibc >= 2.38, else 20.30 on Node 20, else none with each reason', (t) => {
  const probe = probeNativeUws();
  const abi = Number(process.versions.modules);
  if (process.platform === 'linux' && glibcAtLeast(2, 38) && [115, 127, 137, 141].includes(abi)) {
    t.like(probe, { loaded: true, build: CURRENT_UWS_BUILD });
  } else if (abi === 115) {
    t.like(probe, { loaded: true, build: LEGACY_UWS_BUILD });
    if (probe.loaded) t.regex(probe.skipped.join('\n'), /^@btc-vision\/uwebsockets\.js@20\.57\.0: its binary for Node v20\.[0-9.]+ does not load: .*GLIBC_2\.38/);
  } else {
    t.like(probe, { loaded: false, build: `${CURRENT_UWS_BUILD}, ${LEGACY_UWS_BUILD}` });
    if (!probe.loaded) t.true(probe.reason.includes(`${LEGACY_UWS_BUILD}: it has no binary for Node ${process.version}`), probe.reason);
  }
});

test('uWS forced to its JavaScript shim counts as not loading', (t) => {
  const previous = process.env.UWS_USE_FALLBACK;
  process.env.UWS_USE_FALLBACK = '1';
  try {
    t.like(probeNativeUws(), { loaded: false, reason: 'UWS_USE_FALLBACK forces its JavaScript shim' });
  } finally {
    if (previous === undefined) delete process.env.UWS_USE_FALLBACK;
    else process.env.UWS_USE_FALLBACK = previous;
  }
});
