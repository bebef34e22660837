/**
 * admin_changeLogLevel on a real node: the level set through one HTTP worker reaches every actor thread.
 */
import test from 'ava';
import { startDevNode } from '../helpers/node-process.js';

test('admin_changeLogLevel changes the level in every thread and refuses unknown levels', async (t) => {
  const node = await startDevNode({ args: ['--rpc-http-api=ETH,NET,WEB3,ADMIN'] });
  try {
    const reply = async (params: unknown[]) =>
      (await (
        await fetch(node.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'admin_changeLogLevel', params }),
        })
      ).json()) as { result?: string; error?: { code: number; message: string } };

    t.deepEqual((await reply(['debug'])).error, { code: -32602, message: 'Invalid log level params (missing or incorrect)' });
    t.deepEqual((await reply(['INFO', 'not-a-list'])).error, { code: -32602, message: 'Invalid log filter params' });

    // The chain thread logs every imported block at INFO; after ERROR it must fall silent.
    await new Promise((r) => setTimeout(r, 1500));
    t.regex(node.output(), /\| Chain \| Imported #/);
    t.is((await reply(['ERROR'])).result, 'Success');
    await new Promise((r) => setTimeout(r, 300));
    const mark = node.output().length;
    await new Promise((r) => setTimeout(r, 2500));
    t.notRegex(node.output().slice(mark), /\| Chain \| Imported #/);
    // And back: the blocks are announced again.
    t.is((await reply(['INFO'])).result, 'Success');
    const again = node.output().length;
    await new Promise((r) => setTimeout(r, 2500));
    t.regex(node.output().slice(again), /\| Chain \| Imported #/);
  } finally {
    t.is(await node.stop(), 0);
  }
});

test('miner_stop halts block production, eth_mining reports it, miner_start resumes', async (t) => {
  const node = await startDevNode({ args: ['--rpc-http-api=ETH,NET,WEB3,MINER'] });
  try {
    const head = async () => Number(await node.rpc<string>('eth_blockNumber'));
    t.is(await node.rpc('eth_mining'), true);
    t.is(await node.rpc('miner_stop'), true);
    t.is(await node.rpc('eth_mining'), false);
    const stoppedAt = await head();
    await new Promise((r) => setTimeout(r, 2500));
    t.is(await head(), stoppedAt, 'no block while stopped');
    t.is(await node.rpc('miner_start'), true);
    t.is(await node.rpc('eth_mining'), true);
    const deadline = Date.now() + 10_000;
    while ((await head()) <= stoppedAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    t.true((await head()) > stoppedAt, 'blocks again after miner_start');
  } finally {
    t.is(await node.stop(), 0);
  }
});
