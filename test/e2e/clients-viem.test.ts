/**
 * viem, as a dapp or script uses it, against a node process: a public client over HTTP (chain id,
 * block number, balance), a wallet client signing locally (a transfer waited on to its receipt, a
 * contract deployed, written and read, its logs read back), and a public client over WebSocket
 * (`watchBlocks`, `watchContractEvent` through eth_subscribe).
 */
import test from 'ava';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, parseEther, parseEventLogs, webSocket, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_ACCOUNTS, devGenesisBalance } from '../helpers/dev-accounts.js';
import { STORAGE_ABI, storageContractDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, type NodeProcess } from '../helpers/node-process.js';

let node: NodeProcess;
let chain: Chain;
const account = privateKeyToAccount(DEV_ACCOUNTS[0].privateKey);
const recipient = '0x00000000000000000000000000000000000b0b00' as const;

test.before(async () => {
  node = await startNode({ args: ['--rpc-ws-enabled'] });
  const wsUrl = node.wsUrl!;
  chain = defineChain({
    id: 1337,
    name: 'Basalt dev',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.url], webSocket: [wsUrl] } },
  });
});

test.after.always(async () => {
  await node?.stop();
  if (node) removeDataPath(node.dataPath);
});

const httpClients = () => ({
  public: createPublicClient({ chain, transport: http() }),
  wallet: createWalletClient({ chain, account, transport: http() }),
});

/** Deploys the storage contract and resolves with its address. */
async function deployStorage(): Promise<Hex> {
  const { public: client, wallet } = httpClients();
  const hash = await wallet.deployContract({ abi: STORAGE_ABI, bytecode: storageContractDeployCode() as Hex });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: 30_000 });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deployment failed: ${receipt.status}`);
  return receipt.contractAddress;
}

test.serial('HTTP: chain id, block number and a dev account balance', async (t) => {
  const { public: client } = httpClients();
  t.is(await client.getChainId(), 1337);
  const first = await client.getBlockNumber({ cacheTime: 0 });
  t.true(first >= 0n);
  t.is(await client.getBalance({ address: account.address, blockNumber: 0n }), devGenesisBalance(account.address));
  const block = await client.getBlock({ blockNumber: first });
  t.is(block.number, first);
});

test.serial('HTTP: a signed transfer is mined and its receipt waited on; the balance moves by the value', async (t) => {
  const { public: client, wallet } = httpClients();
  const before = await client.getBalance({ address: recipient });
  const hash = await wallet.sendTransaction({ to: recipient, value: parseEther('0.5') });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: 30_000 });
  t.is(receipt.status, 'success');
  t.is(getAddress(receipt.from), account.address);
  t.is(receipt.to, recipient);
  t.is(await client.getBalance({ address: recipient, blockNumber: receipt.blockNumber }), before + parseEther('0.5'));
  const sent = await client.getTransaction({ hash });
  t.is(sent.value, parseEther('0.5'));
  t.is(sent.blockHash, receipt.blockHash);
});

test.serial('HTTP: deploy a contract, write to it, read it back, and read its logs', async (t) => {
  const { public: client, wallet } = httpClients();
  const address = await deployStorage();
  t.not(await client.getCode({ address }), undefined);
  const { request } = await client.simulateContract({ account, address, abi: STORAGE_ABI, functionName: 'set', args: [42n] });
  const hash = await wallet.writeContract(request);
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: 30_000 });
  t.is(receipt.status, 'success');
  t.is(await client.readContract({ address, abi: STORAGE_ABI, functionName: 'get' }), 42n);

  const [fromReceipt] = parseEventLogs({ abi: STORAGE_ABI, logs: receipt.logs, eventName: 'Stored' });
  t.deepEqual(fromReceipt?.args, { by: account.address, value: 42n });
  const events = await client.getContractEvents({ address, abi: STORAGE_ABI, eventName: 'Stored', fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber });
  t.is(events.length, 1);
  t.deepEqual(events[0]!.args, { by: account.address, value: 42n });
  t.is(events[0]!.transactionHash, hash);
  // A filter on the indexed argument that matches nobody finds nothing.
  const others = await client.getContractEvents({ address, abi: STORAGE_ABI, eventName: 'Stored', args: { by: recipient }, fromBlock: 0n });
  t.is(others.length, 0);
});

test.serial('WebSocket: watchBlocks sees consecutive new blocks; watchContractEvent hears a write', async (t) => {
  const client = createPublicClient({ chain, transport: webSocket() });
  const { wallet } = httpClients();
  try {
    t.is(await client.getChainId(), 1337);
    const blocks: bigint[] = [];
    await new Promise<void>((resolve, reject) => {
      const unwatch = client.watchBlocks({
        onBlock: (block) => {
          blocks.push(block.number);
          if (blocks.length === 3) {
            unwatch();
            resolve();
          }
        },
        onError: reject,
      });
    });
    t.deepEqual(blocks, [blocks[0]!, blocks[0]! + 1n, blocks[0]! + 2n]);

    const address = await deployStorage();
    const heard = new Promise<{ by?: string; value?: bigint; transactionHash: Hex }>((resolve, reject) => {
      const unwatch = client.watchContractEvent({
        address,
        abi: STORAGE_ABI,
        eventName: 'Stored',
        onLogs: (logs) => {
          unwatch();
          resolve({ ...logs[0]!.args, transactionHash: logs[0]!.transactionHash });
        },
        onError: reject,
      });
    });
    // eth_subscribe has been answered once viem's subscription is registered with the node.
    await waitForSubscriptions(await client.transport.getRpcClient(), 1);
    const hash = await wallet.writeContract({ address, abi: STORAGE_ABI, functionName: 'set', args: [7n] });
    t.deepEqual(await heard, { by: account.address, value: 7n, transactionHash: hash });
  } finally {
    await (await client.transport.getRpcClient()).close();
  }
});

/** Waits until viem's WebSocket client holds `count` subscriptions the node has answered. */
async function waitForSubscriptions(rpc: { subscriptions: { size: number } }, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (rpc.subscriptions.size < count) {
    if (Date.now() > deadline) throw new Error(`viem holds ${rpc.subscriptions.size} subscription(s), not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
