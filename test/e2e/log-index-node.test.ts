/**
 * The log index actor in a running node: right after eth_blockNumber says N, eth_getLogs up to N
 * holds block N's logs; after kill -9 and a restart on the same data path the answers are the same;
 * after its store is deleted the index is rebuilt from the chain and answers the same again.
 */
import test from 'ava';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { JsonRpcProvider, Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { MARKED_EVENT_TOPIC, markedDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, tempDataPath, type NodeProcess } from '../helpers/node-process.js';

const dataPath = tempDataPath();
let node: NodeProcess | undefined;

test.after.always(async () => {
  await node?.kill();
  removeDataPath(dataPath);
});

type Log = { blockNumber: string; blockHash: string; topics: string[]; logIndex: string; transactionHash: string };
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

test.serial('eth_getLogs agrees with eth_blockNumber, and survives kill -9 and the loss of its store', async (t) => {
  t.timeout(150_000);
  node = await startNode({ dataPath });
  const provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, batchMaxCount: 1, pollingInterval: 100 });
  const wallet = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
  const deployed = await (await wallet.sendTransaction({ data: markedDeployCode() })).wait();
  const contract = deployed!.contractAddress!;
  const fromBlock = `0x${deployed!.blockNumber.toString(16)}`;
  let nonce = await provider.getTransactionCount(wallet.address, 'pending');

  // Each mined call's log is in eth_getLogs up to the number eth_blockNumber gives right after its receipt.
  const SENT = 6;
  for (let i = 1; i <= SENT; i++) {
    const sent = await wallet.sendTransaction({ to: contract, data: word(i), nonce: nonce++, gasLimit: 100_000 });
    await sent.wait();
    const head = await node.rpc<string>('eth_blockNumber');
    const logs = await node.rpc<Log[]>('eth_getLogs', [{ fromBlock, toBlock: head, address: contract }]);
    t.true(logs.some((log) => log.transactionHash === sent.hash), `the log of call ${i} is in the logs up to ${head}`);
  }
  provider.destroy();

  const queries = [
    { fromBlock, toBlock: 'latest', address: contract },
    { fromBlock: '0x0', toBlock: 'latest', topics: [MARKED_EVENT_TOPIC, [word(1), word(3), word(6)]] },
    { fromBlock: '0x0', toBlock: 'latest', topics: [null, word(5)] },
  ];
  const answers = async (running: NodeProcess) => Promise.all(queries.map((filter) => running.rpc<Log[]>('eth_getLogs', [filter])));
  const head = await node.rpc<string>('eth_blockNumber');
  const before = await answers(node);
  t.is(before[0]!.length, SENT);
  t.is(before[1]!.length, 3);
  t.is(before[2]!.length, 1);

  // kill -9, restart: the index resumes from its store, up to the chain's head.
  await node.kill();
  node = await startNode({ dataPath });
  t.regex((await node.waitForLog(/Log index opened: (.*)$/)).match[1]!, /^#\d+/, 'the index resumed from its store');
  const pinned = queries.map((filter) => ({ ...filter, toBlock: head }));
  t.deepEqual(await Promise.all(pinned.map((filter) => node!.rpc<Log[]>('eth_getLogs', [filter]))), before, 'the same answers after kill -9');

  // Without its store the index is rebuilt from the chain.
  await node.stop();
  rmSync(join(dataPath, 'log-index'), { recursive: true, force: true });
  node = await startNode({ dataPath });
  t.is((await node.waitForLog(/Log index opened: (.*)$/)).match[1], 'empty', 'the index started empty');
  t.deepEqual(await Promise.all(pinned.map((filter) => node!.rpc<Log[]>('eth_getLogs', [filter]))), before, 'the same answers after a rebuild');
});
