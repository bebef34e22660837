/**
 * Reads answer from one block's state while blocks are built and imported: a dev node (1-second
 * blocks) includes a stream of transfers to one address while clients ask eth_getBalance and eth_call
 * (a creation call whose init code returns BALANCE of that address) at explicit block numbers and at
 * `latest`. Once the load stops, each block's balance is derived from the blocks' own transactions,
 * and every answer must equal the balance after the block it named (for `latest`: after one of the
 * blocks that were the head while it was asked). Run with state reader threads, and with none (the
 * chain answers).
 */
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

/** The load runs this long, and on until the reads below were made (a slow machine), within LOAD_MAX_MS. */
const LOAD_MS = 6_000;
const LOAD_MAX_MS = 30_000;
const MIN_READS_AT_BLOCK = 50;
const MIN_READS_AT_LATEST = 25;
const READ_CLIENTS = 6;
const TRANSFERS_PER_SECOND = 40;

/** Init code that returns BALANCE(`address`) as one 32-byte word: PUSH20 a BALANCE PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN. */
function balanceOfInitCode(address: string): string {
  return `0x73${address.slice(2).toLowerCase()}3160005260206000f3`;
}

interface AtBlock {
  method: 'eth_getBalance' | 'eth_call';
  block: bigint;
  value: bigint;
}
interface AtLatest {
  method: 'eth_getBalance' | 'eth_call';
  /** eth_blockNumber just before and just after the read. */
  from: bigint;
  to: bigint;
  value: bigint;
}

async function readsFollowBlocks(t: ExecutionContext, args: string[], logPattern: RegExp): Promise<void> {
  const dataPath = tempDataPath();
  let node: NodeProcess | undefined;
  try {
    node = await startNode({ dataPath, args });
    await node.waitForLog(logPattern);
    const rpc = node.rpc;
    const sender = new Wallet(DEV_ACCOUNTS[0].privateKey);
    const recipient = Wallet.createRandom().address.toLowerCase();
    const callData = balanceOfInitCode(recipient);
    const read = async (method: AtBlock['method'], block: string): Promise<bigint> =>
      BigInt(
        method === 'eth_getBalance' ? await rpc<string>('eth_getBalance', [recipient, block]) : await rpc<string>('eth_call', [{ data: callData }, block]),
      );

    const startBlock = BigInt(await rpc<string>('eth_blockNumber'));
    let nonce = Number(BigInt(await rpc<string>('eth_getTransactionCount', [sender.address, 'latest'])));
    const loadStart = Date.now();
    const sentHashes: string[] = [];

    const atBlock: AtBlock[] = [];
    const atLatest: AtLatest[] = [];
    const loadGoesOn = () =>
      Date.now() < loadStart + LOAD_MS || ((atBlock.length < MIN_READS_AT_BLOCK || atLatest.length < MIN_READS_AT_LATEST) && Date.now() < loadStart + LOAD_MAX_MS);

    const sending = (async () => {
      let value = 1n;
      while (loadGoesOn()) {
        const raw = await sender.signTransaction({
          type: 2,
          chainId: 1337n,
          nonce: nonce++,
          to: recipient,
          value: value++,
          gasLimit: 21_000n,
          maxFeePerGas: 100_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        });
        sentHashes.push(await rpc<string>('eth_sendRawTransaction', [raw]));
        await new Promise((resolve) => setTimeout(resolve, 1000 / TRANSFERS_PER_SECOND));
      }
    })();

    const reading = Array.from({ length: READ_CLIENTS }, async (_, client) => {
      for (let i = 0; loadGoesOn(); i++) {
        const method: AtBlock['method'] = (i + client) % 2 === 0 ? 'eth_getBalance' : 'eth_call';
        const head = BigInt(await rpc<string>('eth_blockNumber'));
        if (i % 3 === 0) {
          const value = await read(method, 'latest');
          const to = BigInt(await rpc<string>('eth_blockNumber'));
          atLatest.push({ method, from: head, to, value });
        } else {
          // Recent blocks mostly: the head area is where the state keeps moving.
          const back = BigInt(Math.floor(Math.random() * 4));
          const block = head - back < startBlock ? head : head - back;
          atBlock.push({ method, block, value: await read(method, `0x${block.toString(16)}`) });
        }
      }
    });
    await Promise.all([sending, ...reading]);

    // Every transfer included, then the balance after each block from the blocks' own transactions.
    const lastHash = sentHashes[sentHashes.length - 1]!;
    const lastReceipt = await waitFor('the last transfer included', () => rpc<{ blockNumber: string } | null>('eth_getTransactionReceipt', [lastHash]), (r) => r !== null, 20_000);
    const lastBlock = BigInt(lastReceipt!.blockNumber);
    const balanceAfter = new Map<bigint, bigint>();
    let balance = 0n;
    for (let n = startBlock; n <= lastBlock; n++) {
      const block = await rpc<{ transactions: { to: string | null; value: string }[] }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
      for (const tx of block.transactions) if (tx.to?.toLowerCase() === recipient) balance += BigInt(tx.value);
      balanceAfter.set(n, balance);
    }
    const expectedAt = (n: bigint) => balanceAfter.get(n) ?? (n < startBlock ? 0n : balance);

    const blocksDuringLoad = new Set(atBlock.map((r) => r.block));
    t.true(blocksDuringLoad.size >= 4, `reads named ${blocksDuringLoad.size} blocks`);
    t.true(new Set(balanceAfter.values()).size >= 4, 'the balance changed from block to block');
    t.true(atBlock.length >= MIN_READS_AT_BLOCK && atLatest.length >= MIN_READS_AT_LATEST, `${atBlock.length} reads at a number, ${atLatest.length} at latest`);
    t.true(atBlock.some((r) => r.method === 'eth_call') && atBlock.some((r) => r.method === 'eth_getBalance'));

    const wrongAtBlock = atBlock.filter((r) => r.value !== expectedAt(r.block));
    t.deepEqual(wrongAtBlock.slice(0, 5), [], `${wrongAtBlock.length} of ${atBlock.length} reads at a block number answered another block's state`);
    const wrongAtLatest = atLatest.filter((r) => {
      for (let n = r.from; n <= r.to; n++) if (expectedAt(n) === r.value) return false;
      return true;
    });
    t.deepEqual(wrongAtLatest.slice(0, 5), [], `${wrongAtLatest.length} of ${atLatest.length} reads at latest answered no head's state`);
  } finally {
    await node?.kill();
    removeDataPath(dataPath);
  }
}

test('reads at a block answer that block\'s state while blocks are built, on state reader threads', async (t) => {
  await readsFollowBlocks(t, ['--Xstate-reader-threads=2'], /State reader threads: 2/);
});

test('reads at a block answer that block\'s state while blocks are built, on the chain thread', async (t) => {
  await readsFollowBlocks(t, ['--Xstate-reader-threads=0'], /Basalt is running/);
});

test('state reader threads start at the first call that reads state, which they answer', async (t) => {
  const node = await startNode({ args: ['--Xstate-reader-threads=1'] });
  try {
    await node.waitForLog(/Basalt is running/);
    t.regex(node.output(), /State reader threads: 1, started at the first call that reads state/);
    t.notRegex(node.output(), /State reader threads started/, 'a reader started before any call needed one');
    t.is(await node.rpc<string>('eth_getBalance', [DEV_ACCOUNTS[0].address, 'latest']), '0xad78ebc5ac6200000');
    await node.waitForLog(/State reader threads started: 1/);
    t.is(await node.rpc<string>('eth_call', [{ data: balanceOfInitCode(DEV_ACCOUNTS[0].address) }, 'latest']), `0x${(0xad78ebc5ac6200000n).toString(16).padStart(64, '0')}`);
  } finally {
    await node.kill();
    removeDataPath(node.dataPath);
  }
});
