/**
 * The dev network end to end: a real node process, spoken to over HTTP with ethers v6 as a client.
 */
import test from 'ava';
import { Contract, JsonRpcProvider, Wallet, id, parseEther, toBeHex, zeroPadValue } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { STORE_AND_LOG_ABI, STORED_EVENT_TOPIC, storeAndLogDeployCode } from '../helpers/contracts.js';

let node: NodeProcess;
let provider: JsonRpcProvider;
const dataPath = tempDataPath();

test.before(async () => {
  const started = Date.now();
  node = await startNode({ dataPath });
  // The issue asks that a dev node serves within a few seconds.
  const elapsed = Date.now() - started;
  if (elapsed > 10_000) throw new Error(`dev node took ${elapsed} ms to serve`);
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 250 });
});

test.after.always(async () => {
  provider?.destroy();
  await node?.kill();
  removeDataPath(dataPath);
});

test.serial('the dev network is chain 1337 and produces a block every second', async (t) => {
  t.is((await provider.getNetwork()).chainId, 1337n);
  t.is(await node.rpc('net_version'), '1337');
  const first = await provider.getBlockNumber();
  const second = await waitFor(`block ${first + 2}`, () => provider.getBlockNumber(), (head) => head >= first + 2, 5_000);
  const block = await provider.getBlock(second);
  t.truthy(block);
  t.is(block!.difficulty, 1n);
  t.is(await node.rpc('eth_syncing'), false);
});

test.serial('a transfer is mined with a receipt and moves exactly value plus fee', async (t) => {
  const sender = new Wallet(DEV_ACCOUNTS[0].privateKey, provider);
  const recipient = Wallet.createRandom().address;
  const before = await provider.getBalance(sender.address);
  const tx = await sender.sendTransaction({ to: recipient, value: parseEther('1.5') });
  const receipt = await tx.wait(1, 15_000);
  t.truthy(receipt);
  t.is(receipt!.status, 1);
  t.is(receipt!.gasUsed, 21000n);
  t.is(await provider.getBalance(recipient), parseEther('1.5'));
  const after = await provider.getBalance(sender.address, receipt!.blockNumber);
  t.is(before - after, parseEther('1.5') + receipt!.gasUsed * receipt!.gasPrice);
  const mined = await provider.getTransaction(tx.hash);
  t.is(mined!.blockHash, receipt!.blockHash);
  t.is(mined!.from.toLowerCase(), sender.address.toLowerCase());
  t.is(await provider.getTransactionCount(sender.address, 'latest'), tx.nonce + 1);
});

test.serial('a contract deployment is mined, a call emits an event into the receipt logs, eth_call reads state', async (t) => {
  const deployer = new Wallet(DEV_ACCOUNTS[1].privateKey, provider);
  const deployTx = await deployer.sendTransaction({ data: storeAndLogDeployCode() });
  const deployReceipt = await deployTx.wait(1, 15_000);
  t.is(deployReceipt!.status, 1);
  const address = deployReceipt!.contractAddress!;
  t.truthy(address);
  t.not(await provider.getCode(address), '0x');

  const contract = new Contract(address, STORE_AND_LOG_ABI, deployer);
  const callTx = await deployer.sendTransaction({ to: address, data: zeroPadValue(toBeHex(42), 32) });
  const receipt = await callTx.wait(1, 15_000);
  t.is(receipt!.status, 1);
  t.is(receipt!.logs.length, 1);
  const log = receipt!.logs[0]!;
  t.is(log.address.toLowerCase(), address.toLowerCase());
  t.deepEqual([...log.topics], [STORED_EVENT_TOPIC]);
  t.is(BigInt(log.data), 42n);
  t.is(BigInt(await provider.getStorage(address, 0)), 42n);
  // The empty call returns slot 0.
  t.is(BigInt(await provider.call({ to: address, data: '0x' })), 42n);
  t.is(await contract.getAddress(), address);
  // Estimation of the storing call: more than a transfer, and the tx runs with it.
  const estimate = await provider.estimateGas({ from: deployer.address, to: address, data: zeroPadValue(toBeHex(7), 32) });
  t.true(estimate > 21000n);
  const raw = await provider.send('eth_getTransactionReceipt', [callTx.hash]);
  t.deepEqual(Object.keys(raw), [
    'blockHash',
    'blockNumber',
    'contractAddress',
    'cumulativeGasUsed',
    'from',
    'gasUsed',
    'effectiveGasPrice',
    'logs',
    'logsBloom',
    'status',
    'to',
    'transactionHash',
    'transactionIndex',
    'type',
  ]);
  t.is(raw.logs[0].topics[0], id('Stored(uint256)'));
});

test.serial('a restart on the same data path keeps the head, balances and receipts', async (t) => {
  const sender = new Wallet(DEV_ACCOUNTS[2].privateKey, provider);
  const tx = await sender.sendTransaction({ to: DEV_ACCOUNTS[0].address, value: 12345n });
  const receipt = await tx.wait(1, 15_000);
  const headBefore = await provider.getBlock('latest');
  const balanceBefore = await provider.getBalance(sender.address, headBefore!.number);

  const code = await node.stop();
  t.is(code, 0, `SIGTERM stops the node with exit code 0; it printed:\n${node.output().slice(-3000)}`);
  provider.destroy();
  node = await startNode({ dataPath });
  provider = new JsonRpcProvider(node.url, undefined, { staticNetwork: true, pollingInterval: 250 });

  const sameBlock = await provider.getBlock(headBefore!.number);
  t.is(sameBlock!.hash, headBefore!.hash);
  t.true((await provider.getBlockNumber()) >= headBefore!.number);
  t.is(await provider.getBalance(sender.address, headBefore!.number), balanceBefore);
  const again = await provider.getTransactionReceipt(tx.hash);
  t.is(again!.blockHash, receipt!.blockHash);
  t.is(again!.status, 1);
});
