/**
 * A dev node executes transactions while they arrive, before its block timer (src/consensus/
 * block-prebuilder.ts, Chain.prebuild): a burst sent just after a block is in the next block, some of it
 * run ahead of the timer (DEBUG says how many), every receipt is a success, and the blocks are ones a
 * fresh node accepts by executing them itself (`blocks export`, then `blocks import`).
 */
import test from 'ava';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, runCli, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const paths: string[] = [];
let node: NodeProcess | undefined;

test.after.always(async () => {
  await node?.kill();
  for (const path of paths) removeDataPath(path);
});

interface Receipt {
  status: string;
  blockNumber: string;
}

test('a burst is executed ahead of the block timer into blocks a fresh node imports', async (t) => {
  const dataPath = tempDataPath();
  paths.push(dataPath);
  node = await startNode({ dataPath, args: ['--logging=DEBUG'] });
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true });
  const chainId = 1337n;
  const senders = DEV_ACCOUNTS.slice(0, 3).map((account) => new Wallet(account.privateKey));
  const recipient = Wallet.createRandom().address;
  const PER_SENDER = 40;
  const signed: string[][] = await Promise.all(
    senders.map((wallet) =>
      Promise.all(
        Array.from({ length: PER_SENDER }, (_, nonce) =>
          wallet.signTransaction({ type: 2, chainId, nonce, to: recipient, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }),
        ),
      ),
    ),
  );

  // Send just after a new block, so the burst lands well before the next timer.
  const before = Number(await node.rpc<string>('eth_blockNumber'));
  await waitFor('a new block', () => node!.rpc<string>('eth_blockNumber').then(Number), (n) => n > before, 10_000);
  const hashes = (await Promise.all(signed.map(async (txs) => {
    const out: string[] = [];
    for (const raw of txs) out.push(await node!.rpc<string>('eth_sendRawTransaction', [raw]));
    return out;
  }))).flat();
  t.is(hashes.length, 3 * PER_SENDER);

  const receipts = await waitFor(
    'every receipt',
    () => Promise.all(hashes.map((hash) => node!.rpc<Receipt | null>('eth_getTransactionReceipt', [hash]))),
    (all) => all.every((r) => r !== null),
    20_000,
  );
  t.true(receipts.every((r) => r!.status === '0x1'));
  const blocks = [...new Set(receipts.map((r) => Number(r!.blockNumber)))];
  const ahead = await node.waitForLog(/QBFT: (\d+) of block (\d+)'s (\d+) transactions ran ahead of its timer/, { timeoutMs: 10_000 });
  t.true(Number(ahead.match[1]) > 0);
  t.true(blocks.includes(Number(ahead.match[2])), `block ${ahead.match[2]} holds the burst (blocks ${blocks.join(', ')})`);
  t.is(await provider.getBalance(recipient), BigInt(3 * PER_SENDER));
  const head = await node.rpc<{ number: string; hash: string }>('eth_getBlockByNumber', ['latest', false]);
  provider.destroy();
  await node.kill();
  node = undefined;

  // Every block, executed again from genesis by a node that built none of them.
  const file = join(dataPath, 'chain.blocks');
  const exported = await runCli(['--network=dev', `--data-path=${dataPath}`, 'blocks', 'export', `--end-block=${Number(head.number) + 1}` /* exclusive, as in Besu */, `--to=${file}`]);
  t.is(exported.code, 0, exported.output);
  const fresh = tempDataPath();
  paths.push(fresh);
  const imported = await runCli(['--network=dev', `--data-path=${fresh}`, 'blocks', 'import', `--from=${file}`]);
  t.is(imported.code, 0, imported.output);
  t.regex(imported.stdout, new RegExp(`Head #${Number(head.number)} ${head.hash}`), 'the same head, hash for hash');
});
