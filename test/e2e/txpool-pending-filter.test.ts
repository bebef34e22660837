/**
 * txpool_besuPendingTransactions with Besu's filter object, on a real dev node whose block
 * production is stopped (miner_stop) so that the submitted transactions stay pending.
 */
import test from 'ava';
import { Wallet, parseEther } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, type NodeProcess } from '../helpers/node-process.js';

let node: NodeProcess;
const recipient = '0x1111111111111111111111111111111111111111';
type PendingTx = { hash: string; from: string; to: string | null; nonce: string; gas: string; value: string; gasPrice?: string };
const sent: { transfer: string; creation: string; bigGas: string; eip1559: string } = { transfer: '', creation: '', bigGas: '', eip1559: '' };

test.before(async () => {
  node = await startNode({ args: ['--rpc-http-api=ETH,NET,WEB3,MINER,TXPOOL'] });
  await node.rpc('miner_stop');
  const a = new Wallet(DEV_ACCOUNTS[0].privateKey);
  const b = new Wallet(DEV_ACCOUNTS[1].privateKey);
  const gasPrice = 2_000_000_000n;
  const legacy = { chainId: 1337n, gasPrice, type: 0 } as const;
  const send = async (raw: string) => node.rpc<string>('eth_sendRawTransaction', [raw]);
  sent.transfer = await send(await a.signTransaction({ ...legacy, nonce: 0, to: recipient, value: parseEther('1'), gasLimit: 21000n }));
  sent.bigGas = await send(await a.signTransaction({ ...legacy, nonce: 1, to: recipient, value: 5n, gasLimit: 90000n }));
  // A contract creation: init code that returns empty runtime code.
  sent.creation = await send(await b.signTransaction({ ...legacy, nonce: 0, data: '0x600080f3', gasLimit: 100000n }));
  sent.eip1559 = await send(
    await b.signTransaction({ chainId: 1337n, type: 2, nonce: 1, to: recipient, value: 7n, gasLimit: 21000n, maxFeePerGas: gasPrice, maxPriorityFeePerGas: 1n }),
  );
});

test.after.always(async () => {
  if (node) {
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

async function pending(limit: unknown, filter: unknown): Promise<string[]> {
  const txs = await node.rpc<PendingTx[]>('txpool_besuPendingTransactions', [limit, filter]);
  return txs.map((tx) => tx.hash).sort();
}

const sorted = (...hashes: string[]) => [...hashes].sort();

test('no filter: every pending transaction; limit applies after filtering', async (t) => {
  t.deepEqual(await pending(null, undefined), sorted(sent.transfer, sent.bigGas, sent.creation, sent.eip1559));
  t.is((await pending(2, {})).length, 2);
  t.deepEqual(await pending(1, { from: { eq: DEV_ACCOUNTS[1].address } }).then((h) => h.length), 1);
});

test('from / to / action', async (t) => {
  t.deepEqual(await pending(null, { from: { eq: DEV_ACCOUNTS[0].address } }), sorted(sent.transfer, sent.bigGas));
  t.deepEqual(await pending(null, { to: { eq: recipient } }), sorted(sent.transfer, sent.bigGas, sent.eip1559));
  t.deepEqual(await pending(null, { to: { action: 'contract_creation' } }), [sent.creation]);
  // Operators are case-insensitive.
  t.deepEqual(await pending(null, { from: { EQ: DEV_ACCOUNTS[1].address }, to: { Eq: recipient } }), [sent.eip1559]);
});

test('quantities: gas, value, nonce, gasPrice (legacy only)', async (t) => {
  t.deepEqual(await pending(null, { gas: { gt: '0x5208' } }), sorted(sent.bigGas, sent.creation));
  t.deepEqual(await pending(null, { gas: { eq: '0x5208' } }), sorted(sent.transfer, sent.eip1559));
  t.deepEqual(await pending(null, { value: { lt: '0x10' } }), sorted(sent.bigGas, sent.creation, sent.eip1559));
  t.deepEqual(await pending(null, { nonce: { eq: '0x1' } }), sorted(sent.bigGas, sent.eip1559));
  t.deepEqual(await pending(null, { gasPrice: { eq: '0x77359400' } }), sorted(sent.transfer, sent.bigGas, sent.creation));
  t.deepEqual(await pending(null, { nonce: { gt: '0x5' } }), []);
});

test('bad filters: Besu\'s -32602 Invalid filter params', async (t) => {
  const errorOf = async (filter: unknown) => {
    const res = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'txpool_besuPendingTransactions', params: [null, filter] }),
    });
    return ((await res.json()) as { error?: unknown }).error;
  };
  const invalidFilter = { code: -32602, message: 'Invalid filter params' };
  t.deepEqual(await errorOf({ gas: { gt: '0x1', lt: '0x9' } }), invalidFilter, 'two operators');
  t.deepEqual(await errorOf({ gas: { ge: '0x1' } }), invalidFilter, 'unknown operator');
  t.deepEqual(await errorOf({ from: { gt: DEV_ACCOUNTS[0].address } }), invalidFilter, 'from takes only eq');
  t.deepEqual(await errorOf({ to: { lt: recipient } }), invalidFilter, 'to takes eq or action');
  t.deepEqual(await errorOf({ nonce: { action: 'contract_creation' } }), invalidFilter, 'action only on to');
  t.deepEqual(await errorOf({ value: { eq: 'lots' } }), invalidFilter, 'unparsable value');
  t.deepEqual(await errorOf('from'), { code: -32602, message: 'Invalid pending transactions params' });
});
