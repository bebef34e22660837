/**
 * The chain: every fork from Frontier to BPO2 (test/helpers/all-forks-chain.ts), imported
 * into node A's data path, exported from it by `basalt blocks export` as RLP, imported by
 * `basalt blocks import` into a fresh data path and served by node B started on it, beside node A.
 * Every block must come out of B with A's (and the generating builder's) hash and state root; the blob
 * gas, excess blob gas and blob base fee must follow each fork's blob parameters (checked against
 * an independent computation here); the base fee must follow EIP-1559 from London; and the
 * methods of a post-merge chain must answer on it.
 */
import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { splitBlocks } from '../../src/chain/block-file.js';
import { join } from 'node:path';
import { bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import {
  AUTHORITY,
  BEACON_ROOTS_ADDRESS,
  BLOB_SCHEDULE,
  CHAIN_ID,
  HISTORY_ADDRESS,
  LAST_BLOCK,
  SENDER,
  STORE,
  TERMINAL_BLOCK,
  TIME_FORKS,
  WITHDRAWAL_GWEI,
  WITHDRAWAL_RECIPIENT,
  generateAllForksChain,
} from '../helpers/all-forks-chain.js';
import type { AllForksChain } from '../helpers/all-forks-chain.js';
import { removeDataPath, runCli, startNode, tempDataPath } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { GAS_PER_BLOB, blobBaseFee as blobBaseFeeIn, blobParamsOf, nextExcessBlobGas as nextExcessIn } from '../helpers/blob-fees.js';
import type { BlobParams, BlobParent } from '../helpers/blob-fees.js';

let chain: AllForksChain;
let dataPath: string;
let genesisFile: string;
/** Node A: the generated chain imported into it; the chain under test is exported from A. */
let generating: NodeProcess;
/** Node B: a fresh node that imported A's export; every method below is asked of it. */
let node: NodeProcess;
let importOutput: { code: number | null; stdout: string; stderr: string };
let exportOutput: { code: number | null; stdout: string; stderr: string };
let exportedFile: string;

test.before(async () => {
  chain = await generateAllForksChain();
  dataPath = tempDataPath();
  genesisFile = join(dataPath, 'genesis.json');
  writeFileSync(genesisFile, chain.genesisJson);
  const blocksFile = join(dataPath, 'all-forks.blocks');
  writeFileSync(blocksFile, Buffer.concat(chain.blocks.map((b) => Buffer.from(b.serialize()))));
  // Pre-merge proof-of-work blocks cannot be produced by a node: the generated chain goes into node A's data
  // path once, and what is compared is A's own export, imported by a fresh node B.
  const dataA = join(dataPath, 'a');
  const dataB = join(dataPath, 'b');
  const cli = (data: string, ...args: string[]) => runCli([`--data-path=${data}`, `--genesis-file=${genesisFile}`, 'blocks', ...args]);
  const intoA = await cli(dataA, 'import', `--from=${blocksFile}`, '--skip-pow-validation-enabled');
  if (intoA.code !== 0) throw new Error(`import into node A's data path failed: ${intoA.stderr}`);
  exportedFile = join(dataPath, 'exported-from-a.blocks');
  exportOutput = await cli(dataA, 'export', `--to=${exportedFile}`);
  if (exportOutput.code !== 0) throw new Error(`export from node A's data path failed: ${exportOutput.stderr}`);
  importOutput = await cli(dataB, 'import', `--from=${exportedFile}`, '--skip-pow-validation-enabled');
  if (importOutput.code === 0) {
    [generating, node] = await Promise.all([
      startNode({ genesis: genesisFile, dataPath: dataA }),
      startNode({ genesis: genesisFile, dataPath: dataB, args: ['--rpc-http-api=ETH,NET,WEB3,DEBUG'] }),
    ]);
  }
});

test.after.always(async () => {
  await Promise.all([generating?.stop(), node?.stop()]);
  if (dataPath) removeDataPath(dataPath);
});

const last = () => chain.blocks[chain.blocks.length - 1]!;
const hex = (n: bigint) => `0x${n.toString(16)}`;
const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
const blockAt = (n: bigint) => chain.blocks[Number(n) - 1]!;
type RpcBlock = Record<string, string> & { transactions: (string | Record<string, unknown>)[]; withdrawals?: Record<string, string>[] };

/** The blob parameters of the fork a timestamp falls in (the genesis' schedule; BPO2 keeps BPO1's). */
function blobParams(timestamp: bigint): BlobParams {
  const entry =
    timestamp >= BigInt(TIME_FORKS.bpo1Time) ? BLOB_SCHEDULE.bpo1
    : timestamp >= BigInt(TIME_FORKS.osakaTime) ? BLOB_SCHEDULE.osaka
    : timestamp >= BigInt(TIME_FORKS.pragueTime) ? BLOB_SCHEDULE.prague
    : BLOB_SCHEDULE.cancun;
  return blobParamsOf(entry);
}

const blobBaseFee = (excess: bigint, timestamp: bigint) => blobBaseFeeIn(excess, blobParams(timestamp));

/** EIP-4844's excess blob gas, with EIP-7918's reserve price from Osaka, all in the child's blob parameters. */
function nextExcessBlobGas(parent: BlobParent, childTimestamp: bigint): bigint {
  return nextExcessIn(parent, blobParams(childTimestamp), childTimestamp >= BigInt(TIME_FORKS.osakaTime));
}

/** EIP-1559's next base fee. */
function nextBaseFee(parent: { baseFeePerGas: bigint; gasUsed: bigint; gasLimit: bigint }): bigint {
  const target = parent.gasLimit / 2n;
  if (parent.gasUsed === target) return parent.baseFeePerGas;
  if (parent.gasUsed > target) {
    const delta = (parent.baseFeePerGas * (parent.gasUsed - target)) / target / 8n;
    return parent.baseFeePerGas + (delta > 1n ? delta : 1n);
  }
  return parent.baseFeePerGas - (parent.baseFeePerGas * (target - parent.gasUsed)) / target / 8n;
}

test.serial('node A exports the whole chain, genesis first, and a fresh node B imports it past the first BPO block', (t) => {
  t.regex(exportOutput.stdout, new RegExp(`Exported ${LAST_BLOCK + 1n} blocks \\(#0 to #${LAST_BLOCK},`));
  const exported = [...splitBlocks(new Uint8Array(readFileSync(exportedFile)))];
  t.is(exported.length, Number(LAST_BLOCK) + 1);
  t.deepEqual(exported.slice(1).map((s) => bytesToHex(s.bytes)), chain.blocks.map((b) => bytesToHex(b.serialize())), 'blocks 1.. as generated');
  t.is(importOutput.code, 0, importOutput.stderr);
  t.notRegex(importOutput.stderr + importOutput.stdout, /Missing parameter value/);
  t.regex(importOutput.stdout, new RegExp(`${LAST_BLOCK} blocks imported, 1 skipped`));
  t.regex(importOutput.stdout, new RegExp(`Head #${LAST_BLOCK} ${bytesToHex(last().hash())}`));
});

test.serial('a running node\'s database cannot be exported: the lock is reported, nothing is written', async (t) => {
  const file = join(dataPath, 'while-running.blocks');
  const run = await runCli([`--data-path=${join(dataPath, 'a')}`, `--genesis-file=${genesisFile}`, 'blocks', 'export', `--to=${file}`]);
  t.is(run.code, 1);
  t.regex(run.stderr, /^Failed to export blocks: Data path .*\/a\/database is in use by another process/);
  t.false(existsSync(file));
});

test.serial("every block is served by B with node A's hash and state root, the generating builder's; each era's header fields", async (t) => {
  for (let n = 0n; n <= LAST_BLOCK; n++) {
    const [served, fromA] = await Promise.all([
      node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(n), false]),
      generating.rpc<RpcBlock>('eth_getBlockByNumber', [hex(n), false]),
    ]);
    t.is(served.hash, fromA.hash, `hash of block ${n} on A and B`);
    t.is(served.stateRoot, fromA.stateRoot, `state root of block ${n} on A and B`);
    t.is(served.receiptsRoot, fromA.receiptsRoot, `receipts root of block ${n} on A and B`);
    if (n === 0n) continue;
    const generated = blockAt(n);
    t.is(served.hash, bytesToHex(generated.hash()), `hash of block ${n}`);
    t.is(served.stateRoot, bytesToHex(generated.header.stateRoot), `state root of block ${n}`);
    const timestamp = BigInt(served.timestamp);
    t.is(served.baseFeePerGas !== undefined, n >= 11n, `base fee from London (block ${n})`);
    t.is(served.difficulty === '0x0', n > TERMINAL_BLOCK, `difficulty 0 after the terminal block (block ${n})`);
    t.is(served.withdrawalsRoot !== undefined, timestamp >= BigInt(TIME_FORKS.shanghaiTime), `withdrawals from Shanghai (block ${n})`);
    t.is(served.blobGasUsed !== undefined, timestamp >= BigInt(TIME_FORKS.cancunTime), `blob gas from Cancun (block ${n})`);
    t.is(served.requestsHash !== undefined, timestamp >= BigInt(TIME_FORKS.pragueTime), `requests from Prague (block ${n})`);
  }
  const types = new Set<number>(chain.blocks.flatMap((b) => b.transactions.map((tx) => tx.type)));
  t.deepEqual([...types].sort(), [0, 1, 2, 3, 4], 'the chain carries every transaction type');
});

test.serial('blob gas, excess blob gas and the blob base fee follow each fork\'s blob parameters; the base fee follows EIP-1559', async (t) => {
  const first = 11n;
  const history = await node.rpc<{ oldestBlock: string; baseFeePerGas: string[]; baseFeePerBlobGas: string[]; blobGasUsedRatio: number[] }>('eth_feeHistory', [
    hex(LAST_BLOCK - first + 1n),
    'latest',
    [],
  ]);
  t.is(history.oldestBlock, hex(first));
  let parent = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(first - 1n), false]);
  for (let n = first; n <= LAST_BLOCK; n++) {
    const block = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(n), false]);
    const timestamp = BigInt(block.timestamp);
    const expectedBaseFee = n === first ? 10n ** 9n : nextBaseFee({ baseFeePerGas: BigInt(parent.baseFeePerGas!), gasUsed: BigInt(parent.gasUsed!), gasLimit: BigInt(parent.gasLimit!) });
    t.is(block.baseFeePerGas, hex(expectedBaseFee), `base fee of block ${n}`);
    t.is(history.baseFeePerGas[Number(n - first)], hex(expectedBaseFee));
    if (timestamp >= BigInt(TIME_FORKS.cancunTime)) {
      const { max } = blobParams(timestamp);
      // Every block from Cancun on is filled to its fork's maximum.
      t.is(block.blobGasUsed, hex(max * GAS_PER_BLOB), `blob gas of block ${n}`);
      const expectedExcess =
        parent.excessBlobGas === undefined
          ? 0n
          : nextExcessBlobGas({ excessBlobGas: BigInt(parent.excessBlobGas), blobGasUsed: BigInt(parent.blobGasUsed!), baseFeePerGas: BigInt(parent.baseFeePerGas!) }, timestamp);
      t.is(block.excessBlobGas, hex(expectedExcess), `excess blob gas of block ${n}`);
      t.is(history.baseFeePerBlobGas[Number(n - first)], hex(blobBaseFee(expectedExcess, timestamp)), `blob base fee of block ${n}`);
      t.is(history.blobGasUsedRatio[Number(n - first)], 1, `block ${n} is full for its fork`);
      const receipts = await node.rpc<Record<string, string>[]>('eth_getBlockReceipts', [hex(n)]);
      // Each receipt names its transaction, in block order (hashes pinned from the stored encodings).
      t.deepEqual(receipts.map((r) => r.transactionHash), block.transactions, `receipt transaction hashes of block ${n}`);
      const blobReceipt = receipts.find((r) => r.type === '0x3')!;
      t.is(blobReceipt.blobGasUsed, hex(max * GAS_PER_BLOB));
      t.is(blobReceipt.blobGasPrice, hex(blobBaseFee(expectedExcess, timestamp)), `receipt blob gas price in block ${n}`);
    } else {
      t.is(history.baseFeePerBlobGas[Number(n - first)], '0x0');
    }
    parent = block;
  }
  // The excess moved, and the fees differ across the forks.
  const fees = new Set(history.baseFeePerBlobGas.slice(Number(16n - first)));
  t.true(fees.size > 3, `blob base fees ${[...fees].join(', ')}`);
  // The next block (BPO2 again): eth_blobBaseFee and the last fee-history entry.
  const nextExcess = nextExcessBlobGas({ excessBlobGas: BigInt(parent.excessBlobGas!), blobGasUsed: BigInt(parent.blobGasUsed!), baseFeePerGas: BigInt(parent.baseFeePerGas!) }, BigInt(parent.timestamp!) + 10n);
  const nextBlobFee = hex(blobBaseFee(nextExcess, BigInt(parent.timestamp!) + 10n));
  t.is(await node.rpc('eth_blobBaseFee'), nextBlobFee);
  t.is(history.baseFeePerBlobGas[history.baseFeePerBlobGas.length - 1], nextBlobFee);
  // Ending at the last Osaka block: the block after it is BPO1's, with BPO1's blob parameters.
  const lastOsaka = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0x15', false]);
  const firstBpo1 = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0x16', false]);
  const boundary = await node.rpc<{ baseFeePerGas: string[]; baseFeePerBlobGas: string[] }>('eth_feeHistory', ['0x1', '0x15', []]);
  t.is(boundary.baseFeePerBlobGas[0], hex(blobBaseFee(BigInt(lastOsaka.excessBlobGas!), BigInt(lastOsaka.timestamp!))));
  t.is(boundary.baseFeePerBlobGas[1], hex(blobBaseFee(BigInt(firstBpo1.excessBlobGas!), BigInt(firstBpo1.timestamp!))), 'the next block at BPO1\'s fraction');
  t.is(boundary.baseFeePerGas[1], firstBpo1.baseFeePerGas);
});

test.serial('receipts and transactions of every type; the set-code delegation; withdrawals credited', async (t) => {
  const firstPrague = 18n;
  const receipts = await node.rpc<Record<string, string>[]>('eth_getBlockReceipts', [hex(firstPrague)]);
  t.deepEqual(receipts.map((r) => r.type), ['0x0', '0x1', '0x2', '0x3', '0x4', '0x2', '0x2']);
  t.true(receipts.every((r) => r.status === '0x1'));
  const block = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(firstPrague), true]);
  // Each receipt names its transaction, whatever its type.
  t.deepEqual(receipts.map((r) => r.transactionHash), block.transactions.map((tx) => (tx as { hash: string }).hash));
  const setCode = block.transactions[4] as { type: string; authorizationList: Record<string, string>[] };
  t.is(setCode.type, '0x4');
  t.like(setCode.authorizationList[0], { chainId: hex(CHAIN_ID), address: STORE.toString(), nonce: '0x0' });
  const legacy = (await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0x1', true])).transactions[0] as Record<string, string>;
  t.is(legacy.type, '0x0');
  t.true(legacy.v === '0x1b' || legacy.v === '0x1c', 'Frontier: no EIP-155 chain id in v');
  t.false('chainId' in legacy);
  // The authority's account now delegates to the store contract (two authorizations: Prague, Osaka).
  t.is(await node.rpc('eth_getCode', [AUTHORITY.toString(), 'latest']), `0xef0100${STORE.toString().slice(2)}`);
  t.is(await node.rpc('eth_getTransactionCount', [AUTHORITY.toString(), 'latest']), '0x2');

  const shanghai = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0xf', false]);
  t.deepEqual(shanghai.withdrawals, [
    { index: '0x0', validatorIndex: '0x0', address: WITHDRAWAL_RECIPIENT.toString(), amount: hex(WITHDRAWAL_GWEI) },
    { index: '0x1', validatorIndex: '0x1', address: WITHDRAWAL_RECIPIENT.toString(), amount: hex(WITHDRAWAL_GWEI) },
  ]);
  const withdrawalBlocks = LAST_BLOCK - 15n + 1n;
  t.is(await node.rpc('eth_getBalance', [WITHDRAWAL_RECIPIENT.toString(), 'latest']), hex(withdrawalBlocks * 2n * WITHDRAWAL_GWEI * 10n ** 9n));
});

test.serial('EIP-7685 requests: each Prague block carries its withdrawal and consolidation request; EIP-4788 and EIP-2935 contracts answer', async (t) => {
  const sha = (bytes: Uint8Array) => sha256(bytes);
  const pubkey = (tag: number) => new Uint8Array(48).fill(tag);
  for (let n = 18n; n <= LAST_BLOCK; n++) {
    // EIP-7002 request: source address, validator pubkey, amount (little-endian); EIP-7251: source, source pubkey, target pubkey.
    const amount = setLengthLeft(bigIntToBytes(n), 8).reverse();
    const withdrawal = new Uint8Array([0x01, ...SENDER.bytes, ...pubkey(Number(n)), ...amount]);
    const consolidation = new Uint8Array([0x02, ...SENDER.bytes, ...pubkey(Number(n)), ...pubkey(0xee)]);
    const expected = bytesToHex(sha(new Uint8Array([...sha(withdrawal), ...sha(consolidation)])));
    const block = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(n), false]);
    t.is(block.requestsHash, expected, `requests hash of block ${n}`);
  }
  const head = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
  // EIP-4788: the head's parent beacon block root, by its timestamp.
  t.is(await node.rpc('eth_call', [{ to: BEACON_ROOTS_ADDRESS, data: word(BigInt(head.timestamp)) }, 'latest']), head.parentBeaconBlockRoot);
  // EIP-2935: the hash of the block before the head.
  const parent = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(LAST_BLOCK - 1n), false]);
  t.is(await node.rpc('eth_call', [{ to: HISTORY_ADDRESS, data: word(LAST_BLOCK - 1n) }, 'latest']), parent.hash);
});

test.serial('state and history methods on the merged chain: eth_getProof, eth_getStorageAt by era, eth_config, eth_syncing, safe and finalized', async (t) => {
  const head = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['latest', false]);
  const slot = word(LAST_BLOCK);
  const proof = await node.rpc<{ storageProof: { key: string; value: string; proof: string[] }[]; accountProof: `0x${string}`[] }>('eth_getProof', [STORE.toString(), [slot], 'latest']);
  t.is(proof.storageProof[0]!.value, hex(LAST_BLOCK));
  t.is<string, string>(bytesToHex(keccak_256(hexToBytes(proof.accountProof[0] as `0x${string}`))), head.stateRoot, 'the account proof starts at the state root');
  // The store contract kept each block's number in its slot, from Homestead to BPO2.
  for (const n of [2n, 9n, 14n, 20n, LAST_BLOCK]) t.is(await node.rpc('eth_getStorageAt', [STORE.toString(), word(n), 'latest']), word(n));
  t.is(await node.rpc('eth_getStorageAt', [STORE.toString(), word(20n), hex(19n)]), word(0n), 'not yet written at block 19');

  const config = await node.rpc<{ current: { blobSchedule: unknown; chainId: string }; next: unknown }>('eth_config');
  t.deepEqual(config.current.blobSchedule, BLOB_SCHEDULE.bpo1, 'BPO2 runs with BPO1\'s blob parameters');
  t.is(config.current.chainId, hex(CHAIN_ID));
  t.is(config.next, null);
  t.is(await node.rpc('eth_syncing'), false);
  // Not Besu methods (not in its method inventory, spec rpc-auth-cli.md §3): the unknown-method answer.
  t.deepEqual(await node.rpcError('eth_getHeaderByNumber', ['latest']), { code: -32601, message: 'Method not found' });
  t.deepEqual(await node.rpcError('eth_getHeaderByHash', [head.hash]), { code: -32601, message: 'Method not found' });
  // No consensus client has told this node of a safe or finalized block (Besu answers the same).
  for (const tag of ['safe', 'finalized']) {
    t.deepEqual(await node.rpcError('eth_getBlockByNumber', [tag, false]), { code: -39001, message: 'Unknown block' }, tag);
    t.deepEqual(await node.rpcError('eth_getBalance', [SENDER.toString(), tag]), { code: -39001, message: 'Unknown block' }, tag);
  }
});

test.serial('blocks of every era re-execute for tracing with their own fork rules; eth_simulateV1 before London and after BPO2', async (t) => {
  type Trace = { gas: number; failed: boolean; structLogs: { op: string; storage?: Record<string, string> }[] };
  for (const n of [1n, 2n, 4n, 5n, 10n, 11n, 14n, 15n, 16n, 18n, 20n, 22n, LAST_BLOCK]) {
    const traces = await node.rpc<Trace[]>('debug_traceBlockByNumber', [hex(n)]);
    const receipts = await node.rpc<Record<string, string>[]>('eth_getBlockReceipts', [hex(n)]);
    t.is(traces.length, receipts.length, `block ${n}`);
    traces.forEach((trace, i) => {
      t.false(trace.failed, `block ${n} transaction ${i}`);
      t.is(hex(BigInt(trace.gas)), receipts[i]!.gasUsed, `gas of block ${n} transaction ${i}`);
    });
    // The store contract's write: the block number under its own slot (deployed in block 1).
    if (n > 1n) {
      const sstore = traces[0]!.structLogs.find((log) => log.op === 'SSTORE')!;
      t.deepEqual(sstore.storage, { [word(n).slice(2)]: word(n).slice(2) }, `SSTORE in block ${n}`);
    }
  }
  // Before London a simulated block has no base fee; after BPO2 it has blob fields and requests.
  const read = { to: STORE.toString(), data: word(5n) };
  const [beforeLondon] = await node.rpc<Record<string, string>[]>('eth_simulateV1', [{ blockStateCalls: [{ calls: [read] }] }, hex(9n)]);
  t.is(beforeLondon!.number, hex(10n));
  t.false('baseFeePerGas' in beforeLondon!);
  const [afterBpo2] = await node.rpc<Record<string, string>[]>('eth_simulateV1', [{ blockStateCalls: [{ calls: [read] }] }, 'latest']);
  t.is(afterBpo2!.number, hex(LAST_BLOCK + 1n));
  t.truthy(afterBpo2!.excessBlobGas);
  t.truthy(afterBpo2!.withdrawalsRoot);
});
