import test from 'ava';
import { RpcError, RpcErrors } from '../../src/shared/rpc/errors.js';
import {
  createMethodCaller,
  exceedsJsonLimits,
  handleJsonRpcBody,
  javaDoubleToString,
  prettyJson,
  type Dispatch,
  type RpcCaller,
  type RpcOutcome,
} from '../../src/transport/jsonrpc.js';
import type { Owner } from '../../src/shared/rpc/registry.js';
import type { Json, Wire } from '../../src/shared/rpc/types.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

// ---------------------------------------------------------------------------------------------
// A fake `call`: behaviour chosen by method name, every call recorded.
// ---------------------------------------------------------------------------------------------

type Recorded = { method: string; params: unknown[] };

function fakeCall(): { call: RpcCaller; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const call: RpcCaller = async (method, params) => {
    calls.push({ method, params });
    switch (method) {
      case 'echo':
        return { result: params as Json };
      case 'nothing':
        return { result: null };
      case 'revert':
        return { error: { code: 3, message: 'Execution reverted', data: '0x' } };
      case 'badParams':
        return { error: RpcErrors.INVALID_PARAMS };
      case 'methodParseError':
        return { error: RpcErrors.PARSE_ERROR };
      case 'methodInvalidRequest':
        return { error: RpcErrors.INVALID_REQUEST };
      case 'unauthorized':
        return { error: RpcErrors.UNAUTHORIZED };
      case 'internal':
        return { error: RpcErrors.INTERNAL_ERROR };
      default:
        return { error: RpcErrors.METHOD_NOT_FOUND };
    }
  };
  return { call, calls };
}

async function handle(body: string, options: { maxBatchSize?: number; prettyPrint?: boolean } = {}) {
  const { call, calls } = fakeCall();
  const reply = await handleJsonRpcBody(body, {
    maxBatchSize: options.maxBatchSize ?? 1024,
    prettyPrint: options.prettyPrint ?? false,
    call,
  });
  return { ...reply, calls };
}

const PARSE_ERROR_BODY = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
const INVALID_REQUEST_NULL_ID = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}';
const invalidRequestWithId = (id: string) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32600,"message":"Invalid Request"}}`;

// ---------------------------------------------------------------------------------------------
// §1.2 parsing
// ---------------------------------------------------------------------------------------------

for (const [name, body] of [
  ['empty body', ''],
  ['whitespace body', '  \n '],
  ['malformed JSON', '{"jsonrpc":"2.0",'],
  ['trailing garbage', '{"id":1,"method":"echo"} x'],
  ['number scalar', '5'],
  ['string scalar', '"x"'],
  ['null scalar', 'null'],
  ['boolean scalar', 'true'],
] as const) {
  test(`parse error: ${name} → 400, id null`, async (t) => {
    const reply = await handle(body);
    t.is(reply.status, 400);
    t.is(reply.body, PARSE_ERROR_BODY);
    t.is(reply.calls.length, 0);
  });
}

test('empty batch → 400 single Invalid Request object', async (t) => {
  const reply = await handle('[]');
  t.is(reply.status, 400);
  t.is(reply.body, INVALID_REQUEST_NULL_ID);
});

test('single request: members in order jsonrpc, id, result', async (t) => {
  const reply = await handle('{"jsonrpc":"2.0","id":1,"method":"echo","params":["a",2]}');
  t.is(reply.status, 200);
  t.is(reply.body, '{"jsonrpc":"2.0","id":1,"result":["a",2]}');
  t.deepEqual(reply.calls, [{ method: 'echo', params: ['a', 2] }]);
});

test('jsonrpc member is not validated: missing or "1.0" work and the answer says 2.0', async (t) => {
  for (const body of ['{"id":1,"method":"echo"}', '{"jsonrpc":"1.0","id":1,"method":"echo"}', '{"jsonrpc":2,"id":1,"method":"echo"}']) {
    const reply = await handle(body);
    t.is(reply.status, 200, body);
    t.is(reply.body, '{"jsonrpc":"2.0","id":1,"result":[]}', body);
  }
});

test('jsonrpc member that is an object or array fails mapping → Invalid Request', async (t) => {
  const reply = await handle('{"jsonrpc":{},"id":1,"method":"echo"}');
  t.is(reply.status, 400);
  t.is(reply.body, invalidRequestWithId('1'));
});

test('missing or null method → 400 Invalid Request', async (t) => {
  for (const body of ['{"jsonrpc":"2.0","id":7}', '{"jsonrpc":"2.0","id":7,"method":null}']) {
    const reply = await handle(body);
    t.is(reply.status, 400, body);
    t.is(reply.body, invalidRequestWithId('7'), body);
    t.is(reply.calls.length, 0);
  }
});

test('method that is an object or array → Invalid Request; a scalar is coerced to a name', async (t) => {
  t.is((await handle('{"id":1,"method":{}}')).body, invalidRequestWithId('1'));
  t.is((await handle('{"id":1,"method":["echo"]}')).body, invalidRequestWithId('1'));
  const coerced = await handle('{"id":1,"method":5}');
  t.is(coerced.status, 200);
  t.deepEqual(coerced.calls, [{ method: '5', params: [] }]);
});

test('absent, null, [] and [null] params all mean no params', async (t) => {
  for (const params of ['', ',"params":null', ',"params":[]', ',"params":[null]']) {
    const reply = await handle(`{"id":1,"method":"echo"${params}}`);
    t.deepEqual(reply.calls, [{ method: 'echo', params: [] }], params);
  }
  const twoNulls = await handle('{"id":1,"method":"echo","params":[null,null]}');
  t.deepEqual(twoNulls.calls, [{ method: 'echo', params: [null, null] }]);
});

test('params that are an object (named) or a scalar → 400 Invalid Request', async (t) => {
  for (const params of ['{"a":1}', '5', '"x"', 'true']) {
    const reply = await handle(`{"id":3,"method":"echo","params":${params}}`);
    t.is(reply.status, 400, params);
    t.is(reply.body, invalidRequestWithId('3'), params);
    t.is(reply.calls.length, 0);
  }
});

test('unknown top-level members are ignored', async (t) => {
  const reply = await handle('{"id":1,"method":"echo","extra":{"x":[1]},"foo":"bar"}');
  t.is(reply.status, 200);
  t.is(reply.body, '{"jsonrpc":"2.0","id":1,"result":[]}');
});

test('object, array and boolean ids → 400 Invalid Request with id null', async (t) => {
  for (const id of ['{}', '[1]', 'true', 'false']) {
    const reply = await handle(`{"id":${id},"method":"echo"}`);
    t.is(reply.status, 400, id);
    t.is(reply.body, INVALID_REQUEST_NULL_ID, id);
    t.is(reply.calls.length, 0);
  }
});

// ---------------------------------------------------------------------------------------------
// §1.3 id echo
// ---------------------------------------------------------------------------------------------

for (const [source, echoed] of [
  ['"abc"', '"abc"'],
  ['"1"', '"1"'],
  ['"a\\"b\\u00e9"', '"a\\"bé"'],
  ['0', '0'],
  ['-5', '-5'],
  ['1.5', '1.5'],
  ['1.0', '1.0'],
  ['2.50', '2.5'],
  ['1E2', '100.0'],
  ['1e20', '1.0E20'],
  ['1.5e-5', '1.5E-5'],
  ['0.001', '0.001'],
  ['-0', '0'],
  ['-0.0', '-0.0'],
  ['9007199254740993', '9007199254740993'],
  ['123456789012345678901234567890', '123456789012345678901234567890'],
  ['-98765432109876543210', '-98765432109876543210'],
  ['null', 'null'],
] as const) {
  test(`id ${source} is echoed as ${echoed}`, async (t) => {
    const reply = await handle(`{"jsonrpc":"2.0","method":"echo","id":${source}}`);
    t.is(reply.status, 200);
    t.is(reply.body, `{"jsonrpc":"2.0","id":${echoed},"result":[]}`);
  });
}

test('"id": null is not a notification: the method runs and the answer has id null', async (t) => {
  const reply = await handle('{"id":null,"method":"nothing"}');
  t.is(reply.body, '{"jsonrpc":"2.0","id":null,"result":null}');
  t.is(reply.calls.length, 1);
});

test('the last duplicate id member wins, and an escaped "id" key counts', async (t) => {
  t.is((await handle('{"id":1,"method":"echo","id":12345678901234567890}')).body, '{"jsonrpc":"2.0","id":12345678901234567890,"result":[]}');
  t.is((await handle('{"\\u0069d":1.50,"method":"echo"}')).body, '{"jsonrpc":"2.0","id":1.5,"result":[]}');
});

test('id scanning is not fooled by "id" text inside strings or nested objects', async (t) => {
  const body = '{"params":["\\"id\\":5,\\\\", {"id": 99, "x": [{"id":3}]}],"method":"echo","id":100000000000000000001}';
  const reply = await handle(body);
  t.is(reply.status, 200);
  t.true(jsonTextToString(reply.body).startsWith('{"jsonrpc":"2.0","id":100000000000000000001,"result":'));
});

test('nesting up to Jackson\'s 1000 levels is served; deeper bodies are Parse errors, before JSON.parse', async (t) => {
  // The object is level 1, params level 2: 998 more arrays reach level 1000.
  const nested = (levels: number) => `{"method":"nothing","params":[${'['.repeat(levels)}${']'.repeat(levels)}],"id":2.0}`;
  t.is((await handle(nested(998))).body, '{"jsonrpc":"2.0","id":2.0,"result":null}');
  const tooDeep = await handle(nested(999));
  t.is(tooDeep.status, 400);
  t.is(tooDeep.body, PARSE_ERROR_BODY);
  t.deepEqual(tooDeep.calls, []);
  // 100k levels: refused without recursing anywhere; brackets inside strings do not count.
  t.is((await handle(`[${'['.repeat(100_000)}${']'.repeat(100_000)}]`)).body, PARSE_ERROR_BODY);
  const inString = await handle(`{"method":"echo","params":["${'['.repeat(5000)}\\"${'{'.repeat(5000)}"],"id":1}`);
  t.is(inString.status, 200);
  t.is(inString.calls.length, 1);
});

test('numbers longer than Jackson\'s 1000 characters are Parse errors, whatever their place', async (t) => {
  const digits = (n: number) => '9'.repeat(n);
  t.is((await handle(`{"method":"echo","params":[${digits(1000)}],"id":1}`)).status, 200);
  for (const body of [
    `{"method":"echo","params":[${digits(1001)}],"id":1}`,
    `{"method":"echo","params":[],"id":${digits(2_000_000)}}`,
    `{"method":"echo","params":[-1.${digits(1000)}e5],"id":1}`,
  ]) {
    const reply = await handle(body);
    t.is(reply.status, 400);
    t.is(reply.body, PARSE_ERROR_BODY);
  }
  // A long id within the limit is echoed exactly.
  t.is((await handle(`{"method":"nothing","id":${digits(1000)}}`)).body, `{"jsonrpc":"2.0","id":${digits(1000)},"result":null}`);
});

test('exceedsJsonLimits: escaped quotes end no string; an unterminated string is left to JSON.parse; literals are no numbers', (t) => {
  t.false(exceedsJsonLimits('{"a":"\\\\"}'));
  t.true(exceedsJsonLimits(`["\\"", ${'['.repeat(1000)}]`));
  t.false(exceedsJsonLimits(`["${'['.repeat(2000)}`));
  t.false(exceedsJsonLimits(`[${'true,false,null,'.repeat(1000)}1]`));
});

for (const [source, narrowed] of [
  ['1.5', '1'],
  ['-1.9', '-1'],
  ['4294967297', '1'],
  ['2147483648', '-2147483648'],
  ['12345678901234567890123', String(BigInt.asIntN(32, 12345678901234567890123n))],
  ['1e10', '2147483647'],
  ['-1e10', '-2147483648'],
  ['"7"', 'null'],
  ['null', 'null'],
] as const) {
  test(`request-level Invalid Request narrows id ${source} to ${narrowed}`, async (t) => {
    const reply = await handle(`{"id":${source}}`);
    t.is(reply.status, 400);
    t.is(reply.body, invalidRequestWithId(narrowed));
  });
}

// ---------------------------------------------------------------------------------------------
// §1.4 notifications
// ---------------------------------------------------------------------------------------------

test('a single notification → 200 with an empty body, and it is not executed (as in Besu)', async (t) => {
  const reply = await handle('{"jsonrpc":"2.0","method":"echo","params":[1]}');
  t.is(reply.status, 200);
  t.is(reply.body, '');
  t.is(reply.calls.length, 0);
});

test('a notification without a method still answers Invalid Request (mapping fails first)', async (t) => {
  const reply = await handle('{"jsonrpc":"2.0","params":[]}');
  t.is(reply.status, 400);
  t.is(reply.body, INVALID_REQUEST_NULL_ID);
});

// ---------------------------------------------------------------------------------------------
// §1.5 batches
// ---------------------------------------------------------------------------------------------

test('batch: order kept, notifications dropped, non-objects answered Invalid Request', async (t) => {
  const body = JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'echo', params: ['a'] },
    5,
    { jsonrpc: '2.0', method: 'echo' },
    null,
    { jsonrpc: '2.0', id: 'two', method: 'unknown' },
    [],
    'x',
    { jsonrpc: '2.0', id: 3, method: 'nothing' },
  ]);
  const reply = await handle(body);
  t.is(reply.status, 200);
  t.is(
    reply.body,
    '[' +
      [
        '{"jsonrpc":"2.0","id":1,"result":["a"]}',
        INVALID_REQUEST_NULL_ID,
        INVALID_REQUEST_NULL_ID,
        '{"jsonrpc":"2.0","id":"two","error":{"code":-32601,"message":"Method not found"}}',
        INVALID_REQUEST_NULL_ID,
        INVALID_REQUEST_NULL_ID,
        '{"jsonrpc":"2.0","id":3,"result":null}',
      ].join(',') +
      ']',
  );
  t.deepEqual(
    reply.calls.map((c) => c.method),
    ['echo', 'unknown', 'nothing'],
  );
});

test('batch of notifications only → []', async (t) => {
  const reply = await handle('[{"method":"echo"},{"method":"nothing","params":[1]}]');
  t.is(reply.status, 200);
  t.is(reply.body, '[]');
  t.is(reply.calls.length, 0);
});

test('batch status is 200 even when entries are Invalid Request / parse-type errors', async (t) => {
  const reply = await handle('[{"id":1},{"id":2,"method":"methodParseError"},{"id":3,"method":"unauthorized"}]');
  t.is(reply.status, 200);
  t.is(
    reply.body,
    `[${invalidRequestWithId('1')},{"jsonrpc":"2.0","id":2,"error":{"code":-32700,"message":"Parse error"}},{"jsonrpc":"2.0","id":3,"error":{"code":-40100,"message":"Unauthorized"}}]`,
  );
});

test('batch entries keep their own exact ids (big integers and doubles)', async (t) => {
  const reply = await handle('[{"id":123456789012345678901,"method":"nothing"},{"id":1.0,"method":"nothing"},{"id":"s","method":"nothing"},{"id":7,"params":{}}]');
  t.is(
    reply.body,
    `[{"jsonrpc":"2.0","id":123456789012345678901,"result":null},{"jsonrpc":"2.0","id":1.0,"result":null},{"jsonrpc":"2.0","id":"s","result":null},${invalidRequestWithId('7')}]`,
  );
});

test('batch larger than the limit → 200 with a single -32005 object, nothing executed', async (t) => {
  const entries = Array.from({ length: 4 }, (_, i) => ({ id: i, method: 'echo' }));
  const reply = await handle(JSON.stringify(entries), { maxBatchSize: 3 });
  t.is(reply.status, 200);
  t.is(reply.body, '{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Number of requests exceeds max batch size"}}');
  t.is(reply.calls.length, 0);
  const atLimit = await handle(JSON.stringify(entries.slice(0, 3)), { maxBatchSize: 3 });
  t.is(atLimit.calls.length, 3);
});

test('max batch size ≤ 0 means unlimited', async (t) => {
  const entries = Array.from({ length: 50 }, (_, i) => ({ id: i, method: 'nothing' }));
  for (const maxBatchSize of [0, -1]) {
    const reply = await handle(JSON.stringify(entries), { maxBatchSize });
    t.is((JSON.parse(jsonTextToString(reply.body)) as unknown[]).length, 50);
  }
});

test('batch entries execute sequentially', async (t) => {
  let running = 0;
  let maxRunning = 0;
  const order: number[] = [];
  const call: RpcCaller = async (_method, params) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    await new Promise((resolve) => setTimeout(resolve, 5 - (params[0] as number)));
    order.push(params[0] as number);
    running--;
    return { result: params[0] as number };
  };
  const body = JSON.stringify([0, 1, 2, 3, 4].map((n) => ({ id: n, method: 'm', params: [n] })));
  const reply = await handleJsonRpcBody(body, { maxBatchSize: 10, call });
  t.is(maxRunning, 1);
  t.deepEqual(order, [0, 1, 2, 3, 4]);
  t.deepEqual(
    (JSON.parse(jsonTextToString(reply.body)) as { result: number }[]).map((r) => r.result),
    [0, 1, 2, 3, 4],
  );
});

// ---------------------------------------------------------------------------------------------
// §1.6 status codes and response shape
// ---------------------------------------------------------------------------------------------

for (const [method, status, error] of [
  ['methodParseError', 400, '{"code":-32700,"message":"Parse error"}'],
  ['methodInvalidRequest', 400, '{"code":-32600,"message":"Invalid Request"}'],
  ['unauthorized', 401, '{"code":-40100,"message":"Unauthorized"}'],
  ['unknown', 200, '{"code":-32601,"message":"Method not found"}'],
  ['badParams', 200, '{"code":-32602,"message":"Invalid params"}'],
  ['internal', 200, '{"code":-32603,"message":"Internal error"}'],
] as const) {
  test(`single request answered ${error} → HTTP ${status}, id kept`, async (t) => {
    const reply = await handle(`{"id":"q","method":"${method}"}`);
    t.is(reply.status, status);
    t.is(reply.body, `{"jsonrpc":"2.0","id":"q","error":${error}}`);
  });
}

test('error data is written after message; result null is explicit', async (t) => {
  t.is((await handle('{"id":1,"method":"revert"}')).body, '{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"Execution reverted","data":"0x"}}');
  t.is((await handle('{"id":1,"method":"nothing"}')).body, '{"jsonrpc":"2.0","id":1,"result":null}');
});

test('error members are re-ordered code, message, data whatever order the actor used', async (t) => {
  const call: RpcCaller = async () => ({ error: { data: '0x01', message: 'Execution reverted', code: 3 } });
  const reply = await handleJsonRpcBody('{"id":1,"method":"x"}', { maxBatchSize: 1, call });
  t.is(reply.body, '{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"Execution reverted","data":"0x01"}}');
});

test('a call that throws instead of answering becomes -32603 with the request id', async (t) => {
  const call: RpcCaller = async () => {
    throw new Error('bug');
  };
  const reply = await handleJsonRpcBody('{"id":4,"method":"x"}', { maxBatchSize: 1, call });
  t.is(reply.status, 200);
  t.is(reply.body, '{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}');
});

test('pretty printing: Jackson layout for a single response, compact batches', async (t) => {
  const single = await handle('{"id":1.5,"method":"echo","params":[{"a":[1,{}],"b":[]},"x"]}', { prettyPrint: true });
  t.is(
    single.body,
    '{\n  "jsonrpc" : "2.0",\n  "id" : 1.5,\n  "result" : [ {\n    "a" : [ 1, { } ],\n    "b" : [ ]\n  }, "x" ]\n}',
  );
  const error = await handle('{"id":2,"method":"revert"}', { prettyPrint: true });
  t.is(error.body, '{\n  "jsonrpc" : "2.0",\n  "id" : 2,\n  "error" : {\n    "code" : 3,\n    "message" : "Execution reverted",\n    "data" : "0x"\n  }\n}');
  const batch = await handle('[{"id":1,"method":"nothing"}]', { prettyPrint: true });
  t.is(batch.body, '[{"jsonrpc":"2.0","id":1,"result":null}]');
});

test('prettyJson follows Jackson DefaultPrettyPrinter', (t) => {
  t.is(prettyJson({ status: 'UP' }), '{\n  "status" : "UP"\n}');
  t.is(prettyJson({}), '{ }');
  t.is(prettyJson([]), '[ ]');
  t.is(prettyJson({ a: { b: [1, 2] } }), '{\n  "a" : {\n    "b" : [ 1, 2 ]\n  }\n}');
});

for (const [value, text] of [
  [1.5, '1.5'],
  [100, '100.0'],
  [1e20, '1.0E20'],
  [1e-5, '1.0E-5'],
  [0.001, '0.001'],
  [1e7, '1.0E7'],
  [9999999, '9999999.0'],
  [0.1, '0.1'],
  [123456789.123, '1.23456789123E8'],
  [5e-324, '4.9E-324'],
  [-2.5, '-2.5'],
  [-0, '-0.0'],
  [0, '0.0'],
  [Infinity, 'Infinity'],
] as const) {
  test(`javaDoubleToString(${String(value)}) = ${text}`, (t) => {
    t.is(javaDoubleToString(value), text);
  });
}

// ---------------------------------------------------------------------------------------------
// createMethodCaller: lookup, enablement, params, dispatch
// ---------------------------------------------------------------------------------------------

type Sent = { owner: Owner; method: string; params: Wire };

function caller(options: { apis?: string[]; answer?: (sent: Sent) => RpcOutcome | Promise<RpcOutcome> } = {}) {
  const sent: Sent[] = [];
  const send: Dispatch = async (owner, method, params) => {
    const entry = { owner, method, params };
    sent.push(entry);
    return options.answer ? options.answer(entry) : { result: 'answered' };
  };
  return { call: createMethodCaller({ enabledApis: options.apis ?? ['ETH', 'NET', 'WEB3'], send }), sent };
}

const ADDRESS = '0x8888f1f195afa192cfee860698584c030f4c9db1';
const HASH = '0x71d59849ddd98543bdfbe8548f5eed559b07b8aaf196369f39134500eab68e53';

test('unknown method name → -32601; lookup is case-sensitive', async (t) => {
  const { call, sent } = caller();
  t.deepEqual(await call('eth_doesNotExist', []), { error: RpcErrors.METHOD_NOT_FOUND });
  t.deepEqual(await call('ETH_BLOCKNUMBER', []), { error: RpcErrors.METHOD_NOT_FOUND });
  t.is(sent.length, 0);
});

test('methods Basalt does not serve → -32601 whatever groups are enabled; served but not enabled → -32604', async (t) => {
  const { call, sent } = caller({ apis: ['ETH', 'ADMIN', 'DEBUG', 'PERM', 'ENGINE', 'TRACE'] });
  // Besu names Basalt does not implement: no option would make them answer.
  for (const name of ['eth_coinbase', 'eth_subscribe', 'engine_newPayloadV3', 'perm_getNodesAllowlist', 'trace_block']) {
    t.deepEqual(await call(name, []), { error: RpcErrors.METHOD_NOT_FOUND }, name);
  }
  // served by Basalt, but its group is not enabled here
  for (const name of ['net_version', 'web3_clientVersion', 'qbft_getPendingVotes', 'txpool_besuStatistics']) {
    t.deepEqual(await call(name, []), { error: RpcErrors.METHOD_NOT_ENABLED }, name);
  }
  t.is(sent.length, 0);
});

test('rpc_modules is enabled whenever any API group is', async (t) => {
  t.deepEqual(await caller({ apis: ['NET'] }).call('rpc_modules', []), { result: 'answered' });
  t.deepEqual(await caller({ apis: [] }).call('rpc_modules', []), { error: RpcErrors.METHOD_NOT_ENABLED });
});

test('exact-count methods reject any other number of params', async (t) => {
  const { call, sent } = caller();
  for (const [method, params] of [
    ['eth_getTransactionByHash', []],
    ['eth_getTransactionByHash', [HASH, '0x0']],
    ['eth_sendRawTransaction', []],
    ['eth_sendRawTransaction', ['0x00', '0x00']],
    ['web3_sha3', []],
    ['web3_sha3', ['0x', '0x']],
  ] as const) {
    t.deepEqual(await call(method, [...params]), { error: RpcErrors.INVALID_PARAM_COUNT }, `${method} ${params.length}`);
  }
  t.is(sent.length, 0);
});

test('other methods ignore extra params', async (t) => {
  const { call, sent } = caller();
  t.deepEqual(await call('eth_getBalance', [ADDRESS, 'latest', 'extra', 5]), { result: 'answered' });
  t.deepEqual(await call('eth_chainId', ['anything']), { result: 'answered' });
  t.is(sent.length, 2);
});

for (const [method, params, error] of [
  ['eth_getBalance', [], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_getBalance', [ADDRESS], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_getBalance', [ADDRESS, 'latest!'], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_getBalance', [ADDRESS, '-0x10'], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS],
  ['eth_getBalance', ['0xzz', 'latest'], RpcErrors.INVALID_ADDRESS_PARAMS],
  ['eth_getBalance', [ADDRESS + '00', 'latest'], RpcErrors.INVALID_ADDRESS_PARAMS],
  ['eth_getCode', [null, 'latest'], RpcErrors.INVALID_ADDRESS_PARAMS],
  ['eth_getTransactionCount', [ADDRESS, '0xD5C9556Ec8Fef8A240EDdFdd01433Dc6EC08CBCa'], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_getStorageAt', [ADDRESS, 'zz', 'latest'], RpcErrors.INVALID_POSITION_PARAMS],
  ['eth_getStorageAt', [ADDRESS, '0x1'], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_getBlockByNumber', ['0x1'], RpcErrors.INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS],
  ['eth_getBlockByNumber', ['0x1', 'yes'], RpcErrors.INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS],
  ['eth_getBlockByNumber', ['foo', true], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS],
  ['eth_getBlockByNumber', [], RpcErrors.INVALID_BLOCK_NUMBER_PARAMS],
  ['eth_getBlockByHash', ['0x1234', false], RpcErrors.INVALID_BLOCK_HASH_PARAMS],
  ['eth_getBlockByHash', [HASH], RpcErrors.INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS],
  ['eth_getTransactionByHash', ['0x0'], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS],
  ['eth_getTransactionReceipt', [], RpcErrors.INVALID_TRANSACTION_HASH_PARAMS],
  ['eth_call', ['0x8'], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_call', ['0x8', 'latest'], RpcErrors.INVALID_CALL_PARAMS],
  ['eth_call', [{ input: '0x12', data: '0x13' }, 'latest'], RpcErrors.INVALID_CALL_PARAMS],
  ['eth_call', [{ to: ADDRESS }, 'latest', 'not-an-object'], RpcErrors.INVALID_CALL_PARAMS],
  ['eth_estimateGas', [], RpcErrors.INVALID_CALL_PARAMS],
  ['eth_estimateGas', [{}, 'nope'], RpcErrors.INVALID_BLOCK_PARAMS],
  ['eth_sendRawTransaction', [5], RpcErrors.INVALID_TRANSACTION_PARAMS],
  ['eth_sendRawTransaction', ['0xzz'], RpcErrors.INVALID_PARAMS],
  ['eth_sendRawTransaction', ['0x123'], RpcErrors.INVALID_PARAMS],
  ['web3_sha3', ['abc'], RpcErrors.INVALID_DATA_PARAMS],
  ['web3_sha3', [5], RpcErrors.INVALID_DATA_PARAMS],
  ['web3_sha3', ['0xgg'], RpcErrors.INVALID_DATA_PARAMS],
] as const) {
  test(`${method} ${JSON.stringify(params)} → ${error.message}`, async (t) => {
    const { call, sent } = caller();
    t.deepEqual(await call(method, JSON.parse(JSON.stringify(params)) as unknown[]), { error });
    t.is(sent.length, 0, 'bad params never reach an owner');
  });
}

test('parsed params reach the owner named by the registry', async (t) => {
  const { call, sent } = caller({ apis: ['ETH', 'WEB3'] });
  await call('eth_getBalance', [ADDRESS, '0x10']);
  await call('eth_sendRawTransaction', ['0xc0']);
  await call('web3_sha3', ['0x01']);
  await call('eth_estimateGas', [{}]);
  t.deepEqual(sent, [
    {
      owner: 'reader',
      method: 'eth_getBalance',
      params: { address: Uint8Array.from(Buffer.from(ADDRESS.slice(2), 'hex')), block: { kind: 'number', number: 16n } },
    },
    { owner: 'txpool', method: 'eth_sendRawTransaction', params: { raw: Uint8Array.of(0xc0) } },
    { owner: 'transport', method: 'web3_sha3', params: { data: Uint8Array.of(1) } },
    { owner: 'reader', method: 'eth_estimateGas', params: { call: {}, block: { kind: 'tag', tag: 'pending' } } },
  ]);
});

test('eth_sendTransaction goes to the transport, which answers the fixed -32604 text', async (t) => {
  const { call, sent } = caller();
  await call('eth_sendTransaction', [{}]);
  t.deepEqual(sent.map((s) => [s.owner, s.method]), [['transport', 'eth_sendTransaction']]);
});

test('eth_getTransactionByHash asks the pool first and the chain only when the pool answers null', async (t) => {
  const pooled = caller({ answer: (s) => ({ result: s.owner === 'txpool' ? 'pending-shape' : 'mined-shape' }) });
  t.deepEqual(await pooled.call('eth_getTransactionByHash', [HASH]), { result: 'pending-shape' });
  t.deepEqual(pooled.sent.map((s) => s.owner), ['txpool']);

  const mined = caller({ answer: (s) => ({ result: s.owner === 'txpool' ? null : 'mined-shape' }) });
  t.deepEqual(await mined.call('eth_getTransactionByHash', [HASH]), { result: 'mined-shape' });
  t.deepEqual(mined.sent.map((s) => s.owner), ['txpool', 'chain']);

  const unknown = caller({ answer: () => ({ result: null }) });
  t.deepEqual(await unknown.call('eth_getTransactionByHash', [HASH]), { result: null });
  t.is(unknown.sent.length, 2);

  const failing = caller({ answer: () => ({ error: RpcErrors.TX_POOL_DISABLED }) });
  t.deepEqual(await failing.call('eth_getTransactionByHash', [HASH]), { error: RpcErrors.TX_POOL_DISABLED });
  t.is(failing.sent.length, 1);
});

test('an actor answers JSON text: written out as it came, re-laid out when pretty printing, "null" falls back', async (t) => {
  const text = '{"logs":[{"a":"0x1"}],"n":null}';
  const call: RpcCaller = async () => ({ resultJson: text });
  const compact = await handleJsonRpcBody('{"id":7,"method":"eth_getLogs"}', { maxBatchSize: 1, call });
  t.is(compact.body, `{"jsonrpc":"2.0","id":7,"result":${text}}`);
  const pretty = await handleJsonRpcBody('{"id":7,"method":"eth_getLogs"}', { maxBatchSize: 1, prettyPrint: true, call });
  t.is(pretty.body, '{\n  "jsonrpc" : "2.0",\n  "id" : 7,\n  "result" : {\n    "logs" : [ {\n      "a" : "0x1"\n    } ],\n    "n" : null\n  }\n}');

  const mined = caller({ answer: (s) => ({ resultJson: s.owner === 'txpool' ? 'null' : '"mined-shape"' }) });
  t.deepEqual(await mined.call('eth_getTransactionByHash', [HASH]), { resultJson: '"mined-shape"' });
  t.deepEqual(mined.sent.map((s) => s.owner), ['txpool', 'chain']);
});

test('owner answers pass through; a thrown RpcError becomes its object; any other throw -32603', async (t) => {
  const errorAnswer = caller({ answer: () => ({ error: { code: 3, message: 'Execution reverted', data: '0x' } }) });
  t.deepEqual(await errorAnswer.call('eth_call', [{}, 'latest']), { error: { code: 3, message: 'Execution reverted', data: '0x' } });

  const rpcThrow = caller({
    answer: () => {
      throw new RpcError(RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT, undefined, 'intrinsic gas cost 21000 exceeds gas limit 0');
    },
  });
  t.deepEqual(await rpcThrow.call('eth_call', [{}, 'latest']), {
    error: { code: -32003, message: 'Intrinsic gas exceeds gas limit (intrinsic gas cost 21000 exceeds gas limit 0)' },
  });

  const crash = caller({
    answer: () => {
      throw new TypeError('boom');
    },
  });
  t.deepEqual(await crash.call('eth_gasPrice', []), { error: RpcErrors.INTERNAL_ERROR });
});

test('handleJsonRpcBody + createMethodCaller: HTTP-level answers for method errors', async (t) => {
  const { call } = caller();
  const notFound = await handleJsonRpcBody('{"jsonrpc":"2.0","id":1,"method":"foo_bar"}', { maxBatchSize: 10, call });
  t.is(notFound.status, 200);
  t.is(notFound.body, '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}');
  const notEnabled = await handleJsonRpcBody('{"jsonrpc":"2.0","id":1,"method":"admin_peers"}', { maxBatchSize: 10, call });
  t.is(notEnabled.status, 200);
  t.is(notEnabled.body, '{"jsonrpc":"2.0","id":1,"error":{"code":-32604,"message":"Method not enabled"}}');
  const count = await handleJsonRpcBody('{"jsonrpc":"2.0","id":406,"method":"eth_getTransactionByHash","params":[]}', { maxBatchSize: 10, call });
  t.is(count.body, '{"jsonrpc":"2.0","id":406,"error":{"code":-32602,"message":"Invalid number of params"}}');
});
