/**
 * web3.js v4, as a dapp or script uses it, against a node process: over HTTP chain id, block number,
 * balance, a transfer signed by a local wallet account and its receipt, a contract deployed, written,
 * read and its past events; over WebSocket (`WebSocketProvider`) `newBlockHeaders` and a contract's
 * event subscription.
 */
import test from 'ava';
import { Web3, WebSocketProvider } from 'web3';
import { DEV_ACCOUNTS, devGenesisBalance } from '../helpers/dev-accounts.js';
import { STORAGE_ABI, storageContractDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, type NodeProcess } from '../helpers/node-process.js';

let node: NodeProcess;
let wsUrl: string;
const recipient = '0x00000000000000000000000000000000000cafe0';

test.before(async () => {
  node = await startNode({ args: ['--rpc-ws-enabled'] });
  wsUrl = node.wsUrl!;
});

test.after.always(async () => {
  await node?.stop();
  if (node) removeDataPath(node.dataPath);
});

/** web3.js over HTTP with the first dev account in its wallet (signs locally, sends raw). */
function httpWeb3(): { web3: Web3; from: string } {
  const web3 = new Web3(node.url);
  web3.eth.transactionPollingInterval = 250;
  const [account] = web3.eth.accounts.wallet.add(DEV_ACCOUNTS[1].privateKey);
  return { web3, from: account!.address };
}

async function deployStorage(web3: Web3, from: string): Promise<string> {
  const deployed = await new web3.eth.Contract(STORAGE_ABI).deploy({ data: storageContractDeployCode() }).send({ from });
  return deployed.options.address!;
}

test.serial('HTTP: chain id, block number and a dev account balance', async (t) => {
  const { web3, from } = httpWeb3();
  t.is(await web3.eth.getChainId(), 1337n);
  t.is(await web3.eth.net.getId(), 1337n);
  t.true((await web3.eth.getBlockNumber()) >= 0n);
  t.is(await web3.eth.getBalance(from, 0), devGenesisBalance(from));
});

test.serial('HTTP: a transfer signed by a wallet account is mined; the receipt and the balance show it', async (t) => {
  const { web3, from } = httpWeb3();
  const value = web3.utils.toBigInt(web3.utils.toWei('0.25', 'ether'));
  const before = await web3.eth.getBalance(recipient);
  const receipt = await web3.eth.sendTransaction({ from, to: recipient, value });
  t.is(receipt.status, 1n);
  t.is(receipt.from, from.toLowerCase());
  t.is(receipt.to, recipient);
  t.is(await web3.eth.getBalance(recipient, receipt.blockNumber), before + value);
  const sent = await web3.eth.getTransaction(receipt.transactionHash);
  t.is(BigInt(sent.value), value);
  t.is(String(sent.blockHash), String(receipt.blockHash));
});

test.serial('HTTP: deploy a contract, send to it, call it, and read its past events', async (t) => {
  const { web3, from } = httpWeb3();
  const address = await deployStorage(web3, from);
  t.not(await web3.eth.getCode(address), '0x');
  const contract = new web3.eth.Contract(STORAGE_ABI, address);
  const receipt = await contract.methods.set(5).send({ from });
  t.is(receipt.status, 1n);
  t.is(await contract.methods.get().call(), 5n);
  const events = await contract.getPastEvents('Stored', { fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber });
  t.is(events.length, 1);
  const [event] = events as { returnValues: Record<string, unknown>; transactionHash?: string }[];
  t.is(event!.returnValues.value, 5n);
  t.is(String(event!.returnValues.by).toLowerCase(), from.toLowerCase());
  t.is(event!.transactionHash, receipt.transactionHash);
  // A call that matches no function reverts, and web3.js says so.
  await t.throwsAsync(web3.eth.call({ to: address, data: '0xdeadbeef' }));
});

test.serial('WebSocket: newBlockHeaders and a contract event subscription', async (t) => {
  const { web3: sender, from } = httpWeb3();
  const web3 = new Web3(new WebSocketProvider(wsUrl));
  try {
    t.is(await web3.eth.getChainId(), 1337n);
    const headers = await web3.eth.subscribe('newBlockHeaders');
    const numbers: bigint[] = [];
    await new Promise<void>((resolve, reject) => {
      headers.on('data', (header) => {
        numbers.push(BigInt(header.number!));
        if (numbers.length === 3) resolve();
      });
      headers.on('error', reject);
    });
    await headers.unsubscribe();
    t.deepEqual(numbers, [numbers[0]!, numbers[0]! + 1n, numbers[0]! + 2n]);

    const address = await deployStorage(sender, from);
    const contract = new web3.eth.Contract(STORAGE_ABI, address);
    const stored = contract.events.Stored();
    // web3.js resolves the subscription's id asynchronously: wait for eth_subscribe's answer.
    await new Promise<void>((resolve) => stored.once('connected', () => resolve()));
    const heard = new Promise<Record<string, unknown>>((resolve, reject) => {
      stored.on('data', (event) => resolve({ ...event.returnValues, transactionHash: event.transactionHash }));
      stored.on('error', reject);
    });
    const receipt = await new sender.eth.Contract(STORAGE_ABI, address).methods.set(9).send({ from });
    const event = await heard;
    t.is(event.value, 9n);
    t.is(String(event.by).toLowerCase(), from.toLowerCase());
    t.is(event.transactionHash, receipt.transactionHash);
    await stored.unsubscribe();
  } finally {
    await web3.provider?.disconnect();
  }
});
