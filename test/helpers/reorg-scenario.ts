/**
 * A re-org between two real dev nodes over loopback devp2p, for tests that watch what a re-org does
 * (the chain switching branches, logs with `removed: true`, transactions going back to the pool).
 *
 * Two nodes ran apart with the dev validator key (as two machines started with the same key would):
 * - `winning` started first and keeps producing blocks: its chain is the longer, so the heavier (QBFT
 *   blocks weigh 1 each; Besu's fork choice is total difficulty);
 * - `losing` produced a shorter branch holding a deployment of the StoreAndLog contract and a call of
 *   it that logs `Stored(42)`, then was restarted with another node key: it no longer produces blocks,
 *   and waits, not connected, for `connect()`.
 * `connect()` makes `losing` dial `winning`; full sync finds the common ancestor and `losing` switches
 * to the winning branch, its own blocks above the ancestor leaving the canonical chain. The two
 * transactions go back to its pool, are gossiped to `winning` and mined there again.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet, toBeHex, zeroPadValue } from 'ethers';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { storeAndLogDeployCode } from './contracts.js';
import { DEV_ACCOUNTS } from './dev-accounts.js';
import { removeDataPath, startNode, tempDataPath } from './node-process.js';
import type { NodeProcess } from './node-process.js';

const APIS = '--rpc-http-api=ETH,NET,WEB3,ADMIN,TXPOOL';

export interface ReorgScenarioOptions {
  /** More arguments for the restarted losing node (a subscription test adds its WebSocket options here). */
  losingArgs?: string[];
  /** More arguments for the winning node. */
  winningArgs?: string[];
}

export interface MinedTx {
  hash: string;
  blockHash: string;
  blockNumber: number;
}

export interface ReorgOutcome {
  /** The losing node's blocks that left its canonical chain, newest first (hex hashes). */
  removedBlocks: string[];
  /** The winning chain's blocks at the same heights and the next one, which made the losing node switch, oldest first. */
  addedBlocks: string[];
}

export interface ReorgScenario {
  /** The node on the losing branch, restarted as a non-validator and not yet connected. */
  losing: NodeProcess;
  /** The validator on the winning branch, running. */
  winning: NodeProcess;
  /** The losing branch above the common ancestor, oldest first (hex hashes). */
  losingBlocks: string[];
  /** The deployment of StoreAndLog and the call that logged `Stored(42)`, as mined on the losing branch. */
  deployment: MinedTx;
  loggingCall: MinedTx & { contract: string };
  /** Connects the nodes and resolves once the losing node's canonical chain is the winning one at every height the losing branch had, and one more. */
  connect(timeoutMs?: number): Promise<ReorgOutcome>;
  /** Stops both nodes and removes their data. */
  stop(): Promise<void>;
}

/** Polls `probe` until `done` says so; throws naming `what` after `timeoutMs`. */
export async function waitUntil<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export const blockHashAt = async (node: NodeProcess, number: number): Promise<string | undefined> =>
  (await node.rpc<{ hash: string } | null>('eth_getBlockByNumber', [toBeHex(number), false]))?.hash;

export const headOf = async (node: NodeProcess): Promise<number> => Number(await node.rpc<string>('eth_blockNumber'));

export async function startReorgScenario(options: ReorgScenarioOptions = {}): Promise<ReorgScenario> {
  const started: NodeProcess[] = [];
  const paths: string[] = [];
  const stop = async () => {
    await Promise.all(started.map((node) => node.kill()));
    paths.forEach(removeDataPath);
  };
  try {
    const winning = await startNode({ p2p: true, args: [APIS, ...(options.winningArgs ?? [])] });
    started.push(winning);
    paths.push(winning.dataPath);
    let losing = await startNode({ p2p: true, args: [APIS] });
    started.push(losing);
    paths.push(losing.dataPath);

    const provider = new JsonRpcProvider(losing.url, undefined, { staticNetwork: true, pollingInterval: 200 });
    let deployment: MinedTx;
    let loggingCall: MinedTx & { contract: string };
    try {
      const wallet = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
      const deployed = (await (await wallet.sendTransaction({ data: storeAndLogDeployCode() })).wait(1, 30_000))!;
      const contract = deployed.contractAddress!;
      const called = (await (await wallet.sendTransaction({ to: contract, data: zeroPadValue(toBeHex(42), 32) })).wait(1, 30_000))!;
      deployment = { hash: deployed.hash, blockHash: deployed.blockHash, blockNumber: deployed.blockNumber };
      loggingCall = { hash: called.hash, blockHash: called.blockHash, blockNumber: called.blockNumber, contract };
    } finally {
      provider.destroy();
    }
    // Stopped for good as a validator: restarted with another key, it only follows.
    const losingPath = losing.dataPath;
    await losing.stop();
    const keyDir = tempDataPath();
    paths.push(keyDir);
    const keyFile = join(keyDir, 'key');
    writeFileSync(keyFile, formatNodeKey(randomBytes(32)));
    losing = await startNode({ p2p: true, dataPath: losingPath, args: [APIS, `--node-private-key-file=${keyFile}`, ...(options.losingArgs ?? [])] });
    started.push(losing);

    const losingHead = await headOf(losing);
    // The winning chain must be longer when they meet: it started first and did not stop.
    await waitUntil('the winning chain to be longer', () => headOf(winning), (head) => head > losingHead + 1, 30_000);
    const losingBlocks: string[] = [];
    for (let n = 1; n <= losingHead; n++) {
      const ours = (await blockHashAt(losing, n))!;
      // Blocks both made alike (same second, no transactions) are shared, not part of the losing branch.
      if (losingBlocks.length > 0 || ours !== (await blockHashAt(winning, n))) losingBlocks.push(ours);
    }
    if (!losingBlocks.includes(loggingCall.blockHash)) throw new Error('test setup: the logging call is not on the losing branch');

    const connect = async (timeoutMs = 60_000): Promise<ReorgOutcome> => {
      const enode = (await winning.rpc<{ enode: string }>('admin_nodeInfo')).enode;
      await losing.rpc('admin_addPeer', [enode]);
      const top = losingHead + 1;
      await waitUntil(
        `the losing node to switch to the winning branch up to block ${top}`,
        async () => [await blockHashAt(losing, top), await blockHashAt(winning, top)],
        ([ours, theirs]) => ours !== undefined && ours === theirs,
        timeoutMs,
      );
      const firstRemoved = losingHead - losingBlocks.length + 1;
      const addedBlocks: string[] = [];
      for (let n = firstRemoved; n <= top; n++) addedBlocks.push((await blockHashAt(winning, n))!);
      return { removedBlocks: [...losingBlocks].reverse(), addedBlocks };
    };
    return { losing, winning, losingBlocks, deployment, loggingCall, connect, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
