/**
 * Receipt polling while blocks are sealed (src/transport/absent-receipts.ts: a transport answers a
 * repeated miss itself while the head it was asked at is published): a poll made after the head
 * reached a transaction's block always finds its receipt, and ethers' `wait` returns.
 */
import test from 'ava';
import { JsonRpcProvider, Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const dataPath = tempDataPath();
let node: NodeProcess | undefined;

test.after.always(async () => {
  await node?.kill();
  removeDataPath(dataPath);
});

test('a receipt polled after the head reached its block is there; misses before it are null', async (t) => {
  node = await startNode({ dataPath });
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 100 });
  const wallet = new Wallet(DEV_ACCOUNTS[0]!.privateKey);
  const recipient = Wallet.createRandom().address;
  const COUNT = 30;
  const transfer = (nonce: number) =>
    wallet.signTransaction({ type: 2, chainId: 1337n, nonce, to: recipient, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
  const raw = await Promise.all(Array.from({ length: COUNT }, (_, nonce) => transfer(nonce)));
  // Half now, half after the next block: the second half is polled for across at least one new head.
  const hashes: string[] = [];
  for (const tx of raw.slice(0, COUNT / 2)) hashes.push(await node.rpc<string>('eth_sendRawTransaction', [tx]));
  const sentAt = Number(await node.rpc<string>('eth_blockNumber'));
  await waitFor('a new block', () => node!.rpc<string>('eth_blockNumber').then(Number), (n) => n > sentAt, 10_000, 20);
  for (const tx of raw.slice(COUNT / 2)) hashes.push(await node.rpc<string>('eth_sendRawTransaction', [tx]));

  // Eight pollers, each asking for the head and then for every receipt still missing, without pause.
  const includedIn = new Map<string, number>();
  const misses: { hash: string; headSeenBefore: number }[] = [];
  const deadline = Date.now() + 20_000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (includedIn.size < COUNT && Date.now() < deadline) {
        const headSeenBefore = Number(await node!.rpc<string>('eth_blockNumber'));
        for (const hash of hashes) {
          if (includedIn.has(hash)) continue;
          const receipt = await node!.rpc<{ blockNumber: string; status: string } | null>('eth_getTransactionReceipt', [hash]);
          if (receipt === null) misses.push({ hash, headSeenBefore });
          else includedIn.set(hash, Number(receipt.blockNumber));
        }
      }
    }),
  );
  t.is(includedIn.size, COUNT, 'every receipt found within 20 s');
  t.true(misses.length > COUNT, `polled repeatedly before inclusion (${misses.length} misses)`);
  const stale = misses.filter((miss) => miss.headSeenBefore >= includedIn.get(miss.hash)!);
  t.deepEqual(stale, [], 'no miss answered once the head had reached the block');

  // A real client's wait: ethers polls the receipt as blocks arrive.
  const next = await provider.broadcastTransaction(await transfer(COUNT));
  const mined = await next.wait(1, 20_000);
  t.is(mined?.status, 1);
  t.is(await provider.getBalance(recipient), BigInt(COUNT + 1));
  provider.destroy();
});
