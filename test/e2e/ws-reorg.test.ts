/**
 * Subscriptions across a real re-org (rpc-auth-cli.md §6.3, §4.5), on two dev nodes over loopback
 * devp2p (test/helpers/reorg-scenario.ts): the node on the shorter branch serves WebSocket, a client
 * subscribes there to `logs` and `newHeads` before it meets the longer branch. When full sync switches
 * it over, the log of the block that left the canonical chain comes again with `removed: true`, then
 * the logs of the new branch; `newHeads` announces each block of the new branch from the common
 * ancestor on, in order.
 */
import test from 'ava';
import { JsonRpcProvider, Wallet, toBeHex, zeroPadValue } from 'ethers';
import { STORED_EVENT_TOPIC, storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { startReorgScenario, waitUntil } from '../helpers/reorg-scenario.js';
import { WsClient } from '../helpers/ws-client.js';

interface LogJson {
  logIndex: string;
  removed: boolean;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  address: string;
  data: string;
  topics: string[];
}

interface HeadJson {
  number: string;
  hash: string;
  parentHash: string;
}

const LOG_KEYS = ['logIndex', 'removed', 'blockNumber', 'blockHash', 'blockTimestamp', 'transactionHash', 'transactionIndex', 'address', 'data', 'topics'];

test('logs: removed: true for the blocks that left, then the new branch\'s logs; newHeads: every block of the new branch in order', async (t) => {
  const scenario = await startReorgScenario({ losingArgs: ['--rpc-ws-enabled'] });
  const { losing, winning, loggingCall } = scenario;
  let client: WsClient | undefined;
  try {
    client = await WsClient.open(losing.wsUrl!);
    const logs = await client.subscribe('logs', { topics: [STORED_EVENT_TOPIC] });
    const heads = await client.subscribe('newHeads');

    // The winning branch gets a log of its own, from another account: Stored(7) at another contract.
    const provider = new JsonRpcProvider(winning.url, undefined, { staticNetwork: true, pollingInterval: 200 });
    let winningCall: { hash: string; blockHash: string; contract: string };
    try {
      const wallet = new Wallet(DEV_ACCOUNTS[1].privateKey, provider);
      const deployed = (await (await wallet.sendTransaction({ data: storeAndLogDeployCode() })).wait(1, 30_000))!;
      const called = (await (await wallet.sendTransaction({ to: deployed.contractAddress!, data: zeroPadValue(toBeHex(7), 32) })).wait(1, 30_000))!;
      winningCall = { hash: called.hash, blockHash: called.blockHash, contract: deployed.contractAddress! };
    } finally {
      provider.destroy();
    }

    const outcome = await scenario.connect();

    // The logging call goes back to the pool, to the validator, and is mined again on the winning chain.
    const remined = await waitUntil(
      'the logging call mined again where the losing node sees it',
      () => losing.rpc<{ blockHash: string } | null>('eth_getTransactionReceipt', [loggingCall.hash]),
      (receipt) => receipt !== null,
      60_000,
    );
    const [left, ofWinningBranch, again, ...more] = (await client.notificationsOf(logs, 3, 30_000)) as LogJson[];
    t.deepEqual(more, []);
    t.deepEqual(Object.keys(left!), LOG_KEYS);
    t.like(left, {
      removed: true,
      blockHash: loggingCall.blockHash,
      blockNumber: `0x${loggingCall.blockNumber.toString(16)}`,
      transactionHash: loggingCall.hash,
      address: loggingCall.contract.toLowerCase(),
      data: zeroPadValue(toBeHex(42), 32),
    });
    t.like(ofWinningBranch, { removed: false, blockHash: winningCall.blockHash, transactionHash: winningCall.hash, address: winningCall.contract.toLowerCase() });
    t.is(ofWinningBranch!.data, zeroPadValue(toBeHex(7), 32));
    // Re-mined from the same sender and nonce: the same contract address, in the block the winning chain put it in.
    t.like(again, { removed: false, blockHash: remined!.blockHash, transactionHash: loggingCall.hash, address: loggingCall.contract.toLowerCase() });

    // newHeads: the new branch from the common ancestor on, each block once, each the child of the one before.
    const announced = client.notifications(heads) as HeadJson[];
    t.deepEqual(
      announced.slice(0, outcome.addedBlocks.length).map((head) => head.hash),
      outcome.addedBlocks,
      'the blocks that joined the canonical chain, oldest first',
    );
    const ancestor = Number(announced[0]!.number) - 1;
    t.is(ancestor, loggingCall.blockNumber - scenario.losingBlocks.indexOf(loggingCall.blockHash) - 1);
    announced.forEach((head, i) => {
      t.is(Number(head.number), ancestor + 1 + i);
      if (i > 0) t.is(head.parentHash, announced[i - 1]!.hash);
    });
    for (const removed of outcome.removedBlocks) t.false(announced.some((head) => head.hash === removed));
  } catch (err) {
    t.log(`losing node:\n${losing.output().split('\n').slice(-60).join('\n')}`);
    throw err;
  } finally {
    await client?.close();
    await scenario.stop();
  }
});
