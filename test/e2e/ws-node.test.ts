/**
 * JSON-RPC over WebSocket against a node process (rpc-auth-cli.md §6): ethers v6's WebSocketProvider
 * (new blocks, a contract event listener with a topic filter), raw frames for every answer of §6.2,
 * batches, subscriptions (ids across connections, unsubscribe, dropped with their connection,
 * pending and dropped transactions, newHeads with full transactions), each transport's API groups,
 * plain HTTP on the WebSocket port, several transport threads on one port,
 * and the limits: the 81st connection, a message over the frame limit, a client that never reads.
 */
import test from 'ava';
import { request as httpRequest } from 'node:http';
import { Contract, JsonRpcProvider, WebSocketProvider, Wallet, toBeHex, zeroPadValue } from 'ethers';
import type { ContractEventPayload } from 'ethers';
import WebSocket from 'ws';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { MARKED_ABI, markedDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { WsClient } from '../helpers/ws-client.js';

/** Messages above 4 × this close the connection. */
const FRAME_SIZE = 16_384;
const ERROR = (code: number, message: string, id: unknown = null) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

let node: NodeProcess;
let wsUrl: string;
const dataPath = tempDataPath();
const clients: WsClient[] = [];

/** POSTs `body` on a TCP connection of its own; answers the response body. */
function postOnNewConnection(url: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve(text));
    });
    request.once('error', reject);
    request.end(body);
  });
}

async function connect(): Promise<WsClient> {
  const client = await WsClient.open(wsUrl);
  clients.push(client);
  return client;
}

/** Closes every test connection and waits until the node has seen them all close. */
async function closeAll(): Promise<void> {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await waitUntil('every WebSocket connection closed on the node', () => {
    const output = node.output();
    return count(output, /WebSocket connection from \S+ opened/g) === count(output, /WebSocket connection from \S+ closed/g);
  });
}

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}

async function waitUntil(what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An ethers WebSocketProvider that tells when one of its eth_subscribe calls has been answered. */
function providerWithSubscribeSignal(): { provider: WebSocketProvider; subscribed: Promise<string> } {
  const provider = new WebSocketProvider(wsUrl, undefined, { staticNetwork: true });
  const send = provider.send.bind(provider);
  let signal!: (id: string) => void;
  const subscribed = new Promise<string>((resolve) => (signal = resolve));
  provider.send = async (method: string, params: unknown[] | Record<string, unknown>) => {
    const result: unknown = await send(method, params);
    if (method === 'eth_subscribe') signal(result as string);
    return result;
  };
  return { provider, subscribed };
}

test.before(async () => {
  node = await startNode({
    dataPath,
    args: [
      '--rpc-ws-enabled',
      `--rpc-ws-max-frame-size=${FRAME_SIZE}`,
      '--rpc-http-api=ETH,NET,WEB3,ADMIN',
      '--rpc-ws-api=ETH,NET,WEB3,TXPOOL',
      '--logging=DEBUG',
    ],
  });
  wsUrl = node.wsUrl!;
});

test.after.always(async () => {
  for (const client of clients) client.socket.terminate();
  await node?.kill();
  removeDataPath(dataPath);
});

test.serial('ethers WebSocketProvider: calls, and provider.on("block") for each new block', async (t) => {
  const provider = new WebSocketProvider(wsUrl, undefined, { staticNetwork: true });
  try {
    t.is((await provider.getNetwork()).chainId, 1337n);
    const seen: number[] = [];
    await new Promise<void>((resolve) => {
      void provider.on('block', (number: number) => {
        seen.push(number);
        if (seen.length === 3) resolve();
      });
    });
    t.deepEqual(seen, [seen[0]!, seen[0]! + 1, seen[0]! + 2]);
    const block = await provider.getBlock(seen[2]!);
    t.is(block!.number, seen[2]);
  } finally {
    await provider.destroy();
  }
});

test.serial('an ethers contract listener with a topic filter fires on the matching event only', async (t) => {
  const httpProvider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 200 });
  const { provider, subscribed } = providerWithSubscribeSignal();
  try {
    const sender = new Wallet(DEV_ACCOUNTS[1].privateKey, httpProvider);
    const deployment = await (await sender.sendTransaction({ data: markedDeployCode() })).wait(1, 15_000);
    const address = deployment!.contractAddress!;
    const contract = new Contract(address, MARKED_ABI, provider);
    const heard: bigint[] = [];
    const matched = new Promise<string>((resolve) => {
      // With a filter made from arguments, ethers hands the listener the event payload alone.
      void contract.on(contract.filters.Marked!(42), (payload: ContractEventPayload) => {
        heard.push(payload.args[0] as bigint);
        resolve(payload.log.transactionHash);
      });
    });
    await subscribed;
    // Marked(7) is mined after the subscription exists, and before Marked(42) is sent.
    await (await sender.sendTransaction({ to: address, data: zeroPadValue(toBeHex(7), 32) })).wait(1, 15_000);
    const fortyTwo = await sender.sendTransaction({ to: address, data: zeroPadValue(toBeHex(42), 32) });
    t.is(await matched, fortyTwo.hash);
    // A connection gets logs in block order: had Marked(7) matched, it would have been heard first.
    t.deepEqual(heard, [42n]);
  } finally {
    await provider.destroy();
    httpProvider.destroy();
  }
});

test.serial('raw frames: the answers of §6.2', async (t) => {
  const client = await connect();
  const answerTo = async (data: string | Buffer, binary = false) => {
    const from = client.received.length;
    client.send(data, binary);
    return client.waitFor(() => true, from);
  };
  t.is((await answerTo('')).text, ERROR(-32600, 'Invalid Request'));
  for (const text of ['not json', '{"jsonrpc":"2.0","id":1,', '42']) t.is((await answerTo(text)).text, ERROR(-32603, 'Internal error'), text);
  t.is((await answerTo('[]')).text, '[]');
  t.is((await answerTo('{"jsonrpc":"2.0","id":"a","method":"eth_nope"}')).text, ERROR(-32601, 'Method not found', 'a'));
  t.is((await answerTo('{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["nope"]}')).text, ERROR(-32600, 'Invalid Request', 2));
  t.is((await answerTo('{"jsonrpc":"2.0","id":3,"method":"eth_subscribe","params":["logs"]}')).text, ERROR(-32600, 'Invalid Request', 3));
  t.is((await answerTo('{"jsonrpc":"2.0","id":4,"method":"eth_unsubscribe","params":["0x7777"]}')).text, ERROR(-32000, 'Subscription not found', 4));
  t.is((await answerTo('{"jsonrpc":"2.0","id":5,"method":"eth_unsubscribe","params":[{}]}')).text, ERROR(-32600, 'Invalid Request', 5));
  // A binary frame is read like a text frame; answers are text frames.
  const binary = await answerTo(Buffer.from('{"jsonrpc":"2.0","id":6,"method":"eth_chainId"}'), true);
  t.deepEqual(binary, { text: '{"jsonrpc":"2.0","id":6,"result":"0x539"}', binary: false });
  // A notification gets no answer: the next message is the answer to the request sent after it.
  client.send('{"jsonrpc":"2.0","method":"eth_chainId"}');
  t.is((await answerTo('{"jsonrpc":"2.0","id":7,"method":"net_version"}')).text, '{"jsonrpc":"2.0","id":7,"result":"1337"}');
});

test.serial('batches: entries in order, notifications left out, no size limit', async (t) => {
  const client = await connect();
  let from = client.received.length;
  client.send(
    '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"eth_chainId"},5,' +
      '{"jsonrpc":"2.0","id":2,"method":"eth_subscribe","params":["newHeads"]}]',
  );
  const answer = JSON.parse((await client.waitFor((m) => m.text.startsWith('['), from)).text) as { id: unknown; result?: string }[];
  t.is(answer.length, 3);
  t.deepEqual(answer[0], { jsonrpc: '2.0', id: 1, result: '0x539' });
  t.deepEqual(answer[1], { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  t.regex(answer[2]!.result!, /^0x[0-9a-f]+$/);
  // More entries than HTTP's default batch limit (1024), in one message within the frame limit.
  from = client.received.length;
  client.send(JSON.stringify(Array.from({ length: 1500 }, (_, i) => ({ id: i, method: 'eth_chainId' }))));
  const big = JSON.parse((await client.waitFor((m) => m.text.startsWith('[{"jsonrpc":"2.0","id":0,'), from)).text) as { id: number; result: string }[];
  t.is(big.length, 1500);
  t.true(big.every((entry, i) => entry.id === i && entry.result === '0x539'));
});

test.serial('subscription ids come from one counter across connections; only the owner unsubscribes', async (t) => {
  const [a, b] = [await connect(), await connect()];
  const first = BigInt(await a.subscribe('newHeads'));
  t.is(BigInt(await b.subscribe('newHeads')), first + 1n);
  t.is(BigInt(await a.subscribe('logs', {})), first + 2n);
  t.deepEqual((await b.call('eth_unsubscribe', [toBeHex(first)])).error, { code: -32000, message: 'Subscription not found' });
  t.is((await a.call('eth_unsubscribe', [toBeHex(first)])).result, true);
  t.is((await a.call('eth_unsubscribe', [toBeHex(first)])).error?.message, 'Subscription not found');
});

test.serial('after eth_unsubscribe a subscription hears nothing more; the notification shape is §6.3\'s', async (t) => {
  const client = await connect();
  const gone = await client.subscribe('newHeads');
  const clock = await client.subscribe('newHeads');
  const [head] = (await client.notificationsOf(gone, 1)) as { number: string; hash: string; transactions: unknown[] }[];
  t.deepEqual(Object.keys(head!).slice(0, 5), ['number', 'hash', 'mixHash', 'parentHash', 'nonce']);
  t.deepEqual(head!.transactions, []);
  const raw = client.received.find((m) => m.text.includes(`"subscription":"${gone}"`))!.text;
  t.true(raw.startsWith(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${gone}","result":{"number":`));
  t.is((await client.call('eth_unsubscribe', [gone])).result, true);
  const before = client.notifications(gone).length;
  const clockBefore = client.notifications(clock).length;
  // Both subscriptions hear a block in the order they were made: two more blocks on the clock would
  // have reached the unsubscribed one first.
  await client.notificationsOf(clock, clockBefore + 2);
  t.is(client.notifications(gone).length, before);
});

test.serial('a connection\'s subscriptions are dropped when it closes', async (t) => {
  const client = await connect();
  await client.subscribe('newHeads');
  await client.subscribe('logs', { topics: [null] });
  const since = node.output().length;
  await client.close();
  t.regex((await node.waitForLog(/A WebSocket connection closed: its \d+ subscription\(s\) dropped/, { since })).text, /its 2 subscription/);
});

test.serial('newPendingTransactions as hashes and as objects; droppedPendingTransactions for a replaced transaction', async (t) => {
  const client = await connect();
  const hashes = await client.subscribe('newPendingTransactions');
  const objects = await client.subscribe('newPendingTransactions', { includeTransactions: true });
  const dropped = await client.subscribe('droppedPendingTransactions');
  const httpProvider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true });
  try {
    const sender = new Wallet(DEV_ACCOUNTS[2].privateKey, httpProvider);
    const nonce = await httpProvider.getTransactionCount(sender.address, 'pending');
    // A nonce gap keeps the transaction in the pool until it is replaced.
    const fees = { maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gasLimit: 21_000n, chainId: 1337n, type: 2 };
    const first = await sender.sendTransaction({ to: DEV_ACCOUNTS[0].address, value: 1n, nonce: nonce + 5, ...fees });
    const [hash] = await client.notificationsOf(hashes, 1);
    t.is(hash, first.hash);
    const [object] = (await client.notificationsOf(objects, 1)) as Record<string, unknown>[];
    t.deepEqual(Object.keys(object!), ['from', 'gas', 'gasPrice', 'hash', 'input', 'nonce', 'to', 'type', 'value', 'yParity', 'v', 'r', 's']);
    t.like(object, {
      from: DEV_ACCOUNTS[2].address,
      gas: '0x5208',
      gasPrice: null,
      hash: first.hash,
      input: '0x',
      nonce: `0x${(nonce + 5).toString(16)}`,
      to: DEV_ACCOUNTS[0].address,
      type: '0x2',
      value: '0x1',
    });
    const replacement = await sender.sendTransaction({ to: DEV_ACCOUNTS[0].address, value: 2n, nonce: nonce + 5, ...fees, maxFeePerGas: 2n * 10n ** 10n, maxPriorityFeePerGas: 2n * 10n ** 9n });
    t.deepEqual(await client.notificationsOf(dropped, 1), [first.hash]);
    t.deepEqual((await client.notificationsOf(hashes, 2))[1], replacement.hash);
  } finally {
    httpProvider.destroy();
  }
});

test.serial('newHeads with and without includeTransactions: the block as eth_getBlockByHash answers it', async (t) => {
  const client = await connect();
  const plain = await client.subscribe('newHeads');
  const full = await client.subscribe('newHeads', { includeTransactions: true });
  const httpProvider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true });
  try {
    const sender = new Wallet(DEV_ACCOUNTS[0].privateKey, httpProvider);
    const sent = await sender.sendTransaction({ to: DEV_ACCOUNTS[1].address, value: 1n });
    const receipt = (await sent.wait(1, 15_000))!;
    await client.until(
      () => client.notifications(full).some((head) => (head as { hash: string }).hash === receipt.blockHash),
      'the block of the transaction on the includeTransactions subscription',
    );
    await client.until(() => client.notifications(plain).some((head) => (head as { hash: string }).hash === receipt.blockHash), 'the same block on the other');
    const withTransactions = client.notifications(full).find((head) => (head as { hash: string }).hash === receipt.blockHash) as { transactions: { hash: string }[] };
    const withHashes = client.notifications(plain).find((head) => (head as { hash: string }).hash === receipt.blockHash);
    t.deepEqual(withTransactions, await node.rpc('eth_getBlockByHash', [receipt.blockHash, true]));
    t.deepEqual(withHashes, await node.rpc('eth_getBlockByHash', [receipt.blockHash, false]));
    t.deepEqual(withTransactions.transactions.map((tx) => tx.hash), [sent.hash]);
  } finally {
    httpProvider.destroy();
  }
});

test.serial('each transport serves its own API groups', async (t) => {
  const client = await connect();
  t.deepEqual((await client.call('rpc_modules')).result, { eth: '1.0', net: '1.0', web3: '1.0', txpool: '1.0' });
  t.deepEqual(await node.rpc('rpc_modules'), { eth: '1.0', net: '1.0', web3: '1.0', admin: '1.0' });
  t.deepEqual((await client.call('admin_peers')).error, { code: -32604, message: 'Method not enabled' });
  t.is(typeof ((await client.call('txpool_besuStatistics')).result as { maxSize: number }).maxSize, 'number');
  const services = (await client.call('net_services')).result as { ws: { port: string }; jsonrpc: { port: string } };
  t.is(services.ws.port, new URL(wsUrl).port);
  t.is(services.jsonrpc.port, String(node.port));
});

test.serial('plain HTTP on the WebSocket port: 400, 403 for a host not allowed, handshake from such a host refused', async (t) => {
  const base = wsUrl.replace('ws:', 'http:');
  const plain = await fetch(`${base}/`, { method: 'POST', body: '{}' });
  t.is(plain.status, 400);
  t.is(await plain.text(), "Websocket endpoint can't handle HTTP requests");
  const login = await fetch(`${base}/login`, { method: 'POST', body: '{}' });
  t.is(login.status, 400);
  t.is(login.statusText, 'Authentication not enabled');
  const refused = await new Promise<number>((resolve) => {
    const socket = new WebSocket(wsUrl, { headers: { host: 'evil.example' } });
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.once('open', () => resolve(101));
  });
  t.is(refused, 403);
});

test.serial('a message over 4 frames of --rpc-ws-max-frame-size closes the connection; one within it is answered', async (t) => {
  const client = await connect();
  const filler = (size: number) => `{"jsonrpc":"2.0","id":1,"method":"web3_sha3","params":["0x"],"pad":"${'x'.repeat(size)}"}`;
  // One message of 2 frames' size, and one of exactly 4: answered.
  for (const size of [2 * FRAME_SIZE, 4 * FRAME_SIZE]) {
    const message = filler(size - filler(0).length);
    t.is(message.length, size);
    const from = client.received.length;
    client.send(message);
    t.regex((await client.waitFor(() => true, from)).text, /"result":"0xc5d2/);
  }
  client.send(filler(4 * FRAME_SIZE + 1 - filler(0).length));
  t.not(await client.closed, 1000);
  t.is((await (await connect()).call('eth_chainId')).result, '0x539');
});

test.serial('a client that never reads is cut off once, while the node keeps serving others', async (t) => {
  const reader = await connect();
  const stalled = await connect();
  await stalled.subscribe('newHeads');
  stalled.socket.pause();
  const since = node.output().length;
  // Each batch asks for 700 blocks (~1.2 kB each, ~0.8 MB per answer): far more than the send buffer
  // limit plus what the sockets hold, unless the node cuts the connection first.
  const batch = JSON.stringify(Array.from({ length: 700 }, (_, i) => ({ id: i, method: 'eth_getBlockByNumber', params: ['0x1', false] })));
  let cut = false;
  const line = node.waitForLog(/Closed the WebSocket connection from \S+: more than \d+ bytes waited/, { since, timeoutMs: 60_000 }).then(({ text }) => {
    cut = true;
    return text;
  });
  for (let i = 0; i < 60 && !cut; i++) {
    stalled.send(batch);
    // Meanwhile the node answers another connection.
    t.is((await reader.call('eth_chainId')).result, '0x539');
  }
  t.regex(await line, /more than 8388608 bytes/);
  stalled.socket.resume();
  await stalled.closed;
  t.is(count(node.output().slice(since), /Closed the WebSocket connection/g), 1, 'said once');
  t.is((await reader.call('eth_blockNumber')).error, undefined);
});

test.serial('the 81st WebSocket connection is refused by default; a closed one makes room', async (t) => {
  await closeAll();
  const attempts = await Promise.allSettled(Array.from({ length: 81 }, () => connect()));
  const opened = attempts.filter((attempt) => attempt.status === 'fulfilled');
  t.is(opened.length, 80);
  t.is(attempts.length - opened.length, 1);
  await clients[0]!.close();
  const again = await connect();
  t.is((await again.call('eth_chainId')).result, '0x539');
});

test.serial('several transport threads share the HTTP and WebSocket ports picked by the kernel; one subscription id counter, every thread notified', async (t) => {
  // Without ETH on WebSocket: eth_subscribe is served all the same, as in Besu (§6.2).
  const shared = await startNode({ args: ['--rpc-ws-enabled', '--rpc-ws-api=NET', '--rpc-http-workers=2', '--logging=DEBUG'] });
  const sockets: WsClient[] = [];
  try {
    t.regex(shared.output(), /JSON-RPC HTTP service started and listening on \S+:\d+ \(2 workers\)\n/);
    // Separate TCP connections, which the connection guard spreads over the threads.
    const answers = await Promise.all(Array.from({ length: 8 }, () => postOnNewConnection(shared.url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}')));
    t.deepEqual(new Set(answers), new Set(['{"jsonrpc":"2.0","id":1,"result":"0x539"}']));

    for (let i = 0; i < 16; i++) sockets.push(await WsClient.open(shared.wsUrl!));
    t.deepEqual((await sockets[0]!.call('eth_blockNumber')).error, { code: -32604, message: 'Method not enabled' });
    const ids = await Promise.all(sockets.map((socket) => socket.subscribe('newHeads')));
    const sorted = ids.map(BigInt).sort((a, b) => (a < b ? -1 : 1));
    t.deepEqual(sorted, ids.map((_, i) => sorted[0]! + BigInt(i)), 'one counter for the node: no id twice, none skipped');
    // Each thread logs its connections: 16 of them did not all land on the same thread.
    const threads = await waitFor(
      'the node to log every connection',
      async () => [...shared.output().matchAll(/\| (\S+) +\| DEBUG \| WebSocket \| WebSocket connection from \S+ opened/g)].map((match) => match[1]!),
      (opened) => opened.length === 16,
    );
    t.is(new Set(threads).size, 2, `connections per thread: ${threads.join(' ')}`);
    // A block after every subscription exists reaches every connection, on either thread.
    const heads = await Promise.all(sockets.map((socket, i) => socket.notificationsOf(ids[i]!, 1)));
    const top = heads.map((seen) => Number((seen.at(-1) as { number: string }).number)).reduce((a, b) => Math.max(a, b));
    const atTop = await Promise.all(
      sockets.map(async (socket, i) => {
        await socket.until(() => socket.notifications(ids[i]!).some((head) => Number((head as { number: string }).number) === top + 1), `block ${top + 1}`);
        return (socket.notifications(ids[i]!).find((head) => Number((head as { number: string }).number) === top + 1) as { hash: string }).hash;
      }),
    );
    t.is(new Set(atTop).size, 1);
  } finally {
    for (const socket of sockets) socket.socket.terminate();
    await shared.stop();
    removeDataPath(shared.dataPath);
  }
});
