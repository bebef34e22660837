/**
 * Every bad input the foundation handles, against a real node process: each gets Besu's error, and
 * the node keeps serving afterwards.
 */
import { request } from 'node:http';
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { JsonRpcProvider, Wallet, getBytes as hexToBytes, hexlify as bytesToHex, parseEther, parseUnits, toBeHex } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { revertingDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, tempDataPath } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

let node: NodeProcess;
let provider: JsonRpcProvider;
const dataPath = tempDataPath();
const CHAIN_ID = 1337n;

test.before(async () => {
  node = await startNode({
    dataPath,
    // No local priority, so RPC transactions face --min-gas-price like remote ones.
    args: ['--tx-pool-no-local-priority', '--min-gas-price=1000', '--rpc-http-max-batch-size=3', '--rpc-http-max-request-content-length=20000'],
  });
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 250 });
});

test.after.always(async () => {
  provider?.destroy();
  await node?.kill();
  removeDataPath(dataPath);
});

interface RpcReply {
  status: number;
  body: string;
  json: unknown;
}

async function post(body: string, headers: Record<string, string> = {}): Promise<RpcReply> {
  const res = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: text, json };
}

async function rpcError(method: string, params: unknown[]): Promise<{ code: number; message: string; data?: string }> {
  const reply = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));
  const body = reply.json as { error?: { code: number; message: string; data?: string }; result?: unknown };
  if (!body.error) throw new Error(`${method} did not fail: ${reply.body}`);
  return body.error;
}

async function signed(key: string, fields: Partial<{ nonce: number; gasLimit: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint; gasPrice: bigint; value: bigint; to: string; chainId: bigint; type: number; data: string }>): Promise<string> {
  const wallet = new Wallet(key);
  const nonce = fields.nonce ?? (await provider.getTransactionCount(wallet.address, 'pending'));
  const tx: Record<string, unknown> = {
    to: fields.to ?? '0x000000000000000000000000000000000000dEaD',
    value: fields.value ?? 1n,
    nonce,
    gasLimit: fields.gasLimit ?? 21000n,
    chainId: fields.chainId ?? CHAIN_ID,
    data: fields.data ?? '0x',
    type: fields.type ?? 2,
  };
  if ((fields.type ?? 2) === 2) {
    tx.maxFeePerGas = fields.maxFeePerGas ?? parseUnits('2', 'gwei');
    tx.maxPriorityFeePerGas = fields.maxPriorityFeePerGas ?? parseUnits('1', 'gwei');
  } else {
    tx.gasPrice = fields.gasPrice ?? parseUnits('2', 'gwei');
  }
  return wallet.signTransaction(tx);
}

const send = (raw: string) => rpcError('eth_sendRawTransaction', [raw]);

test.serial('eth_sendRawTransaction rejects each bad transaction with Besu code and message', async (t) => {
  const key = DEV_ACCOUNTS[0].privateKey;
  t.deepEqual(await send('0xzz'), { code: -32602, message: 'Invalid params' });
  t.deepEqual(await send('0xf86c'), { code: -32602, message: 'Invalid params' });
  t.deepEqual(await rpcError('eth_sendRawTransaction', []), { code: -32602, message: 'Invalid number of params' });
  t.deepEqual(await rpcError('eth_sendRawTransaction', [1]), { code: -32602, message: 'Invalid transaction params (missing or incorrect)' });
  t.deepEqual(await send(await signed(key, { chainId: 1n })), { code: -32000, message: 'Wrong chainId' });
  t.deepEqual(await send(await signed(key, { gasLimit: 20000n })), { code: -32003, message: 'Intrinsic gas exceeds gas limit' });
  // The dev network runs Osaka: the EIP-7825 cap (2^24) is checked before the head's gas limit (2^53 - 1 here),
  // so both a gas just over the cap and one over the block's limit get the cap's answer, as on Besu.
  for (const gasLimit of [2n ** 24n + 1n, 2n ** 53n]) {
    t.deepEqual(await send(await signed(key, { gasLimit, maxFeePerGas: 10000n, maxPriorityFeePerGas: 1000n })), {
      code: -32005,
      message: 'Transaction gas limit cap exceeded',
    });
  }
  t.deepEqual(await send(await signed(key, { value: parseEther('100000000') })), { code: -32004, message: 'Upfront cost exceeds account balance' });
  t.deepEqual(await send(await signed(key, { type: 0, gasPrice: 999n })), { code: -32009, message: 'Gas price below configured minimum gas price' });
  // A high-s signature: the same signed transaction with s replaced by n - s and the parity flipped.
  const good = hexToBytes(await signed(key, {}));
  const fields = RLP.decode(good.subarray(1)) as Uint8Array[];
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  fields[9] = fields[9]!.length === 0 ? Uint8Array.of(1) : new Uint8Array(0);
  fields[11] = hexToBytes(toBeHex(n - BigInt(bytesToHex(fields[11]!))));
  const highS = '0x02' + bytesToHex(RLP.encode(fields)).slice(2);
  const tampered = await send(highS).catch((e: Error) => ({ code: 0, message: e.message }));
  t.is(tampered.code, -32002);
  t.is(tampered.message, 'Invalid signature');
});

test.serial('nonces: too low, future held up to 200 ahead, replacement needs the price bump, known transaction', async (t) => {
  const key = DEV_ACCOUNTS[1].privateKey;
  const wallet = new Wallet(key, provider);
  // Mine one transaction so that nonce 0 is used.
  const first = await wallet.sendTransaction({ to: DEV_ACCOUNTS[2].address, value: 1n });
  await first.wait(1, 15_000);
  t.deepEqual(await send(await signed(key, { nonce: 0 })), { code: -32001, message: 'Nonce too low' });

  const next = await provider.getTransactionCount(wallet.address, 'latest');
  // A gap: next+5 is held as a future transaction, not mined, and `pending` does not count it.
  const future = await signed(key, { nonce: next + 5 });
  const futureHash = await provider.send('eth_sendRawTransaction', [future]);
  t.regex(futureHash, /^0x[0-9a-f]{64}$/);
  t.deepEqual(await send(future), { code: -32000, message: 'Known transaction' });
  t.deepEqual(await send(await signed(key, { nonce: next + 200 })), {
    code: -32000,
    message: 'Transaction nonce is too distant from current sender nonce',
  });
  t.regex(await provider.send('eth_sendRawTransaction', [await signed(key, { nonce: next + 199 })]), /^0x/);

  // Replacement of the future transaction: +5% is refused, +10% replaces.
  t.deepEqual(
    await send(await signed(key, { nonce: next + 5, maxFeePerGas: parseUnits('2.1', 'gwei'), maxPriorityFeePerGas: parseUnits('1.05', 'gwei') })),
    { code: -32000, message: 'Replacement transaction underpriced' },
  );
  t.regex(
    await provider.send('eth_sendRawTransaction', [
      await signed(key, { nonce: next + 5, maxFeePerGas: parseUnits('2.2', 'gwei'), maxPriorityFeePerGas: parseUnits('1.1', 'gwei') }),
    ]),
    /^0x/,
  );
  // The pooled copy is served in the pending shape.
  const pooled = (await provider.send('eth_getTransactionByHash', [futureHash])) as Record<string, unknown> | null;
  t.is(pooled, null, 'the replaced transaction is gone');

  // Filling the gap (next..next+4) releases the held transaction; all six are mined.
  for (let i = 0; i < 5; i++) await provider.send('eth_sendRawTransaction', [await signed(key, { nonce: next + i })]);
  const deadline = Date.now() + 15_000;
  while ((await provider.getTransactionCount(wallet.address, 'latest')) < next + 6 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
  }
  t.is(await provider.getTransactionCount(wallet.address, 'latest'), next + 6);
});

test.serial('eth_call and eth_estimateGas return a revert with its data (code 3)', async (t) => {
  const wallet = new Wallet(DEV_ACCOUNTS[2].privateKey, provider);
  const receipt = await (await wallet.sendTransaction({ data: revertingDeployCode() })).wait(1, 15_000);
  const address = receipt!.contractAddress!;
  const callError = await rpcError('eth_call', [{ to: address, data: '0x' }, 'latest']);
  t.is(callError.code, 3);
  t.is(callError.message, 'Execution reverted (nope)');
  t.true(callError.data!.startsWith('0x08c379a0'));
  const estimateError = await rpcError('eth_estimateGas', [{ to: address, data: '0x' }]);
  t.is(estimateError.code, 3);
});

test.serial('block parameters: every form, missing ones and unknown blocks', async (t) => {
  const head = await provider.getBlockNumber();
  const addr = DEV_ACCOUNTS[0].address;
  t.deepEqual(await rpcError('eth_getBalance', [addr]), { code: -32602, message: 'Invalid block param (block not found)' });
  t.deepEqual(await rpcError('eth_getBalance', ['0x12', 'nonsense']), { code: -32602, message: 'Invalid block param (block not found)' });
  t.deepEqual(await rpcError('eth_getBlockByNumber', ['latest']), { code: -32602, message: 'Invalid return complete transaction params' });
  t.deepEqual(await rpcError('eth_getBlockByNumber', ['bogus', false]), { code: -32602, message: 'Invalid block number params' });
  for (const tag of ['latest', 'pending', 'LATEST']) {
    const block = (await provider.send('eth_getBlockByNumber', [tag, false])) as { number: string };
    t.true(Number(block.number) >= head, `${tag} resolves to the head`);
  }
  // QBFT has no consensus client naming safe or finalized blocks: Besu answers Unknown block.
  for (const tag of ['finalized', 'safe', 'SAFE']) {
    t.deepEqual(await rpcError('eth_getBlockByNumber', [tag, false]), { code: -39001, message: 'Unknown block' });
    t.deepEqual(await rpcError('eth_getBalance', [addr, tag]), { code: -39001, message: 'Unknown block' });
  }
  const earliest = (await provider.send('eth_getBlockByNumber', ['earliest', false])) as { number: string };
  t.is(earliest.number, '0x0');
  const decimal = (await provider.send('eth_getBlockByNumber', ['1', false])) as { number: string };
  t.is(decimal.number, '0x1');
  t.is(await provider.send('eth_getBlockByNumber', ['0xffffff', false]), null);
  t.is(await provider.send('eth_getBalance', [addr, '0xffffff']), null);
  const genesis = (await provider.send('eth_getBlockByNumber', ['0x0', false])) as { hash: string };
  t.is(await provider.send('eth_getBalance', [addr, { blockHash: genesis.hash }]), '0xad78ebc5ac6200000');
});

test.serial('HTTP level: parse error, invalid request, unknown and disabled methods, batches, size and host limits', async (t) => {
  const parse = await post('{not json');
  t.is(parse.status, 400);
  t.deepEqual(parse.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });

  const invalid = await post('{"jsonrpc":"2.0","id":3}');
  t.is(invalid.status, 400);
  t.deepEqual(invalid.json, { jsonrpc: '2.0', id: 3, error: { code: -32600, message: 'Invalid Request' } });

  const unknown = await post('{"jsonrpc":"2.0","id":"a","method":"eth_nope","params":[]}');
  t.is(unknown.status, 200);
  t.is(unknown.body, '{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}');

  // Served by Basalt, group off: an option would enable it.
  const disabled = await post('{"jsonrpc":"2.0","id":1,"method":"admin_peers","params":[]}');
  t.deepEqual(disabled.json, { jsonrpc: '2.0', id: 1, error: { code: -32604, message: 'Method not enabled' } });
  // Besu names Basalt does not serve over HTTP, with their group (ETH) enabled or not (PERM, TRACE): no option helps.
  for (const method of ['eth_subscribe', 'eth_coinbase', 'perm_getNodesAllowlist', 'trace_block']) {
    const notServed = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method, params: [] }));
    t.deepEqual(notServed.json, { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } }, method);
  }

  const batch = await post('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","method":"eth_chainId"},5]');
  t.deepEqual(batch.json, [
    { jsonrpc: '2.0', id: 1, result: '0x539' },
    { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
  ]);

  const tooMany = await post(JSON.stringify([1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' }))));
  t.is(tooMany.status, 200);
  t.deepEqual(tooMany.json, { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Number of requests exceeds max batch size' } });

  const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'web3_sha3', params: ['0x' + 'ab'.repeat(20000)] }));
  t.is(big.status, 413);

  // fetch cannot set Host; node:http can.
  const foreign = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: node.port, method: 'POST', path: '/', headers: { host: 'evil.example', 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
  });
  t.is(foreign.status, 403);
  t.deepEqual(JSON.parse(foreign.body), { message: 'Host not authorized.' });

  t.is(
    await node.rpc('web3_sha3', ['0x68656c6c6f20776f726c64']),
    '0x47173285a8d7341e5e972fc677286384f802f8ef42a5ec5f03bbfa254cb01fad',
  );
  t.regex((await node.rpc('web3_clientVersion')) as string, /^basalt\/v\d+\.\d+\.\d+\/linux-/);
  t.is(await node.rpc('net_listening'), false, 'p2p is disabled in this test');
  t.deepEqual(await rpcError('net_peerCount', []), { code: -32000, message: 'P2P has been disabled. This functionality is not available' });
  t.deepEqual(await rpcError('eth_sendTransaction', [{}]), {
    code: -32604,
    message: 'The method eth_sendTransaction is not supported. Use eth_sendRawTransaction to send a signed transaction to Besu.',
  });
  // Still serving after all of that.
  t.true(Number(await node.rpc('eth_blockNumber')) > 0);
});
