/**
 * The transaction pool's reliability end to end, on dev nodes spoken to over HTTP:
 * - the case: one dev account (200 ETH) sends 129 transfers in a row with ethers; those past
 *   its balance (counting what its earlier pooled transfers commit) are refused at submission with
 *   -32004, and every accepted one is mined;
 * - a pool with small limits evicts in Besu's order, and says so in its log.
 */
import test from 'ava';
import { JsonRpcProvider, Wallet, parseEther, parseUnits } from 'ethers';
import { hexToBytes } from '@ethereumjs/util';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { memorySizeOf } from '../../src/txpool/pool.js';

const started: { node: NodeProcess; dataPath: string }[] = [];
test.after.always(async () => {
  for (const { node, dataPath } of started) {
    await node.kill();
    removeDataPath(dataPath);
  }
});

async function devNode(args: string[]): Promise<NodeProcess> {
  const dataPath = tempDataPath();
  const node = await startNode({ dataPath, args: ['--rpc-http-api=ETH,NET,WEB3,TXPOOL', ...args] });
  started.push({ node, dataPath });
  return node;
}

/** The JSON-RPC error an ethers call failed with (ethers keeps the server's error object). */
function rpcErrorOf(err: unknown): { code?: number; message?: string } {
  const e = err as { error?: { code?: number; message?: string }; info?: { error?: { code?: number; message?: string } } };
  return e.error ?? e.info?.error ?? {};
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('129 transfers from a 200 ETH dev account: the unaffordable are refused with -32004, every accepted one is mined', async (t) => {
  const node = await devNode(['--logging=DEBUG']);
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 250 });
  try {
    const sender = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
    t.is(await provider.getBalance(sender.address), parseEther('200'));
    const recipient = Wallet.createRandom().address;
    const maxFeePerGas = parseUnits('10', 'gwei');
    // Each transfer commits 21,000 × 10 gwei + 2 ETH of the balance: 99 of them fit in 200 ETH.
    const fields = { to: recipient, value: parseEther('2'), gasLimit: 21_000n, maxFeePerGas, maxPriorityFeePerGas: 1n, type: 2 };
    const accepted: string[] = [];
    const refusals: { code?: number; message?: string }[] = [];
    for (let i = 0; i < 129; i++) {
      try {
        // The nonce moves on only when a transfer is accepted (a refused one did not use it).
        accepted.push((await sender.sendTransaction({ ...fields, nonce: accepted.length })).hash);
      } catch (err) {
        refusals.push(rpcErrorOf(err));
      }
    }
    t.is(accepted.length, 99);
    t.is(refusals.length, 30);
    t.true(
      refusals.every((r) => r.code === -32004 && r.message === 'Upfront cost exceeds account balance'),
      JSON.stringify(refusals.slice(0, 3)),
    );

    const receipts = await Promise.all(accepted.map((hash) => provider.waitForTransaction(hash, 1, 60_000)));
    t.true(receipts.every((r) => r !== null && r.status === 1));
    t.is(await provider.getTransactionCount(sender.address, 'latest'), 99);
    t.deepEqual(await node.rpc('txpool_besuStatistics'), { maxSize: -1, localCount: 0, remoteCount: 0 });
    // Every receipt exists, so the pool has finished with them: none was dropped on the way.
    t.notRegex(node.output(), /Dropped \d+ pending transaction/);
  } finally {
    provider.destroy();
  }
});

test('a pool at its limits evicts in Besu\'s order: the least valuable ready sender moves down, the oldest sparse sender loses its latest nonce', async (t) => {
  const rules = txRulesFor(1337n, 'cancun');
  const [poorKey, richKey, richerKey] = [DEV_ACCOUNTS[1].privateKey, DEV_ACCOUNTS[2].privateKey, DEV_ACCOUNTS[0].privateKey];
  const sign = (key: string, nonce: number, maxFeeGwei: number) =>
    new Wallet(key).signTransaction({
      chainId: 1337n,
      type: 2,
      nonce,
      to: DEV_ACCOUNTS[0].address,
      value: 1n,
      gasLimit: 21_000n,
      maxFeePerGas: parseUnits(String(maxFeeGwei), 'gwei'),
      maxPriorityFeePerGas: 1n,
    });
  const rich = await Promise.all([0, 1, 2].map((n) => sign(richKey, n, 50)));
  const poor = await Promise.all([0, 1].map((n) => sign(poorKey, n, 20)));
  const richer = await sign(richerKey, 0, 90);
  const future = await Promise.all([5, 6].map((n) => sign(richerKey, n, 90)));
  const sizes = [...rich, ...poor, richer, ...future].map((raw) => memorySizeOf(decodeRawTransaction(hexToBytes(raw as `0x${string}`), rules)));
  // Three transactions per layer; nothing prioritized, so nothing is mined and the layers stay as filled.
  const capacity = 3 * Math.max(...sizes) + 2;
  const node = await devNode(['--logging=DEBUG', '--tx-pool-max-prioritized=0', `--tx-pool-layer-max-capacity=${capacity}`]);

  const send = (raw: string) => node.rpc<string>('eth_sendRawTransaction', [raw]);
  const pooled = async () => new Set((await node.rpc<{ hash: string }[]>('txpool_besuTransactions')).map((tx) => tx.hash));
  const evicted = (hash: string) => until(`the eviction of ${hash} in the log`, 10_000, () =>
    new RegExp(`Dropped \\d+ pending transaction\\(s\\) \\(evicted\\): [^\\n]*${hash}`).test(node.output()) ? true : undefined,
  );

  const hashes = { rich: [] as string[], poor: [] as string[], richer: '', future: [] as string[] };
  for (const raw of rich) hashes.rich.push(await send(raw));
  // `poor` pays less: the ready layer, over capacity, moves poor's own latest nonces down to sparse.
  for (const raw of poor) hashes.poor.push(await send(raw));
  // `richer` pays more: `rich`, now the least valuable ready sender, moves its latest nonce (rich2) down.
  hashes.richer = await send(richer);
  t.deepEqual((await pooled()).size, 6);
  t.notRegex(node.output(), /\(evicted\)/);

  // Sparse holds rich2, poor0, poor1 (in that arrival order) and is full: the next future transaction
  // evicts from the sender of the oldest sparse transaction its latest nonce — rich2.
  hashes.future.push(await send(future[0]!));
  await evicted(hashes.rich[2]!);
  // Then the oldest is poor0: poor loses poor1 first, never leaving a gap.
  hashes.future.push(await send(future[1]!));
  await evicted(hashes.poor[1]!);

  t.deepEqual([...(await pooled())].sort(), [hashes.rich[0], hashes.rich[1], hashes.richer, hashes.poor[0], ...hashes.future].sort());
  t.deepEqual(await node.rpc('txpool_besuStatistics'), { maxSize: -1, localCount: 6, remoteCount: 0 });
});
