/**
 * A re-org between two real dev nodes over loopback devp2p (see test/helpers/reorg-scenario.ts): the
 * node on the shorter branch switches to the longer one by full sync, both then agree block for block,
 * the blocks it left stay readable by hash, and the transactions only its branch had go back to its
 * pool, reach the validator by gossip and are mined on the winning chain, as Besu would do.
 */
import test from 'ava';
import { STORED_EVENT_TOPIC } from '../helpers/contracts.js';
import { blockHashAt, headOf, startReorgScenario, waitUntil } from '../helpers/reorg-scenario.js';

interface ReceiptJson {
  blockHash: string;
  blockNumber: string;
  status: string;
  logs: { topics: string[]; removed: boolean }[];
}

interface BlockJson {
  hash: string;
  number: string;
}

test('the node on the shorter branch switches to the longer one; its transactions are mined again there', async (t) => {
  const scenario = await startReorgScenario();
  const { losing, winning, deployment, loggingCall } = scenario;
  try {
    const before = await losing.rpc<ReceiptJson>('eth_getTransactionReceipt', [loggingCall.hash]);
    t.is(before.blockHash, loggingCall.blockHash);
    t.is(await winning.rpc('eth_getTransactionReceipt', [loggingCall.hash]), null, 'the winning chain never had it');

    const outcome = await scenario.connect();
    t.true(outcome.removedBlocks.length >= 2, `${outcome.removedBlocks.length} blocks removed`);
    t.deepEqual(outcome.removedBlocks.slice().reverse(), scenario.losingBlocks);
    t.regex(losing.output(), /Chain re-org: \d+ block\(s\) above #\d+ left the canonical chain/);

    // The blocks the losing node left are still there by hash, not by number.
    for (const hash of outcome.removedBlocks) {
      const block = await losing.rpc<BlockJson>('eth_getBlockByHash', [hash, false]);
      t.is(block.hash, hash);
      t.not(await blockHashAt(losing, Number(block.number)), hash);
    }

    // Back in the pool, gossiped to the validator, mined on the winning chain; the follower gets that block.
    const mined = await waitUntil(
      'the logging call mined on the winning chain',
      () => winning.rpc<ReceiptJson | null>('eth_getTransactionReceipt', [loggingCall.hash]),
      (receipt) => receipt !== null,
      30_000,
    );
    t.is(mined!.status, '0x1');
    t.deepEqual(mined!.logs.map((log) => [log.topics[0], log.removed]), [[STORED_EVENT_TOPIC, false]], 'the call found its contract deployed again');
    t.not(mined!.blockHash, loggingCall.blockHash);
    t.truthy(await winning.rpc('eth_getTransactionReceipt', [deployment.hash]));
    await waitUntil(
      'the losing node to see the call where the winning chain mined it',
      () => losing.rpc<ReceiptJson | null>('eth_getTransactionReceipt', [loggingCall.hash]),
      (receipt) => receipt?.blockHash === mined!.blockHash,
      30_000,
    );
    t.regex(losing.output(), /Re-org: 2 of 2 transaction\(s\) of the removed blocks are back in the pool/);

    // Both agree on every block up to the lower head.
    const top = Math.min(await headOf(losing), await headOf(winning));
    for (let n = 1; n <= top; n++) t.is(await blockHashAt(losing, n), await blockHashAt(winning, n), `block ${n}`);
  } catch (err) {
    t.log(`losing node:\n${losing.output().split('\n').slice(-60).join('\n')}`);
    t.log(`winning node:\n${winning.output().split('\n').slice(-30).join('\n')}`);
    throw err;
  } finally {
    await scenario.stop();
  }
});
