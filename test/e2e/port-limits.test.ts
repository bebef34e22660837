/**
 * Each limit of a running node's ports, set small through its CLI option: the request body
 * (--rpc-http-max-request-content-length → 413, declared or chunked), the batch size
 * (--rpc-http-max-batch-size → -32005), Jackson's nesting depth and number length (→ Parse error),
 * giant strings and numbers in params (→ the method's -32602, at once), the eth_getLogs range
 * (--rpc-max-logs-range) and result count (--rpc-max-logs-count, also paging eth_getFilterChanges),
 * and on the devp2p port a peer flooding requests (→ disconnected, breach of protocol).
 */
import test from 'ava';
import http from 'node:http';
import { RLP } from '@ethereumjs/rlp';
import { JsonRpcProvider, Wallet } from 'ethers';
import { parseEnode } from '../../src/shared/ethereum/enode.js';
import { loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { REQUEST_BUDGET } from '../../src/p2p/peer-limits.js';
import { FakePeer } from '../harness/fuzz/fake-peer.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { STORED_EVENT_TOPIC, storeAndLogDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const MAX_CONTENT_LENGTH = 1024 * 1024;
let node: NodeProcess;

test.before(async () => {
  node = await startNode({
    p2p: true,
    args: [
      `--rpc-http-max-request-content-length=${MAX_CONTENT_LENGTH}`,
      '--rpc-http-max-batch-size=3',
      '--rpc-max-logs-range=10',
      '--rpc-max-logs-count=2',
      '--logging=DEBUG',
    ],
  });
});

test.after.always(async () => {
  await node?.kill();
  if (node) removeDataPath(node.dataPath);
});

interface Reply {
  status: number;
  body: string;
}

/** POST / with `body`; `declaredLength` overrides Content-Length; `chunks` are sent with chunked encoding and no end. */
function post(options: { body?: string; declaredLength?: number; chunks?: string[] }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: '127.0.0.1', 'content-type': 'application/json' };
    if (options.body !== undefined) headers['content-length'] = String(options.declaredLength ?? Buffer.byteLength(options.body));
    else headers['transfer-encoding'] = 'chunked';
    const req = http.request({ host: '127.0.0.1', port: node.port, method: 'POST', path: '/', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    if (options.body !== undefined) {
      // A declared length larger than what is sent: the answer must not wait for the rest.
      if (options.declaredLength !== undefined) req.write(options.body);
      else req.end(options.body);
    } else {
      for (const chunk of options.chunks ?? []) req.write(chunk);
    }
  });
}

const request = (method: string, params: unknown[] = [], id = 1) => ({ jsonrpc: '2.0', id, method, params });
const PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';

test('a body over --rpc-http-max-request-content-length is refused with 413, declared or chunked', async (t) => {
  const declared = await post({ body: '{"jsonrpc":"2.0"', declaredLength: MAX_CONTENT_LENGTH + 1 });
  t.deepEqual(declared, { status: 413, body: 'Request Entity Too Large' });
  const piece = 'x'.repeat(600 * 1024);
  const chunked = await post({ chunks: [piece, piece] });
  t.deepEqual(chunked, { status: 413, body: 'Request Entity Too Large' });
  // At the limit it is served.
  const atLimit = JSON.stringify(request('eth_chainId')).padEnd(MAX_CONTENT_LENGTH, ' ');
  t.is((await post({ body: atLimit })).status, 200);
});

test('a batch over --rpc-http-max-batch-size answers one -32005 object; at the size, every entry', async (t) => {
  const over = await post({ body: JSON.stringify([1, 2, 3, 4].map((id) => request('eth_chainId', [], id))) });
  t.deepEqual(over, { status: 200, body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"Number of requests exceeds max batch size"}}' });
  const at = await post({ body: JSON.stringify([1, 2, 3].map((id) => request('eth_chainId', [], id))) });
  t.is(at.status, 200);
  t.is((JSON.parse(at.body) as unknown[]).length, 3);
});

test('nesting past 1000 levels and numbers past 1000 characters are Parse errors (Jackson\'s limits)', async (t) => {
  // The request object is level 1 and params level 2: 998 more levels reach 1000.
  const nested = (levels: number) => `{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[${'['.repeat(levels)}${']'.repeat(levels)}]}`;
  t.is((await post({ body: nested(998) })).status, 200);
  t.deepEqual(await post({ body: nested(999) }), { status: 400, body: PARSE_ERROR });
  t.deepEqual(await post({ body: nested(200_000) }), { status: 400, body: PARSE_ERROR });
  t.deepEqual(await post({ body: `{"jsonrpc":"2.0","id":${'7'.repeat(1001)},"method":"eth_chainId"}` }), { status: 400, body: PARSE_ERROR });
  t.is((await post({ body: `{"jsonrpc":"2.0","id":${'7'.repeat(1000)},"method":"eth_chainId"}` })).status, 200);
  t.is(node.process.exitCode, null);
});

test('giant strings and numbers in params get the method\'s -32602 at once', async (t) => {
  const giant = (text: string) => text.repeat(Math.floor((MAX_CONTENT_LENGTH - 200) / Buffer.byteLength(text)));
  const cases: [unknown, { code: number; message: string }][] = [
    [request('eth_getBlockByNumber', [giant('1'), false]), { code: -32602, message: 'Invalid block number params' }],
    [request('eth_getBlockByNumber', [`0x${giant('f')}`, false]), { code: -32602, message: 'Invalid block number params' }],
    [request('eth_getBalance', [`0x${giant('a')}`, 'latest']), { code: -32602, message: 'Invalid address params' }],
    [request('eth_getTransactionCount', ['0x' + '00'.repeat(20), giant('9')]), { code: -32602, message: 'Invalid block param (block not found)' }],
    [request('eth_getBlockByHash', [giant('\u00e9'), false]), { code: -32602, message: 'Invalid block hash params' }],
    [request('eth_getLogs', [{ fromBlock: giant('1') }]), { code: -32602, message: 'Invalid filter params' }],
  ];
  for (const [body, error] of cases) {
    const started = Date.now();
    const reply = await post({ body: JSON.stringify(body) });
    t.deepEqual(JSON.parse(reply.body), { jsonrpc: '2.0', id: 1, error });
    t.true(Date.now() - started < 5_000, `${error.message} took ${Date.now() - started} ms`);
  }
});

test.serial('eth_getLogs: --rpc-max-logs-range and --rpc-max-logs-count; eth_getFilterChanges hands the logs out in parts', async (t) => {
  t.timeout(90_000);
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, batchMaxCount: 1, pollingInterval: 100 });
  t.teardown(() => provider.destroy());
  const wallet = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
  const deployed = await (await wallet.sendTransaction({ data: storeAndLogDeployCode() })).wait();
  const contract = deployed!.contractAddress!;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const filterId = await node.rpc<string>('eth_newFilter', [{ address: contract, fromBlock: hex(deployed!.blockNumber) }]);
  // Three logs in three blocks.
  const blocks: number[] = [];
  for (let i = 1; i <= 3; i++) {
    const receipt = await (await wallet.sendTransaction({ to: contract, data: `0x${i.toString(16).padStart(64, '0')}` })).wait();
    blocks.push(receipt!.blockNumber);
  }
  const [first, second, last] = blocks as [number, number, number];
  const rpcError = async (method: string, params: unknown[]) => {
    const reply = await post({ body: JSON.stringify(request(method, params)) });
    return (JSON.parse(reply.body) as { error?: unknown }).error;
  };

  let head = Number(await node.rpc<string>('eth_blockNumber'));
  while (head < 11) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    head = Number(await node.rpc<string>('eth_blockNumber'));
  }
  t.deepEqual(await rpcError('eth_getLogs', [{ fromBlock: hex(head - 11), toBlock: hex(head) }]), { code: -32005, message: 'Requested range exceeds maximum RPC range limit' });
  t.deepEqual(await node.rpc('eth_getLogs', [{ fromBlock: hex(head - 10), toBlock: hex(head), address: '0x00000000000000000000000000000000000000aa' }]), []);
  t.true(last - first <= 10);
  t.deepEqual(await rpcError('eth_getLogs', [{ fromBlock: hex(first), toBlock: hex(last), address: contract }]), { code: -32005, message: 'query returned more than 2 results' });
  const twoLogs = await node.rpc<{ topics: string[] }[]>('eth_getLogs', [{ fromBlock: hex(second), toBlock: hex(last), address: contract }]);
  t.is(twoLogs.length, 2);
  t.is(twoLogs[0]!.topics[0], STORED_EVENT_TOPIC);

  // The filter saw all three: at most two per poll, whole blocks, nothing lost.
  const polled: unknown[][] = [];
  for (let poll = 0; poll < 4; poll++) polled.push(await node.rpc<unknown[]>('eth_getFilterChanges', [filterId]));
  t.deepEqual(polled.map((logs) => logs.length), [2, 1, 0, 0]);
  t.deepEqual(await rpcError('eth_getFilterLogs', [filterId]), { code: -32005, message: 'query returned more than 2 results' });
});

test.serial('devp2p: a peer flooding requests is disconnected for a breach of protocol, and logged', async (t) => {
  const enode = parseEnode(await node.rpc<string>('net_enode'));
  const genesisHash = (await node.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false])).hash;
  const peer = await FakePeer.connect(
    { id: enode.id, host: '127.0.0.1', port: enode.tcpPort },
    { genesis: parseGenesis(loadDevNetwork().genesisJson), genesisHash: Uint8Array.from(Buffer.from(genesisHash.slice(2), 'hex')), networkId: BigInt(await node.rpc<string>('net_version')) },
  );
  t.teardown(() => peer.close());
  let sent = 0;
  while (peer.isOpen && sent < REQUEST_BUDGET.capacity * 5) {
    for (let i = 0; i < 16; i++) peer.sendEth(0x0f, RLP.encode([++sent, []]));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.is((await peer.ended).reason, 0x02);
  const deadline = Date.now() + 5_000;
  while (!/breach of protocol\): more than/.test(node.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.regex(node.output(), /breach of protocol\): more than \d+ (requests a second|requests in flight)/);
  t.is(node.process.exitCode, null);
});
