/**
 * Crash consistency: kill -9 the node while it imports blocks under sustained load, restart it on the
 * same data path, and check that the head it resumes from has all its blocks, receipts and state.
 */
import test from 'ava';
import { JsonRpcProvider, Wallet, parseUnits } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath } from '../helpers/node-process.js';

const dataPath = tempDataPath();

test.after.always(() => removeDataPath(dataPath));

async function presign(key: string, count: number): Promise<string[]> {
  const wallet = new Wallet(key);
  const out: string[] = [];
  for (let nonce = 0; nonce < count; nonce++) {
    out.push(
      await wallet.signTransaction({
        to: '0x00000000000000000000000000000000000c0ffe',
        value: 1n,
        nonce,
        gasLimit: 21000n,
        chainId: 1337n,
        type: 2,
        maxFeePerGas: parseUnits('10', 'gwei'),
        maxPriorityFeePerGas: 1n,
      }),
    );
  }
  return out;
}

test('a node killed with SIGKILL under load restarts consistent and keeps producing', async (t) => {
  t.timeout(120_000);
  const perSender = 400;
  const signed = await Promise.all(DEV_ACCOUNTS.map((a) => presign(a.privateKey, perSender)));

  const node = await startNode({ dataPath });
  let sent = 0;
  let stopLoad = false;
  const load = Promise.all(
    signed.map(async (txs) => {
      for (const raw of txs) {
        if (stopLoad) return;
        try {
          await node.rpc('eth_sendRawTransaction', [raw]);
          sent++;
        } catch {
          return; // the node is gone
        }
      }
    }),
  );
  // Let blocks with transactions be imported (at least one of ours is in), then kill in the middle of it.
  const deadline = Date.now() + 30_000;
  while (sent < 600 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const firstSender = new Wallet(DEV_ACCOUNTS[0].privateKey).address;
  while (Date.now() < deadline && BigInt(await node.rpc<string>('eth_getTransactionCount', [firstSender, 'latest'])) === 0n) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 700)));
  const headBeforeKill = Number(await node.rpc<string>('eth_blockNumber'));
  await node.kill();
  stopLoad = true;
  await load;
  t.log(`killed at head ${headBeforeKill} after ${sent} submissions`);

  const restarted = await startNode({ dataPath });
  try {
    const provider = new JsonRpcProvider(restarted.url, undefined, { staticNetwork: true });
    const head = await provider.getBlock('latest');
    t.truthy(head);
    t.true(head!.number >= headBeforeKill - 1, `resumed at ${head!.number}, was ${headBeforeKill}`);

    // Every block up to the head is there, links to its parent, and its transactions have receipts.
    const included = new Map<string, number>();
    let parentHash: string | undefined;
    for (let n = 0; n <= head!.number; n++) {
      const block = await provider.getBlock(n, false);
      t.truthy(block, `block ${n} exists`);
      if (parentHash !== undefined) t.is(block!.parentHash, parentHash, `block ${n} links to its parent`);
      parentHash = block!.hash!;
      for (const hash of block!.transactions) {
        const receipt = await provider.getTransactionReceipt(hash);
        t.truthy(receipt, `receipt of ${hash}`);
        const tx = await provider.getTransaction(hash);
        const from = tx!.from.toLowerCase();
        included.set(from, (included.get(from) ?? 0) + 1);
      }
    }
    // The state at the head agrees with the blocks: each sender's nonce is the count of its included
    // transactions, and the recipient holds one wei per transfer.
    let total = 0;
    for (const account of DEV_ACCOUNTS) {
      const nonce = await provider.getTransactionCount(account.address, head!.number);
      t.is(nonce, included.get(account.address) ?? 0, `nonce of ${account.address}`);
      total += nonce;
    }
    t.is(await provider.getBalance('0x00000000000000000000000000000000000c0ffe', head!.number), BigInt(total));
    t.true(total > 0, 'some load was included before the kill');

    // And the node goes on: new blocks, and a new transaction from the next nonce is mined.
    const wallet = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
    const tx = await wallet.sendTransaction({ to: DEV_ACCOUNTS[1].address, value: 1n, nonce: await provider.getTransactionCount(wallet.address, 'latest') });
    const receipt = await tx.wait(1, 20_000);
    t.is(receipt!.status, 1);
    provider.destroy();
  } finally {
    await restarted.kill();
  }
});
