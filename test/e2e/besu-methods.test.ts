/**
 * Methods that Besu's fixtures do not cover, against a real node on Besu's test chain:
 * ommers (block 4 has two), raw debug data checked against the chain's own hashes and roots, the
 * struct-log tracer, filters of all three kinds, pool views and node facts.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createHeadBuffer, HeadReader } from '../../src/shared/shared-memory/head-view.js';
import { createLocalMethods } from '../../src/transport/local-methods.js';
import { RpcError } from '../../src/shared/rpc/errors.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BESU_FIXTURES, removeDataPath } from '../helpers/node-process.js';
import { startBesuTestChainNode } from '../helpers/parity-node.js';
import type { NodeProcess } from '../helpers/node-process.js';

let node: NodeProcess;

test.before(async () => {
  node = await startBesuTestChainNode();
});

test.after.always(async () => {
  if (node) {
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

type Reply = { result?: unknown; error?: { code: number; message: string } };

async function call(method: string, params: unknown[] = []): Promise<Reply> {
  const res = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as Reply;
}

async function result<T>(method: string, params: unknown[] = []): Promise<T> {
  const reply = await call(method, params);
  if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
  return reply.result as T;
}

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;
const bytes = (text: string) => Uint8Array.from(Buffer.from(text.slice(2), 'hex'));

test('block 4 has two ommers, served by hash and by number', async (t) => {
  const block = await result<{ hash: string; uncles: string[] }>('eth_getBlockByNumber', ['0x4', false]);
  t.is(block.uncles.length, 2);
  t.is(await result('eth_getUncleCountByBlockNumber', ['0x4']), '0x2');
  t.is(await result('eth_getUncleCountByBlockHash', [block.hash]), '0x2');
  const byNumber = await result<{ hash: string; transactions: unknown[] }>('eth_getUncleByBlockNumberAndIndex', ['0x4', '0x1']);
  t.is(byNumber.hash, block.uncles[1]);
  t.deepEqual(byNumber.transactions, []);
  const byHash = await result<{ hash: string }>('eth_getUncleByBlockHashAndIndex', [block.hash, '0x0']);
  t.is(byHash.hash, block.uncles[0]);
  t.is(await result('eth_getUncleByBlockNumberAndIndex', ['0x4', '0x2']), null);
  t.is(await result('eth_getUncleCountByBlockNumber', ['0x3']), '0x0');
});

test('raw block, header, receipts and transaction hash to what the chain says', async (t) => {
  const block = await result<{ hash: string; receiptsRoot: string; transactions: string[] }>('eth_getBlockByNumber', ['0x22', false]);
  const rawHeader = await result<string>('debug_getRawHeader', ['0x22']);
  t.is(hex(keccak_256(bytes(rawHeader))), block.hash);
  const rawBlock = await result<string>('debug_getRawBlock', ['latest']);
  const [header] = RLP.decode(bytes(rawBlock)) as unknown as [Uint8Array[]];
  t.is(hex(keccak_256(RLP.encode(header))), block.hash);
  const receipts = await result<string[]>('debug_getRawReceipts', ['0x22']);
  t.is(receipts.length, 1);
  t.true(receipts[0]!.startsWith('0x03'), 'a blob transaction receipt is type 3');
  const rawTx = await result<string>('debug_getRawTransaction', [block.transactions[0]]);
  t.is(hex(keccak_256(bytes(rawTx))), block.transactions[0]);
  t.is(await result('debug_getRawTransaction', [`0x${'11'.repeat(32)}`]), null);
  const frontierReceipts = await result<string[]>('debug_getRawReceipts', ['0x1']);
  // Before Byzantium a receipt starts with a 32-byte state root: RLP list, then 0xa0.
  t.is(RLP.decode(bytes(frontierReceipts[0]!)).length, 4);
});

test('debug_traceTransaction replays a call with struct logs', async (t) => {
  const receipt = await result<{ transactionHash: string; gasUsed: string }>('eth_getTransactionReceipt', [
    '0x185a9154a0acc4e0ffc84029aee0f3dbf57ff0b84ec7624cb80e7373a03e8aeb',
  ]);
  const trace = await result<{ gas: number; failed: boolean; returnValue: string; structLogs: { op: string; depth: number; stack: string[]; storage: object }[] }>(
    'debug_traceTransaction',
    [receipt.transactionHash],
  );
  t.is(trace.gas, Number(receipt.gasUsed));
  t.false(trace.failed);
  t.true(trace.structLogs.length > 10);
  t.is(trace.structLogs[0]!.depth, 1);
  t.true(trace.structLogs.some((log) => log.op === 'LOG3' || log.op === 'LOG4'));
  t.true(trace.structLogs.every((log) => log.stack.every((word) => /^[0-9a-f]{64}$/.test(word))));
  const lean = await result<{ structLogs: object[] }>('debug_traceTransaction', [receipt.transactionHash, { disableStack: true }]);
  t.false('stack' in lean.structLogs[0]!);
  t.deepEqual((await call('debug_traceTransaction', [`0x${'22'.repeat(32)}`])).error, { code: -32000, message: 'Transaction not found' });
});

test('block, log and pending-transaction filters: install, poll, uninstall', async (t) => {
  const blockFilter = await result<string>('eth_newBlockFilter');
  t.regex(blockFilter, /^0x[0-9a-f]{1,32}$/);
  t.deepEqual(await result('eth_getFilterChanges', [blockFilter]), []);
  const logFilter = await result<string>('eth_newFilter', [{ fromBlock: '0x17', toBlock: '0x20' }]);
  const logs = await result<unknown[]>('eth_getFilterLogs', [logFilter]);
  t.deepEqual(logs, await result('eth_getLogs', [{ fromBlock: '0x17', toBlock: '0x20' }]));
  t.true(logs.length >= 10);
  t.deepEqual(await result('eth_getFilterChanges', [logFilter]), []);
  const pendingFilter = await result<string>('eth_newPendingTransactionFilter');
  t.deepEqual(await result('eth_getFilterChanges', [pendingFilter]), []);
  t.deepEqual((await call('eth_getFilterLogs', [pendingFilter])).error, { code: -32000, message: 'Logs filter not found' });
  for (const id of [blockFilter, logFilter, pendingFilter]) {
    t.true(await result<boolean>('eth_uninstallFilter', [id]));
    t.false(await result<boolean>('eth_uninstallFilter', [id]));
    t.deepEqual((await call('eth_getFilterChanges', [id])).error, { code: -32000, message: 'Filter not found' });
  }
});

test('pool views of an empty pool', async (t) => {
  t.deepEqual(await result('txpool_besuStatistics'), { maxSize: -1, localCount: 0, remoteCount: 0 });
  t.deepEqual(await result('txpool_besuTransactions'), []);
  t.deepEqual(await result('txpool_besuPendingTransactions', [5]), []);
});

test('fee and node facts', async (t) => {
  t.is(await result('eth_blobBaseFee'), '0x1');
  t.regex(await result<string>('eth_maxPriorityFeePerGas'), /^0x[0-9a-f]+$/);
  t.deepEqual(await result('eth_accounts'), []);
  t.is(await result('eth_hashrate'), '0x0');
  t.deepEqual(await result('net_services'), { jsonrpc: { host: '127.0.0.1', port: String(new URL(node.url).port) } });
  // Served by Basalt but not enabled on this node (no ADMIN group); eth_coinbase is a Besu name that
  // Basalt does not serve at all, so no option would make it answer.
  t.deepEqual((await call('admin_nodeInfo')).error, { code: -32604, message: 'Method not enabled' });
  t.deepEqual((await call('eth_coinbase')).error, { code: -32601, message: 'Method not found' });
  t.deepEqual((await call('eth_feeHistory', ['0x0', 'latest'])).error, { code: -32602, message: 'Invalid block count params' });
});

// admin_nodeInfo, admin_peers, admin_addPeer/removePeer and net_enode belong to the p2p actor: see
// test/p2p-node.test.ts. The transport keeps the peer count and the static facts.
test('transport node facts with and without devp2p', (t) => {
  const head = new HeadReader(createHeadBuffer());
  const base = { clientVersion: 'x', networkId: 1n, chainId: 1n, apis: ['ADMIN'], head, ethProtocolVersion: 68 };
  const disabled = createLocalMethods({ ...base, p2pEnabled: false, jsonRpc: { host: '127.0.0.1', port: 8545 } });
  const enabled = createLocalMethods({ ...base, p2pEnabled: true, peerCount: () => 2, p2p: { host: '127.0.0.1', port: 30303 } });
  const errorOf = (fn: () => unknown) => {
    try {
      fn();
      return undefined;
    } catch (err) {
      return err instanceof RpcError ? err.toObject() : err;
    }
  };
  t.deepEqual(errorOf(() => disabled.net_peerCount(null)), { code: -32000, message: 'P2P has been disabled. This functionality is not available' });
  t.is(enabled.net_peerCount(null), '0x2');
  t.deepEqual(disabled.net_services(null), { jsonrpc: { host: '127.0.0.1', port: '8545' } });
  t.deepEqual(enabled.net_services(null), { p2p: { host: '127.0.0.1', port: '30303' } });
  t.is(enabled.eth_protocolVersion(null), '0x44');
  t.is(createLocalMethods({ ...base, ethProtocolVersion: undefined, p2pEnabled: true }).eth_protocolVersion(null), null);
});

test('simulations on a Frontier block leave that block\'s state as it was', async (t) => {
  const sender = '0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b';
  const before = await result<string>('eth_getBalance', [sender, '0x8']);
  const nonceBefore = await result<string>('eth_getTransactionCount', [sender, '0x8']);
  await result('eth_call', [{ from: sender, to: '0x6295ee1b4f6dd65047762f924ecd367c17eabf8f', value: '0x1', gasPrice: '0x1', gas: '0x100000' }, '0x8']);
  await result('eth_estimateGas', [{ from: sender, to: '0x8888f1f195afa192cfee860698584c030f4c9db1', value: '0x1' }, '0x8']);
  t.is(await result('eth_getBalance', [sender, '0x8']), before);
  t.is(await result('eth_getTransactionCount', [sender, '0x8']), nonceBefore);
});

test('eth_config: Besu\'s fixture answer, with the EIP-2124 fork id of this genesis', async (t) => {
  const fixture = JSON.parse(readFileSync(join(BESU_FIXTURES, 'rpc/eth/eth_config.json'), 'utf8')) as {
    response: { result: { current: { forkId: string } } };
  };
  const answer = await result<{ current: { forkId: string }; next: unknown; last: unknown }>('eth_config');
  // Besu's harness reports CRC32(genesis hash) alone (0x97fa8ff0); the hash over London at 33,
  // Shanghai and Cancun (test/genesis.test.ts derives it independently) is 0xf3cf4bb5.
  t.is(answer.current.forkId, '0xf3cf4bb5');
  const expected = structuredClone(fixture.response.result);
  expected.current.forkId = answer.current.forkId;
  t.deepEqual(answer, expected);
  t.deepEqual(Object.keys(answer.current), Object.keys(fixture.response.result.current), 'Besu\'s key order');
});
