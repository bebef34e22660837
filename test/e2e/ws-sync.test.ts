/**
 * The `syncing` subscription on a node that catches up by full sync: a non-validator node subscribes
 * over WebSocket, is then given a peer that is ahead, and hears the sync state (Besu's eth_syncing
 * object) while it imports, then `false` once it has caught up.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { WsClient } from '../helpers/ws-client.js';

const started: NodeProcess[] = [];
const paths: string[] = [];

test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  for (const path of paths) removeDataPath(path);
});

async function node(args: string[]): Promise<NodeProcess> {
  const started_ = await startNode({ p2p: true, args: ['--rpc-http-api=ETH,NET,WEB3,ADMIN', ...args] });
  started.push(started_);
  paths.push(started_.dataPath);
  return started_;
}

interface SyncState {
  startingBlock: string;
  currentBlock: string;
  highestBlock: string;
}

test('a node catching up by full sync notifies its syncing subscriptions, then false', async (t) => {
  const validator = await node([]);
  // More blocks ahead than Besu's sync tolerance (5): the follower counts as syncing.
  const deadline = Date.now() + 30_000;
  while (BigInt(await validator.rpc<string>('eth_blockNumber')) < 8n) {
    if (Date.now() > deadline) throw new Error('the validator did not reach block 8');
    await new Promise((r) => setTimeout(r, 250));
  }
  const keyDir = tempDataPath();
  paths.push(keyDir);
  const keyFile = join(keyDir, 'key');
  writeFileSync(keyFile, formatNodeKey(randomBytes(32)));
  const follower = await node([`--node-private-key-file=${keyFile}`, '--rpc-ws-enabled']);
  const client = await WsClient.open(follower.wsUrl!);
  try {
    const syncing = await client.subscribe('syncing');
    t.is(await follower.rpc('eth_blockNumber'), '0x0');
    t.true(await follower.rpc<boolean>('admin_addPeer', [await validator.rpc<string>('net_enode')]));
    await client.until(() => client.notifications(syncing).includes(false), 'the sync to end', 40_000);
    const states = client.notifications(syncing);
    t.log(`sync states heard: ${JSON.stringify(states)}`);
    const during = states.slice(0, -1) as SyncState[];
    t.true(during.length >= 1, `states heard: ${JSON.stringify(states)}`);
    t.deepEqual(Object.keys(during[0]!), ['startingBlock', 'currentBlock', 'highestBlock']);
    t.is(during[0]!.startingBlock, '0x0');
    t.true(BigInt(during[0]!.highestBlock) >= 8n);
    t.true(BigInt(during[0]!.currentBlock) < BigInt(during[0]!.highestBlock));
    t.is(states.at(-1), false);
    // `false` comes once the follower is within the tolerance of the highest block (5), which may be
    // before it has imported block 8: it goes on importing.
    const caughtUp = await waitFor('the follower to import block 8', () => follower.rpc<string>('eth_blockNumber'), (n) => BigInt(n) >= 8n);
    t.true(BigInt(caughtUp) >= 8n);
  } finally {
    await client.close();
  }
});
