/**
 * A dev node executes transactions while they arrive, before its block timer (src/consensus/
 * block-prebuilder.ts, Chain.prebuild): a burst sent just after a block is in the next block, some of it
 * run ahead of the timer (DEBUG says how many), every receipt is a success, and the blocks are ones a
 * fresh node accepts by executing them itself (`blocks export`, then `blocks import`). A stream that
 * goes on past a timer is taken into that timer's block while it is built (`catchUp`).
 */
import test from 'ava';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, runCli, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const paths: string[] = [];
let node: NodeProcess | undefined;
let streamNode: NodeProcess | undefined;

test.after.always(async () => {
  await node?.kill();
  await streamNode?.kill();
  for (const path of paths) removeDataPath(path);
});

interface Receipt {
  status: string;
  blockNumber: string;
}

/** Sends each lane's raw transactions in order, the lanes side by side; answers the hashes, lane after lane. */
async function sendInLanes(target: NodeProcess, lanes: string[][]): Promise<string[]> {
  const hashes = await Promise.all(lanes.map(async (raws) => {
    const out: string[] = [];
    for (const raw of raws) out.push(await target.rpc<string>('eth_sendRawTransaction', [raw]));
    return out;
  }));
  return hashes.flat();
}

async function receiptsOf(target: NodeProcess, hashes: string[], timeoutMs: number): Promise<Receipt[]> {
  const receipts = await waitFor(
    'every receipt',
    () => Promise.all(hashes.map((hash) => target.rpc<Receipt | null>('eth_getTransactionReceipt', [hash]))),
    (all) => all.every((r) => r !== null),
    timeoutMs,
  );
  return receipts as Receipt[];
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
  const hashes = await sendInLanes(node, signed);
  t.is(hashes.length, 3 * PER_SENDER);

  const receipts = await receiptsOf(node, hashes, 20_000);
  t.true(receipts.every((r) => r.status === '0x1'));
  const blocks = [...new Set(receipts.map((r) => Number(r.blockNumber)))];
  // A block of the burst with transactions run ahead (under load the first may start at its timer: 0 ahead).
  const ahead = await node.waitForLog(/QBFT: ([1-9]\d*) of block (\d+)'s (\d+) transactions ran ahead of its timer/, { timeoutMs: 10_000 });
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

test('a stream of transactions that goes on past the block timer joins the block the timer started, in rounds', async (t) => {
  const dataPath = tempDataPath();
  paths.push(dataPath);
  streamNode = await startNode({ dataPath, args: ['--logging=DEBUG'] });
  const chainId = 1337n;
  const recipient = Wallet.createRandom().address;
  // One lane per sender, as many senders as the peer benchmarks use: the pool keeps at most 200
  // transactions ahead of a sender's nonce (Besu's --tx-pool-max-future-by-sender).
  const SENDERS = 32;
  const PER_SENDER = 100;
  const funder = new Wallet(DEV_ACCOUNTS[0].privateKey);
  const senders = Array.from({ length: SENDERS }, () => Wallet.createRandom());
  const funding = await Promise.all(
    senders.map((wallet, nonce) =>
      funder.signTransaction({ type: 2, chainId, nonce, to: wallet.address, value: 10n ** 18n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }),
    ),
  );
  await receiptsOf(streamNode, await sendInLanes(streamNode, [funding]), 20_000);
  const lanes: string[][] = await Promise.all(
    senders.map((wallet) =>
      Promise.all(
        Array.from({ length: PER_SENDER }, (_, nonce) =>
          wallet.signTransaction({ type: 2, chainId, nonce, to: recipient, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }),
        ),
      ),
    ),
  );
  const since = streamNode.output().length;
  const hashes = await sendInLanes(streamNode, lanes);
  t.is(hashes.length, SENDERS * PER_SENDER);
  const receipts = await receiptsOf(streamNode, hashes, 30_000);
  t.true(receipts.every((r) => r.status === '0x1'));
  // A second round means transactions that arrived while the first one ran, after the timer, were taken in.
  const caughtUp = await streamNode.waitForLog(/QBFT: \d+ of block (\d+)'s \d+ transactions ran ahead of its timer, the rest in ([2-9]|\d{2,}) round\(s\) after it/, { since, timeoutMs: 10_000 });
  const blocks = new Set(receipts.map((r) => Number(r.blockNumber)));
  t.true(blocks.has(Number(caughtUp.match[1])), `block ${caughtUp.match[1]} holds part of the stream (blocks ${[...blocks].join(', ')})`);
  const provider = new JsonRpcProvider(streamNode.url, undefined, { staticNetwork: true });
  t.is(await provider.getBalance(recipient), BigInt(SENDERS * PER_SENDER));
  provider.destroy();
});
