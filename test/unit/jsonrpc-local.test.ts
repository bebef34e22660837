/**
 * Methods the transport answers itself, and the shared-memory head view they read.
 */
import test from 'ava';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { RpcErrors } from '../../src/shared/rpc/errors.js';
import { createMethodCaller, handleJsonRpcBody } from '../../src/transport/jsonrpc.js';
import { lookupMethod, methodNamesOwnedBy } from '../../src/shared/rpc/registry.js';
import { createHeadBuffer, HeadReader, HeadWriter } from '../../src/shared/shared-memory/head-view.js';
import { createDispatch, createLocalMethods, type LocalMethodsContext } from '../../src/transport/local-methods.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

function node(overrides: Partial<LocalMethodsContext> = {}) {
  const buffer = createHeadBuffer();
  const writer = new HeadWriter(buffer);
  const context: LocalMethodsContext = {
    clientVersion: 'basalt/v0.1.0/linux-x86_64/nodejs-20',
    networkId: 2018n,
    chainId: 1337n,
    apis: ['ETH', 'NET', 'WEB3', 'QBFT'],
    head: new HeadReader(buffer),
    p2pEnabled: false,
    ...overrides,
  };
  const actorCalls: string[] = [];
  const call = createMethodCaller({
    enabledApis: context.apis,
    send: createDispatch(createLocalMethods(context), async (owner, method) => {
      actorCalls.push(`${owner}:${method}`);
      return { result: null };
    }),
  });
  const rpc = async (method: string, params: unknown[] = []) => {
    const reply = await handleJsonRpcBody(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), { maxBatchSize: 10, call });
    return JSON.parse(jsonTextToString(reply.body)) as { result?: unknown; error?: unknown };
  };
  return { rpc, writer, actorCalls };
}

test('every transport-owned method has a local handler and none reaches an actor', async (t) => {
  const { rpc, writer, actorCalls } = node({ p2pEnabled: true });
  writer.publish(1n, new Uint8Array(32));
  for (const method of methodNamesOwnedBy('transport')) {
    // Subscriptions are served over WebSocket and IPC only (test/unit/jsonrpc-stream.test.ts).
    if (lookupMethod(method)?.transports?.includes('http') === false) continue;
    const answer = await rpc(method, method === 'web3_sha3' ? ['0x'] : []);
    t.not((answer.error as { code?: number } | undefined)?.code, RpcErrors.METHOD_NOT_FOUND.code, method);
  }
  t.deepEqual(actorCalls, []);
});

test('eth_blockNumber reads the published head; before any head it is an internal error', async (t) => {
  const { rpc, writer } = node();
  t.deepEqual(await rpc('eth_blockNumber'), { jsonrpc: '2.0', id: 1, error: RpcErrors.INTERNAL_ERROR });
  writer.publish(0x22n, new Uint8Array(32).fill(7));
  t.is((await rpc('eth_blockNumber')).result, '0x22');
  writer.publish(1000n, new Uint8Array(32).fill(8));
  t.is((await rpc('eth_blockNumber')).result, '0x3e8');
});

test('static facts: chain id, network id (decimal string), syncing, client version, rpc_modules', async (t) => {
  const { rpc } = node();
  t.is((await rpc('eth_chainId')).result, '0x539');
  t.is((await rpc('net_version')).result, '2018');
  t.is((await rpc('eth_syncing')).result, false);
  t.is((await rpc('web3_clientVersion')).result, 'basalt/v0.1.0/linux-x86_64/nodejs-20');
  t.deepEqual((await rpc('rpc_modules')).result, { eth: '1.0', net: '1.0', web3: '1.0', qbft: '1.0' });
  t.is((await node({ chainId: null }).rpc('eth_chainId')).result, null);
});

test('net_peerCount / net_listening follow the P2P switch', async (t) => {
  const disabled = node({ p2pEnabled: false });
  t.deepEqual((await disabled.rpc('net_peerCount')).error, RpcErrors.P2P_DISABLED);
  t.is((await disabled.rpc('net_listening')).result, false);
  const enabled = node({ p2pEnabled: true, peerCount: () => 3 });
  t.is((await enabled.rpc('net_peerCount')).result, '0x3');
  t.is((await enabled.rpc('net_listening')).result, true);
  t.is((await node({ p2pEnabled: true }).rpc('net_peerCount')).result, '0x0');
});

test('eth_sendTransaction always answers the fixed -32604 text', async (t) => {
  const { rpc } = node();
  t.deepEqual((await rpc('eth_sendTransaction', [{ from: '0x' + '00'.repeat(20) }])).error, {
    code: -32604,
    message: 'The method eth_sendTransaction is not supported. Use eth_sendRawTransaction to send a signed transaction to Besu.',
  });
});

for (const [input, digest] of [
  ['', '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
  ['0x', '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
  ['0x68656c6c6f20776f726c64', '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad'],
  ['0x1', '0x5fe7f977e71dba2ea1a68e21057beebb9be2ac30c6410aa38d4f3fbe41dcffd2'],
] as const) {
  test(`web3_sha3(${JSON.stringify(input)}) is keccak-256`, async (t) => {
    t.is((await node().rpc('web3_sha3', [input])).result, digest);
  });
}

test('web3_sha3 rejects non-hex input and a missing 0x prefix', async (t) => {
  const { rpc } = node();
  for (const input of ['68656c6c6f', '0X12', '0xzz', 12]) {
    t.deepEqual((await rpc('web3_sha3', [input])).error, RpcErrors.INVALID_DATA_PARAMS, String(input));
  }
});

test('head view: read() returns the published pair, null before the first publish', (t) => {
  const buffer = createHeadBuffer();
  const reader = new HeadReader(buffer);
  t.is(reader.read(), null);
  t.is(reader.headNumber(), null);
  new HeadWriter(buffer).publish(5n, new Uint8Array(32).fill(0x55));
  t.deepEqual(reader.read(), { number: 5n, hash: new Uint8Array(32).fill(0x55) });
  t.is(reader.headNumber(), 5n);
  t.throws(() => new HeadWriter(buffer).publish(6n, new Uint8Array(31)), { message: /32 bytes/ });
});

test('head view: a reader never sees a torn (number, hash) pair while another thread publishes', async (t) => {
  const buffer = createHeadBuffer();
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const moduleUrl = pathToFileURL(new URL('../../src/shared/shared-memory/head-view.js', import.meta.url).pathname).href;
  const worker = new Worker(
    `
    const { workerData } = require('node:worker_threads');
    import(${JSON.stringify(moduleUrl)}).then(({ HeadWriter }) => {
      const writer = new HeadWriter(workerData.buffer);
      const stop = new Int32Array(workerData.stop);
      const hash = new Uint8Array(32);
      for (let n = 1; Atomics.load(stop, 0) === 0; n++) {
        hash.fill(n & 0xff);
        hash[0] = (n >> 8) & 0xff;
        writer.publish(BigInt(n), hash);
      }
    });
    `,
    { eval: true, workerData: { buffer, stop: stop.buffer } },
  );
  const reader = new HeadReader(buffer);
  const started = Date.now();
  while (reader.headNumber() === null) {
    if (Date.now() - started > 10_000) throw new Error('the writer thread never published');
  }
  let previous = 0n;
  let torn = 0;
  let distinct = 0;
  for (let i = 0; i < 300_000; i++) {
    const head = reader.read()!;
    const n = Number(head.number);
    const expectedFirst = (n >> 8) & 0xff;
    const expectedRest = n & 0xff;
    if (head.hash[0] !== expectedFirst || head.hash.subarray(1).some((byte) => byte !== expectedRest)) torn++;
    if (head.number < previous) torn++;
    if (head.number !== previous) distinct++;
    previous = head.number;
  }
  Atomics.store(stop, 0, 1);
  await new Promise((resolve) => worker.once('exit', resolve));
  t.is(torn, 0);
  t.true(distinct > 10, `the reader saw ${distinct} different heads`);
});
