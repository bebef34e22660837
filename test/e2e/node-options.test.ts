/**
 * Options that used to be accepted and do nothing, against real node processes:
 * --strict-tx-replay-protection-enabled refuses unprotected transactions, --revert-reason-enabled puts
 * the REVERT data in receipts, --target-gas-limit moves the block gas limit toward its target,
 * --miner-enabled / --miner-coinbase are refused as Besu refuses them, discovery (on by default) finds a
 * node no bootnode named while --discovery-enabled=false keeps to the bootnodes
 * (--rpc-http-max-active-connections: node-connection-limit.test.ts). Serial: up to three nodes at a
 * time on a 2-core machine.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transaction, Wallet } from 'ethers';
import { revertingDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { REPO_ROOT, removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const started: NodeProcess[] = [];
const keyDirs: string[] = [];

test.after.always(async () => {
  await Promise.all(started.map((node) => node.kill()));
  for (const path of [...started.map((node) => node.dataPath), ...keyDirs]) removeDataPath(path);
});

async function node(args: string[], p2p = false): Promise<NodeProcess> {
  const started_ = await startNode({ args, p2p });
  started.push(started_);
  return started_;
}

const sender = new Wallet(DEV_ACCOUNTS[1].privateKey);
const RECIPIENT = '0x00000000000000000000000000000000000000aa';
const GWEI = 1_000_000_000n;

async function nonceOf(target: NodeProcess): Promise<number> {
  return Number(await target.rpc<string>('eth_getTransactionCount', [sender.address, 'pending']));
}

// ---------------------------------------------------------------------------------------------------------

test.serial('--strict-tx-replay-protection-enabled: an unprotected transaction is refused with "ChainId is required"', async (t) => {
  const [strict, lenient] = await Promise.all([node(['--strict-tx-replay-protection-enabled']), node([])]);
  const transfer = { type: 0, nonce: await nonceOf(strict), gasPrice: 10n * GWEI, gasLimit: 21_000, to: RECIPIENT, value: 1 };
  const unprotected = await sender.signTransaction({ ...transfer, chainId: 0 });
  t.is(Transaction.from(unprotected).chainId, 0n, 'signed before EIP-155: v is 27 or 28');

  t.deepEqual(await strict.rpcError('eth_sendRawTransaction', [unprotected]), { code: -32000, message: 'ChainId is required' });
  const protectedTx = await sender.signTransaction({ ...transfer, chainId: 1337 });
  t.is(await strict.rpc('eth_sendRawTransaction', [protectedTx]), Transaction.from(protectedTx).hash);
  // Besu's default accepts it.
  t.is(await lenient.rpc('eth_sendRawTransaction', [unprotected]), Transaction.from(unprotected).hash);
});

// ---------------------------------------------------------------------------------------------------------

interface ReceiptJson {
  status: string;
  transactionHash: string;
  blockHash: string;
  revertReason?: string;
}

/** Init code that reverts with the ABI-encoded `Error("nope")`: the reverting runtime of contracts.ts run as init code. */
const REVERT_WITH_REASON = `0x${revertingDeployCode().slice(2 + 24)}`;
const NOPE = `0x08c379a0${'20'.padStart(64, '0')}${'4'.padStart(64, '0')}${'6e6f7065'.padEnd(64, '0')}`;
/** REVERT(0, 0): reverted with empty data. */
const BARE_REVERT = '0x60006000fd';
/** INVALID: failed without REVERT, so there is no revert reason. */
const INVALID_OPCODE = '0xfe';

async function sendCreations(target: NodeProcess): Promise<ReceiptJson[]> {
  const nonce = await nonceOf(target);
  const hashes: string[] = [];
  for (const [i, data] of [REVERT_WITH_REASON, BARE_REVERT, INVALID_OPCODE].entries()) {
    const raw = await sender.signTransaction({
      type: 2, chainId: 1337, nonce: nonce + i, maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI, gasLimit: 200_000, data,
    });
    hashes.push(await target.rpc<string>('eth_sendRawTransaction', [raw]));
  }
  return Promise.all(
    hashes.map((hash) => waitFor(`the receipt of ${hash}`, () => target.rpc<ReceiptJson | null>('eth_getTransactionReceipt', [hash]), (r) => r !== null, 20_000) as Promise<ReceiptJson>),
  );
}

test.serial('--revert-reason-enabled: receipts of reverted transactions carry the REVERT data, in Besu\'s member order', async (t) => {
  const [withReasons, without] = await Promise.all([node(['--revert-reason-enabled', '--rpc-http-api=ETH,NET,WEB3,DEBUG']), node([])]);

  const [reason, bare, invalid] = await sendCreations(withReasons);
  t.deepEqual([reason!.status, bare!.status, invalid!.status], ['0x0', '0x0', '0x0']);
  t.is(reason!.revertReason, NOPE);
  t.is(bare!.revertReason, '0x', 'a REVERT without data still has a (empty) reason');
  t.false('revertReason' in invalid!, 'a failure other than REVERT has none');
  const keys = Object.keys(reason!);
  t.is(keys[keys.indexOf('transactionIndex') + 1], 'revertReason');
  t.is(keys[keys.indexOf('revertReason') + 1], 'type');
  // The stored receipt serves the block's receipts too.
  const blockReceipts = await withReasons.rpc<ReceiptJson[]>('eth_getBlockReceipts', [reason!.blockHash]);
  t.is(blockReceipts.find((r) => r.transactionHash === reason!.transactionHash)?.revertReason, NOPE);

  for (const receipt of await sendCreations(without)) {
    t.is(receipt.status, '0x0');
    t.false('revertReason' in receipt, 'Besu\'s default keeps no revert reason');
  }
});

// ---------------------------------------------------------------------------------------------------------

test.serial('--target-gas-limit: each block moves the gas limit toward the target by parent/1024 - 1, then keeps it', async (t) => {
  const genesisGasLimit = 0x1fffffffffffffn; // genesis/dev.json
  const step = (limit: bigint) => limit / 1024n - 1n;
  const afterOne = genesisGasLimit + step(genesisGasLimit);
  const afterTwo = afterOne + step(afterOne);
  const target = afterTwo + step(afterTwo) / 2n;
  const producer = await node([`--target-gas-limit=${target}`]);

  await waitFor('block 4', () => producer.rpc<string>('eth_blockNumber'), (number) => Number(number) >= 4, 30_000);
  const gasLimits: bigint[] = [];
  for (let number = 0; number <= 4; number++) {
    const block = await producer.rpc<{ gasLimit: string }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false]);
    gasLimits.push(BigInt(block.gasLimit));
  }
  t.deepEqual(gasLimits, [genesisGasLimit, afterOne, afterTwo, target, target]);
});

// ---------------------------------------------------------------------------------------------------------

const BIN = join(REPO_ROOT, 'bin', 'run.js');

test.serial('--miner-enabled and --miner-coinbase: refused with Besu\'s unknown-option error and exit code 2, and said so in --help', (t) => {
  const pointer = '\nTo display full help:\nbasalt [COMMAND] --help\n';
  const suggestions = 'Possible solutions: --miner-extra-data, --min-gas-price, --min-priority-fee';
  for (const option of ['--miner-enabled', '--miner-coinbase=0xfe3b557e8fb62b89f4916b721be55ceb828dbd73']) {
    const result = spawnSync(process.execPath, [BIN, '--network=dev', option], { encoding: 'utf8', timeout: 30_000 });
    t.is(result.status, 2, option);
    t.is(result.stderr, `Unknown option: '${option}'\n${suggestions}\n${pointer}`);
  }
  const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8', timeout: 30_000 });
  t.is(help.status, 0);
  t.regex(help.stdout.replace(/\s+/g, ' '), /Not accepted \(removed from Besu with proof-of-work mining, refused as unknown options\): --miner-enabled \(.*\); --miner-coinbase \(/);
});

// ---------------------------------------------------------------------------------------------------------

interface NodeInfoJson {
  id: string;
  enode: string;
  ports: { discovery?: number; listener: number };
}

/** A dev node on devp2p with a key of its own (every dev node would otherwise be the dev validator). */
async function p2pNode(args: string[]): Promise<{ node: NodeProcess; info: NodeInfoJson }> {
  const dir = tempDataPath();
  keyDirs.push(dir);
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, `0x${randomBytes(32).toString('hex')}`);
  const started_ = await node(['--rpc-http-api=ETH,NET,WEB3,ADMIN', `--node-private-key-file=${keyFile}`, ...args], true);
  return { node: started_, info: await started_.rpc<NodeInfoJson>('admin_nodeInfo') };
}

const peerIds = async (target: NodeProcess) => (await target.rpc<{ id: string }[]>('admin_peers')).map((peer) => peer.id);

/** Whether this process can bind UDP on 127.0.0.1:port, i.e. no discovery socket holds it. */
function udpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

test.serial('discovery (Besu\'s default): a node given only A as bootnode finds B through A and connects to it', async (t) => {
  const a = await p2pNode([]);
  t.is(a.info.enode, `enode://${a.info.id}@127.0.0.1:${a.info.ports.listener}`, 'discovery on the listening port: no discport');
  t.deepEqual(a.info.ports, { discovery: a.info.ports.listener, listener: a.info.ports.listener });
  t.false(await udpPortFree(a.info.ports.listener), 'the node holds its UDP port');

  const b = await p2pNode([`--bootnodes=${a.info.enode}`]);
  await waitFor('A connected to B', () => peerIds(a.node), (ids) => ids.includes(`0x${b.info.id}`), 20_000);
  const c = await p2pNode([`--bootnodes=${a.info.enode}`]);
  // Nobody told C about B: A's discovery table did (a neighbours answer, or a later refresh within 30 s).
  const peersOfC = await waitFor('C connected to B', () => peerIds(c.node), (ids) => ids.includes(`0x${b.info.id}`), 45_000);
  t.true(peersOfC.includes(`0x${a.info.id}`));
  t.true((await peerIds(b.node)).includes(`0x${c.info.id}`));
});

test.serial('discovery: a port whose UDP side is taken is refused like a busy TCP port, with Besu\'s message', async (t) => {
  const squatter = createSocket('udp4');
  await new Promise<void>((resolve) => squatter.bind(0, '127.0.0.1', resolve));
  const port = squatter.address().port;
  const dataPath = tempDataPath();
  keyDirs.push(dataPath);
  try {
    const args = [BIN, '--network=dev', '--p2p-interface=127.0.0.1', `--p2p-port=${port}`, `--data-path=${dataPath}`];
    const refused = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
    t.is(refused.status, 2);
    t.regex(refused.stdout + refused.stderr, new RegExp(`Port\\(s\\) '\\[${port}\\]' already in use\\. Check for other processes using the port\\(s\\)\\.`));
  } finally {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
  }
});

test.serial('--discovery-enabled=false: no UDP socket, discport=0 in the enode, bootnodes still dialled', async (t) => {
  const a = await p2pNode(['--discovery-enabled=false']);
  t.regex(a.node.output(), /Discovery disabled: only bootnodes and admin_addPeer peers are dialled/);
  t.is(a.info.enode, `enode://${a.info.id}@127.0.0.1:${a.info.ports.listener}?discport=0`);
  t.deepEqual(a.info.ports, { listener: a.info.ports.listener });
  t.true(await udpPortFree(a.info.ports.listener));

  const b = await p2pNode(['--discovery-enabled=false', `--bootnodes=${a.info.enode}`]);
  await waitFor('B connected to its bootnode', () => peerIds(b.node), (ids) => ids.includes(`0x${a.info.id}`), 20_000);
  t.pass();
});
