/**
 * admin_changeLogLevel and miner_stop/miner_start on a real node: the level set through one HTTP
 * worker reaches every actor thread; a stopped miner leaves a gap in the chain's timestamps.
 */
import test from 'ava';
import { startNode, removeDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const headOf = async (node: NodeProcess) => Number(await node.rpc<string>('eth_blockNumber'));
const imported = (n: number) => new RegExp(`\\| Chain \\| Imported #${n} /`);

test('admin_changeLogLevel changes the level in every thread and refuses unknown levels', async (t) => {
  const node = await startNode({ args: ['--rpc-http-api=ETH,NET,WEB3,ADMIN'] });
  try {
    t.deepEqual(await node.rpcError('admin_changeLogLevel', ['debug']), { code: -32602, message: 'Invalid log level params (missing or incorrect)' });
    t.deepEqual(await node.rpcError('admin_changeLogLevel', ['INFO', 'not-a-list']), { code: -32602, message: 'Invalid log filter params' });

    // The chain thread logs every imported block at INFO; after ERROR it must fall silent.
    await node.waitForLog(/\| Chain \| Imported #/);
    t.is(await node.rpc('admin_changeLogLevel', ['ERROR']), 'Success');
    // The level reaches the chain thread by a broadcast message: the block after the reply may still be announced.
    const atError = await headOf(node);
    const silent = [atError + 2, atError + 3];
    await waitFor(`block ${silent[1]}`, () => headOf(node), (head) => head >= silent[1]!);
    // And back: the blocks are announced again.
    t.is(await node.rpc('admin_changeLogLevel', ['INFO']), 'Success');
    const back = (await headOf(node)) + 2;
    await node.waitForLog(imported(back));
    // The chain thread writes in order: had the silent blocks been announced, their lines would be above.
    for (const n of silent) t.notRegex(node.output(), imported(n), `block ${n} imported at ERROR`);
  } finally {
    t.is(await node.stop(), 0);
    removeDataPath(node.dataPath);
  }
});

test('miner_stop halts block production, eth_mining reports it, miner_start resumes', async (t) => {
  const node = await startNode({ args: ['--rpc-http-api=ETH,NET,WEB3,MINER'] });
  try {
    const timestampOf = async (n: number) => Number((await node.rpc<{ timestamp: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).timestamp);
    t.is(await node.rpc('eth_mining'), true);
    t.is(await node.rpc('miner_stop'), true);
    t.is(await node.rpc('eth_mining'), false);
    // miner_stop returns once block work in progress has settled: this is the last block before the stop.
    const stoppedAt = await headOf(node);
    // A running miner would have sealed two more blocks by then (1 s period).
    const dueBy = ((await timestampOf(stoppedAt)) + 2) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, dueBy + 500 - Date.now())));
    const resumedAt = Date.now();
    t.is(await node.rpc('miner_start'), true);
    t.is(await node.rpc('eth_mining'), true);
    await waitFor('a block after miner_start', () => headOf(node), (head) => head > stoppedAt, 10_000);
    // The chain's own record: the block after the stop was built after miner_start, none in between.
    t.true((await timestampOf(stoppedAt + 1)) >= Math.floor(resumedAt / 1000), 'no block while stopped');
  } finally {
    t.is(await node.stop(), 0);
    removeDataPath(node.dataPath);
  }
});
