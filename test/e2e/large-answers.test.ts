/**
 * Answers too large to travel as strings: past 32 KiB an actor answers in UTF-8 bytes moved to the
 * transport (src/shared/rpc/json-text.ts). 80 logs (~40 kB of JSON) asked for over HTTP (uWS and
 * node:http), WebSocket (uWS and ws) and IPC, alone and in a batch with a small answer: every
 * transport gives the same logs, in order, as text, and HTTP frames the bytes with their length.
 */
import test from 'ava';
import net from 'node:net';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { MARKED_EVENT_TOPIC, markedDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, tempDataPath, waitFor, type NodeProcess } from '../helpers/node-process.js';
import { WsClient } from '../helpers/ws-client.js';

const dataPath = tempDataPath();
let node: NodeProcess | undefined;

test.after.always(async () => {
  await node?.kill();
  removeDataPath(dataPath);
});

const LOGS = 80;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
type Log = { topics: string[]; transactionHash: string; logIndex: string };

/** One request over a fresh IPC connection; the answer is the line that comes back. */
function ipcCall(path: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const newline = received.indexOf('\n');
      if (newline < 0) return;
      socket.end();
      resolve(received.slice(0, newline));
    });
    socket.once('error', reject);
    socket.once('connect', () => socket.write(body));
  });
}

async function httpCall(url: string, body: string): Promise<{ text: string; contentLength: string | null }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { contentLength: response.headers.get('content-length'), text: await response.text() };
}

test.serial('a large eth_getLogs answer is the same over HTTP (both engines), WebSocket and IPC, alone and in a batch', async (t) => {
  t.timeout(150_000);
  const args = ['--rpc-ws-enabled', '--Xrpc-ipc-enabled', '--Xrpc-ipc-api=ETH,NET,WEB3'];
  node = await startNode({ dataPath, args });
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, batchMaxCount: 1, pollingInterval: 100 });
  const wallet = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
  const deployed = await (await wallet.sendTransaction({ data: markedDeployCode() })).wait();
  const contract = deployed!.contractAddress!;
  // Signed here, sent at once: one fee lookup rather than one per transaction.
  const nonce = await provider.getTransactionCount(wallet.address, 'pending');
  const { maxFeePerGas, maxPriorityFeePerGas } = await provider.getFeeData();
  const network = await provider.getNetwork();
  const signed = await Promise.all(
    Array.from({ length: LOGS }, (_, i) =>
      wallet.signTransaction({ type: 2, chainId: network.chainId, to: contract, data: word(i + 1), nonce: nonce + i, gasLimit: 100_000, maxFeePerGas, maxPriorityFeePerGas }),
    ),
  );
  const sent = await Promise.all(signed.map((raw) => node!.rpc<string>('eth_sendRawTransaction', [raw])));
  await waitFor('the last transaction mined', () => node!.rpc<unknown>('eth_getTransactionReceipt', [sent.at(-1)]), (receipt) => receipt !== null, 60_000, 100);
  provider.destroy();

  const head = await node.rpc<string>('eth_blockNumber');
  const getLogs = { jsonrpc: '2.0', id: 7, method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: head, address: contract, topics: [MARKED_EVENT_TOPIC] }] };
  const single = JSON.stringify(getLogs);
  const batch = JSON.stringify([getLogs, { jsonrpc: '2.0', id: 8, method: 'eth_chainId', params: [] }]);

  const http = await httpCall(node.url, single);
  t.true(http.text.length > 32 * 1024, `the answer is large (${http.text.length} bytes)`);
  t.is(http.contentLength, String(Buffer.byteLength(http.text)), 'HTTP frames the bytes with their length');
  const answer = JSON.parse(http.text) as { jsonrpc: string; id: number; result: Log[] };
  t.is(answer.jsonrpc, '2.0');
  t.is(answer.id, 7);
  t.deepEqual(
    answer.result.map((log) => log.topics[1]),
    Array.from({ length: LOGS }, (_, i) => word(i + 1)),
    'every call logged once, in order',
  );
  t.deepEqual(answer.result.map((log) => log.transactionHash), sent);

  const chainId = await node.rpc<string>('eth_chainId');
  const httpBatch = JSON.parse((await httpCall(node.url, batch)).text) as unknown;
  t.deepEqual(httpBatch, [answer, { jsonrpc: '2.0', id: 8, result: chainId }], 'a batch holds the large answer and the small one');

  const ws = await WsClient.open(node.wsUrl!);
  try {
    ws.send(single);
    t.deepEqual(JSON.parse((await ws.waitFor((message) => message.text.includes('"id":7'))).text), answer, 'WebSocket: the same answer, as a text frame');
    t.false(ws.received.at(-1)!.binary);
    const before = ws.received.length;
    ws.send(batch);
    t.deepEqual(JSON.parse((await ws.waitFor(() => true, before)).text), httpBatch, 'WebSocket: the same batch');
  } finally {
    ws.socket.close();
  }

  const socket = join(dataPath, 'node.ipc');
  t.deepEqual(JSON.parse(await ipcCall(socket, single)), answer, 'IPC: the same answer');
  t.deepEqual(JSON.parse(await ipcCall(socket, batch)), httpBatch, 'IPC: the same batch');

  // The node:http and ws engine writes the same bytes, the WebSocket answer as a text frame.
  await node.stop();
  node = await startNode({ dataPath, args: ['--Xhttp-engine=NODE', '--rpc-ws-enabled'] });
  const nodeHttp = await httpCall(node.url, single);
  t.is(nodeHttp.contentLength, String(Buffer.byteLength(nodeHttp.text)));
  t.deepEqual(JSON.parse(nodeHttp.text), answer, 'node:http: the same answer');
  t.deepEqual(JSON.parse((await httpCall(node.url, batch)).text), httpBatch, 'node:http: the same batch');
  const nodeWs = await WsClient.open(node.wsUrl!);
  try {
    nodeWs.send(single);
    const message = await nodeWs.waitFor((received) => received.text.includes('"id":7'));
    t.false(message.binary, 'ws: a text frame');
    t.deepEqual(JSON.parse(message.text), answer, 'ws: the same answer');
  } finally {
    nodeWs.socket.close();
  }
});
